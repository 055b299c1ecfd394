// Gathers and scatters by index for CUDA (embedding, pick). The indices arrive as int64 on the
// device, already checked and normalized on the host (they are small next to the data), so the
// kernels only move elements. Gradients add in a fixed order: no atomics.
#include "kernel/cuda/common.cuh"
#include "kernel/gpu.h"

namespace ndx::kernel::gpu {
namespace {

// y[o][j][i] (req) x[o][idx[o][j]][i], for o < outer, j < m, i < inner; x has n rows per o.
__global__ void gather_kernel(const char* x, DType t, int64_t size, const int64_t* idx, char* y,
                              int64_t outer, int64_t n, int64_t m, int64_t inner, bool add,
                              int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t i = e % inner, j = (e / inner) % m, o = e / (inner * m);
    const int64_t src = (o * n + idx[o * m + j]) * inner + i;
    if (add) {
      store_as(y + e * size, t, load_as<double>(x + src * size, t), true);
    } else {
      for (int64_t b = 0; b < size; ++b) y[e * size + b] = x[src * size + b];
    }
  }
}

// dx[o][r][i] = the sum, in order, of g[o][j][i] over the j whose index is r: the j's of row r
// are order[start[u] .. start[u + 1]) for the u-th distinct row rows[u]; dx zeroed first.
__global__ void scatter_sum_kernel(const char* g, DType t, int64_t size, const int64_t* rows,
                                   const int64_t* start, const int64_t* order, char* dx,
                                   int64_t outer, int64_t n, int64_t m, int64_t inner,
                                   int64_t distinct, int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t i = e % inner, u = (e / inner) % distinct, o = e / (inner * distinct);
    double acc = 0;
    for (int64_t q = start[o * (distinct + 1) + u]; q < start[o * (distinct + 1) + u + 1]; ++q)
      acc += load_as<double>(g + ((o * m + order[o * m + q]) * inner + i) * size, t);
    const int64_t r = rows[o * distinct + u];
    if (r >= 0) store_as(dx + ((o * n + r) * inner + i) * size, t, acc, true);
  }
}

// pick: y[o][i] (req) x[o][k[o][i]][i]; its gradient adds g[o][i] at the same spot (distinct
// for every (o, i), so no two threads meet).
__global__ void pick_kernel(const char* x, DType t, int64_t size, const int64_t* k, char* y,
                            int64_t n, int64_t inner, bool add, bool backward, int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t i = e % inner, o = e / inner;
    const int64_t spot = (o * n + k[e]) * inner + i;
    if (backward)
      store_as(y + spot * size, t, load_as<double>(x + e * size, t), true);
    else
      store_as(y + e * size, t, load_as<double>(x + spot * size, t), add);
  }
}

}  // namespace

void pick(const TBlob& x, const int64_t* k, const TBlob& y, int64_t n, int64_t inner, bool add,
          bool backward) {
  const int64_t total = backward ? x.size() : y.size();
  if (total == 0) return;
  ::ndx::cuda::DeviceGuard guard(y.device.id);
  pick_kernel<<<grid_for(total, 256), 256, 0, stream()>>>(
      static_cast<const char*>(x.dptr), x.dtype, dtype_size(x.dtype), k, static_cast<char*>(y.dptr),
      n, inner, add, backward, total);
  check_launch("pick");
}

void gather(const TBlob& x, const int64_t* idx, const TBlob& y, int64_t outer, int64_t n, int64_t m,
            int64_t inner, bool add) {
  const int64_t total = outer * m * inner;
  if (total == 0) return;
  ::ndx::cuda::DeviceGuard guard(y.device.id);
  gather_kernel<<<grid_for(total, 256), 256, 0, stream()>>>(
      static_cast<const char*>(x.dptr), x.dtype, dtype_size(x.dtype), idx,
      static_cast<char*>(y.dptr), outer, n, m, inner, add, total);
  check_launch("gather");
}

void scatter_sum(const TBlob& g, const int64_t* rows, const int64_t* start, const int64_t* order,
                 const TBlob& dx, int64_t outer, int64_t n, int64_t m, int64_t inner,
                 int64_t distinct) {
  const int64_t total = outer * distinct * inner;
  if (total == 0) return;
  ::ndx::cuda::DeviceGuard guard(dx.device.id);
  scatter_sum_kernel<<<grid_for(total, 256), 256, 0, stream()>>>(
      static_cast<const char*>(g.dptr), g.dtype, dtype_size(g.dtype), rows, start, order,
      static_cast<char*>(dx.dptr), outer, n, m, inner, distinct, total);
  check_launch("scatter");
}

}  // namespace ndx::kernel::gpu
