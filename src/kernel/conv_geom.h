// The spatial geometry of one convolution or pooling, shared by the CPU kernels
// (operator/conv.cc) and the CUDA ones (kernel/cuda/conv.cu). Data is (N, C, D, H, W): a 2-d
// problem has D = 1 (kernel 1, stride 1, pad 0, dilate 1 along D), a 1-d one also H = 1. The
// CUDA kernels read only the H and W fields: they run 1-d and 2-d problems (D = 1) alone.
#pragma once
#include <cstdint>

#include "ndx/shape.h"

namespace ndx::kernel {

struct ConvGeom {
  int nsp = 2;  // spatial dims of the data: 1, 2 or 3
  int64_t n = 0, c = 0, d = 1, h = 1, w = 0;
  int64_t kd = 1, kh = 1, kw = 1, sd = 1, sh = 1, sw = 1, pd = 0, ph = 0, pw = 0;
  int64_t dd = 1, dh = 1, dw = 1;
  int64_t od = 1, oh = 1, ow = 1;
  int64_t in_plane() const { return d * h * w; }
  int64_t out_plane() const { return od * oh * ow; }
  int64_t kernel_size() const { return kd * kh * kw; }
  // The output shape (N, channels, spatial...).
  Shape out_shape(int64_t channels) const { return shape_of(channels, od, oh, ow); }
  // (N, channels, spatial...) of an (n, channels, d, h, w) array at this rank.
  Shape shape_of(int64_t channels, int64_t dz, int64_t hy, int64_t wx) const {
    if (nsp == 1) return Shape{n, channels, wx};
    if (nsp == 2) return Shape{n, channels, hy, wx};
    return Shape{n, channels, dz, hy, wx};
  }
  // The fields of spatial axis a (0 = D, 1 = H, 2 = W), for loops over the axes.
  struct Axis {
    int64_t *in, *k, *s, *p, *dl, *out;
  };
  Axis axis(int a) {
    if (a == 0) return {&d, &kd, &sd, &pd, &dd, &od};
    if (a == 1) return {&h, &kh, &sh, &ph, &dh, &oh};
    return {&w, &kw, &sw, &pw, &dw, &ow};
  }
};

}  // namespace ndx::kernel
