// The elementwise pieces of the neural-network and reduction ops (operator/math/nn-inl.h,
// operator/math/reduce-inl.h) for CUDA.
#include "kernel/cuda/elementwise.cuh"
#include "kernel/gpu.h"

namespace ndx::kernel::gpu {
#include "kernel/math/reducers-inl.h"
#include "operator/math/nn-inl.h"
#include "operator/math/reduce-inl.h"

#define NDX_INSTANTIATE_(F) template void elementwise<F>(const ElementwiseArgs&);
NDX_NN_FUNCTORS(NDX_INSTANTIATE_)
#undef NDX_INSTANTIATE_
}  // namespace ndx::kernel::gpu

namespace ndx::kernel::gpu {
namespace {

// (max, sum of exp(x - max)) of a thread's share of a row, merged pairwise: a one-pass
// ("online") softmax statistic, so a row is read once for its statistics and once more,
// from cache, for the output.
struct RowStat {
  float m, s;
};
template <class A>
__device__ __forceinline__ void merge(A& m, A& s, A m2, A s2) {
  if (m2 > m) {
    s = s * exp(m - m2) + s2;
    m = m2;
  } else if (m2 == m) {  // equal maxima (both -inf too): no rescaling, no inf - inf
    s += s2;
  } else {
    s += s2 * exp(m2 - m);
  }
}

template <class T, bool kLog>
__global__ void softmax_rows_kernel(const T* x, T* y, int64_t rows, int64_t n) {
  using A = T;  // float for float32, double for float64
  __shared__ A sm[32], ss[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    A m = -std::numeric_limits<A>::infinity(), s = 0;
    bool nan = false;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const A v = xr[j];
      nan |= v != v;
      merge(m, s, v, A(1));
    }
    // warp, then block: lane 0 of each warp publishes its pair
    for (int off = 16; off > 0; off /= 2) {
      const A m2 = __shfl_down_sync(0xffffffffu, m, off);
      const A s2 = __shfl_down_sync(0xffffffffu, s, off);
      merge(m, s, m2, s2);
    }
    nan = __syncthreads_or(nan);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) sm[warp] = m, ss[warp] = s;
    __syncthreads();
    if (warp == 0) {
      const int warps = blockDim.x / 32;
      m = lane < warps ? sm[lane] : -std::numeric_limits<A>::infinity();
      s = lane < warps ? ss[lane] : A(0);
      for (int off = 16; off > 0; off /= 2) {
        const A m2 = __shfl_down_sync(0xffffffffu, m, off);
        const A s2 = __shfl_down_sync(0xffffffffu, s, off);
        merge(m, s, m2, s2);
      }
      if (lane == 0) sm[0] = m, ss[0] = s;
    }
    __syncthreads();
    m = nan ? std::numeric_limits<A>::quiet_NaN() : sm[0];
    s = ss[0];
    const A log_s = log(s), inv_s = A(1) / s;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const A v = xr[j];
      yr[j] = kLog ? (v - m) - log_s : exp(v - m) * inv_s;
    }
    __syncthreads();  // sm / ss are rewritten by the next row
  }
}

}  // namespace

void softmax_rows(bool log_softmax, const TBlob& x, const TBlob& y, int64_t rows, int64_t n) {
  if (rows == 0 || n == 0) return;
  ::ndx::cuda::DeviceGuard guard(y.device.id);
  const int threads = n >= 1024 ? 512 : n >= 256 ? 256 : 128;
  const int64_t grid = std::min<int64_t>(rows, int64_t{sm_count()} * 16);
  if (x.dtype == DType::kFloat32) {
    auto* xp = static_cast<const float*>(x.dptr);
    auto* yp = static_cast<float*>(y.dptr);
    if (log_softmax)
      softmax_rows_kernel<float, true><<<grid, threads, 0, stream()>>>(xp, yp, rows, n);
    else
      softmax_rows_kernel<float, false><<<grid, threads, 0, stream()>>>(xp, yp, rows, n);
  } else {
    auto* xp = static_cast<const double*>(x.dptr);
    auto* yp = static_cast<double*>(y.dptr);
    if (log_softmax)
      softmax_rows_kernel<double, true><<<grid, threads, 0, stream()>>>(xp, yp, rows, n);
    else
      softmax_rows_kernel<double, false><<<grid, threads, 0, stream()>>>(xp, yp, rows, n);
  }
  check_launch("softmax");
}

}  // namespace ndx::kernel::gpu
