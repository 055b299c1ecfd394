// The spatial geometry of one convolution or pooling (1-d problems as 2-d with H = 1), shared
// by the CPU kernels (operator/conv.cc) and the CUDA ones (kernel/cuda/conv.cu).
#pragma once
#include <cstdint>

#include "ndx/shape.h"

namespace ndx::kernel {

struct ConvGeom {
  int nsp = 2;  // spatial dims of the data: 1 or 2
  int64_t n = 0, c = 0, h = 1, w = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t oh = 1, ow = 1;
  int64_t in_plane() const { return h * w; }
  int64_t out_plane() const { return oh * ow; }
  // The output shape (N, channels, spatial...).
  Shape out_shape(int64_t channels) const {
    return nsp == 1 ? Shape{n, channels, ow} : Shape{n, channels, oh, ow};
  }
};

}  // namespace ndx::kernel
