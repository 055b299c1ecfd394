// Convolution and pooling pieces for CUDA: im2col / col2im for all images of a batch at once
// (the products go through cuBLAS, see operator/conv.cc), and direct pooling kernels with the
// CPU kernels' semantics (first maximum or first NaN wins; avg divides by the window count,
// padding included or not). Gradients gather instead of scattering: no atomics, and the
// same sums in the same order on every run.
#include "kernel/conv_geom.h"
#include "kernel/cuda/common.cuh"
#include "kernel/gpu.h"

namespace ndx::kernel::gpu {
namespace {

// col[n][(ch * kh + i) * kw + j][oy * ow + ox] = x[n][ch][y][x] (0 outside), one thread per
// col element.
template <class T>
__global__ void im2col_kernel(ConvGeom g, const T* x, T* col, int64_t total) {
  const int64_t ohw = g.oh * g.ow, k = g.kh * g.kw;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t t = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t pos = t % ohw, row = t / ohw;  // row = (n * c + ch) * k + i * kw + j
    const int64_t kk = row % k, plane = row / k;
    const int64_t i = kk / g.kw, j = kk % g.kw, oy = pos / g.ow, ox = pos % g.ow;
    const int64_t y = oy * g.sh - g.ph + i * g.dh, xx = ox * g.sw - g.pw + j * g.dw;
    col[t] = y >= 0 && y < g.h && xx >= 0 && xx < g.w ? x[(plane * g.h + y) * g.w + xx] : T(0);
  }
}

// x[n][ch][y][xx] = the sum of the col entries im2col would have read it into.
template <class T>
__global__ void col2im_kernel(ConvGeom g, const T* col, T* x, int64_t total) {
  const int64_t ohw = g.oh * g.ow, k = g.kh * g.kw;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t t = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t xx = t % g.w, y = (t / g.w) % g.h, plane = t / (g.w * g.h);
    T acc = 0;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t ty = y + g.ph - i * g.dh;
      if (ty < 0 || ty % g.sh) continue;
      const int64_t oy = ty / g.sh;
      if (oy >= g.oh) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t tx = xx + g.pw - j * g.dw;
        if (tx < 0 || tx % g.sw) continue;
        const int64_t ox = tx / g.sw;
        if (ox >= g.ow) continue;
        acc += col[(plane * k + i * g.kw + j) * ohw + oy * g.ow + ox];
      }
    }
    x[t] = acc;
  }
}

struct Window {
  int64_t y0, y1, x0, x1;
  double count;
};
__device__ __forceinline__ Window window_at(const ConvGeom& g, int64_t oy, int64_t ox,
                                            bool include_pad) {
  int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  int64_t y1 = min(y0 + g.kh, g.h + g.ph), x1 = min(x0 + g.kw, g.w + g.pw);
  const int64_t padded = (y1 - y0) * (x1 - x0);
  y0 = max(y0, int64_t{0}), x0 = max(x0, int64_t{0});
  y1 = min(y1, g.h), x1 = min(x1, g.w);
  const int64_t inside = max(y1 - y0, int64_t{0}) * max(x1 - x0, int64_t{0});
  return {y0, y1, x0, x1, static_cast<double>(include_pad ? padded : inside)};
}

template <class T>
__device__ __forceinline__ int64_t window_argmax(const ConvGeom& g, const Window& win,
                                                 const T* plane) {
  int64_t best = -1;
  double m = 0;
  for (int64_t y = win.y0; y < win.y1; ++y)
    for (int64_t x = win.x0; x < win.x1; ++x) {
      const double v = static_cast<double>(plane[y * g.w + x]);
      if (best < 0 || (!(m != m) && (v > m || v != v))) {
        best = y * g.w + x;
        m = v;
      }
    }
  return best;
}

// kind: 0 max, 1 avg, 2 sum (operator/conv.cc's Pool).
template <class T>
__global__ void pool_kernel(ConvGeom g, int kind, bool include_pad, const T* x, T* y,
                            int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t t = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t ox = t % g.ow, oy = (t / g.ow) % g.oh, pl = t / (g.ow * g.oh);
    const T* plane = x + pl * g.h * g.w;
    const Window win = window_at(g, oy, ox, include_pad);
    double v;
    if (kind == 0) {
      const int64_t i = window_argmax(g, win, plane);
      v = i < 0 ? -INFINITY : static_cast<double>(plane[i]);
    } else {
      double acc = 0;
      for (int64_t yy = win.y0; yy < win.y1; ++yy)
        for (int64_t xx = win.x0; xx < win.x1; ++xx)
          acc += static_cast<double>(plane[yy * g.w + xx]);
      v = kind == 2 ? acc : win.count > 0 ? acc / win.count : NAN;
    }
    y[t] = static_cast<T>(v);
  }
}

// dx[n][c][y][x] = the sum of the ograds of the windows that route to (y, x).
template <class T>
__global__ void pool_backward_kernel(ConvGeom g, int kind, bool include_pad, const T* dy,
                                     const T* x, T* dx, int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t t = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t xx = t % g.w, yy = (t / g.w) % g.h, pl = t / (g.w * g.h);
    const T* plane = x + pl * g.h * g.w;
    const T* go = dy + pl * g.oh * g.ow;
    // windows oy with oy * sh - ph <= yy < oy * sh - ph + kh
    const int64_t oy_lo = max(int64_t{0}, (yy + g.ph - g.kh + g.sh) / g.sh);
    const int64_t oy_hi = min(g.oh - 1, (yy + g.ph) / g.sh);
    const int64_t ox_lo = max(int64_t{0}, (xx + g.pw - g.kw + g.sw) / g.sw);
    const int64_t ox_hi = min(g.ow - 1, (xx + g.pw) / g.sw);
    double acc = 0;
    for (int64_t oy = oy_lo; oy <= oy_hi; ++oy)
      for (int64_t ox = ox_lo; ox <= ox_hi; ++ox) {
        const Window win = window_at(g, oy, ox, include_pad);
        if (yy < win.y0 || yy >= win.y1 || xx < win.x0 || xx >= win.x1) continue;
        const double gv = static_cast<double>(go[oy * g.ow + ox]);
        if (kind == 0) {
          if (window_argmax(g, win, plane) == yy * g.w + xx) acc += gv;
        } else if (kind == 2) {
          acc += gv;
        } else if (win.count > 0) {
          acc += gv / win.count;
        }
      }
    dx[t] = static_cast<T>(acc);
  }
}

template <class F>
void with_float(DType t, const char* where, F f) {
  if (t == DType::kFloat32)
    f(float{});
  else if (t == DType::kFloat64)
    f(double{});
  else
    unsupported_dtype(where, t);
}

}  // namespace

void im2col(const ConvGeom& g, DType t, const void* x, void* col, int device) {
  const int64_t total = g.n * g.c * g.kh * g.kw * g.oh * g.ow;
  if (total == 0) return;
  ::ndx::cuda::DeviceGuard guard(device);
  with_float(t, "convolution", [&](auto tag) {
    using T = decltype(tag);
    im2col_kernel<T><<<grid_for(total, 256), 256, 0, stream()>>>(g, static_cast<const T*>(x),
                                                                 static_cast<T*>(col), total);
  });
  check_launch("convolution");
}

void col2im(const ConvGeom& g, DType t, const void* col, void* x, int device) {
  const int64_t total = g.n * g.c * g.h * g.w;
  if (total == 0) return;
  ::ndx::cuda::DeviceGuard guard(device);
  with_float(t, "convolution", [&](auto tag) {
    using T = decltype(tag);
    col2im_kernel<T><<<grid_for(total, 256), 256, 0, stream()>>>(g, static_cast<const T*>(col),
                                                                 static_cast<T*>(x), total);
  });
  check_launch("convolution");
}

void pool(const ConvGeom& g, int kind, bool include_pad, DType t, const void* x, void* y,
          int device) {
  const int64_t total = g.n * g.c * g.oh * g.ow;
  if (total == 0) return;
  ::ndx::cuda::DeviceGuard guard(device);
  with_float(t, "pooling", [&](auto tag) {
    using T = decltype(tag);
    pool_kernel<T><<<grid_for(total, 256), 256, 0, stream()>>>(
        g, kind, include_pad, static_cast<const T*>(x), static_cast<T*>(y), total);
  });
  check_launch("pooling");
}

void pool_backward(const ConvGeom& g, int kind, bool include_pad, DType t, const void* dy,
                   const void* x, void* dx, int device) {
  const int64_t total = g.n * g.c * g.h * g.w;
  if (total == 0) return;
  ::ndx::cuda::DeviceGuard guard(device);
  with_float(t, "pooling", [&](auto tag) {
    using T = decltype(tag);
    pool_backward_kernel<T><<<grid_for(total, 256), 256, 0, stream()>>>(
        g, kind, include_pad, static_cast<const T*>(dy), static_cast<const T*>(x),
        static_cast<T*>(dx), total);
  });
  check_launch("pooling");
}

}  // namespace ndx::kernel::gpu
