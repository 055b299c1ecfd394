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
    m = sm[0];
    // A NaN, or +inf (inf - inf), makes the row NaN, as the CPU's exp(x - max) / sum does.
    if (nan || m == std::numeric_limits<A>::infinity()) m = std::numeric_limits<A>::quiet_NaN();
    s = ss[0];
    const A log_s = log(s), inv_s = A(1) / s;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const A v = xr[j];
      yr[j] = kLog ? (v - m) - log_s : exp(v - m) * inv_s;
    }
    __syncthreads();  // sm / ss are rewritten by the next row
  }
}

// A block's maximum (kMax) or sum of v, returned to every thread; `scratch` holds 32 values.
template <bool kMax, class A>
__device__ __forceinline__ A block_fold(A v, A* scratch) {
  for (int off = 16; off > 0; off /= 2) {
    const A o = __shfl_xor_sync(0xffffffffu, v, off);
    v = kMax ? fmax(v, o) : v + o;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : kMax ? -std::numeric_limits<A>::infinity() : A(0);
  for (int off = 16; off > 0; off /= 2) {
    const A o = __shfl_xor_sync(0xffffffffu, v, off);
    v = kMax ? fmax(v, o) : v + o;
  }
  __syncthreads();  // scratch is rewritten by the next fold
  return v;
}

// Rows short enough to stay in registers (n / V <= kPacks * blockDim.x, n a multiple of
// V = 16 / sizeof(T), rows 16-byte aligned): each thread keeps its 16-byte packs of a row, so
// the row is read once and written once, with one exp per element. The math is the CPU's row
// functors (Softmax / LogSoftmax of operator/math/nn-inl.h); a NaN anywhere in a row makes
// the whole row NaN, as the two-pass formula does.
template <class F, class T, int kPacks>
__global__ void softmax_regs_kernel(F f, const T* x, T* y, int64_t rows, int64_t n) {
  constexpr int V = 16 / sizeof(T);
  using P = Pack<T, V>;
  __shared__ T scratch[32];
  const int64_t packs = n / V;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const P* xr = reinterpret_cast<const P*>(x + r * n);
    P* yr = reinterpret_cast<P*>(y + r * n);
    P v[kPacks];
    T m = -std::numeric_limits<T>::infinity();
    bool nan = false;
#pragma unroll
    for (int u = 0; u < kPacks; ++u) {
      if (threadIdx.x + int64_t{u} * blockDim.x >= packs) continue;
      v[u] = xr[threadIdx.x + int64_t{u} * blockDim.x];
#pragma unroll
      for (int e = 0; e < V; ++e) {
        nan |= v[u].v[e] != v[u].v[e];
        m = fmax(m, v[u].v[e]);
      }
    }
    nan = __syncthreads_or(nan);
    m = nan ? std::numeric_limits<T>::quiet_NaN() : block_fold<true>(m, scratch);
    T s = 0;
#pragma unroll
    for (int u = 0; u < kPacks; ++u) {
      if (threadIdx.x + int64_t{u} * blockDim.x >= packs) continue;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const T pre = f.pre(v[u].v[e], m);
        s += pre;
        if constexpr (F::kStorePre) v[u].v[e] = pre;
      }
    }
    s = block_fold<false>(s, scratch);
#pragma unroll
    for (int u = 0; u < kPacks; ++u) {
      if (threadIdx.x + int64_t{u} * blockDim.x >= packs) continue;
#pragma unroll
      for (int e = 0; e < V; ++e) v[u].v[e] = f.post(v[u].v[e], m, s);
      yr[threadIdx.x + int64_t{u} * blockDim.x] = v[u];
    }
  }
}

// Launches the register kernel when the rows fit it; false otherwise.
template <class T, bool kLog>
bool softmax_in_registers(const T* x, T* y, int64_t rows, int64_t n) {
  constexpr int V = 16 / sizeof(T), kPacks = 4;
  if (n % V != 0 || reinterpret_cast<uintptr_t>(x) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(y) % 16 != 0)
    return false;
  const int64_t packs = n / V;
  // float64 packs take twice the registers: 512 threads at most, or the launch fails.
  const int max_threads = sizeof(T) == 8 ? 512 : 1024;
  int threads = 32;
  while (threads < max_threads && int64_t{threads} * kPacks < packs) threads *= 2;
  if (int64_t{threads} * kPacks < packs) return false;
  const int64_t grid = std::min<int64_t>(rows, int64_t{sm_count()} * 32);
  using F = std::conditional_t<kLog, LogSoftmax, Softmax>;
  softmax_regs_kernel<F, T, kPacks><<<grid, threads, 0, stream()>>>(F{}, x, y, rows, n);
  return true;
}

template <class T, bool kLog>
void softmax_typed(const TBlob& x, const TBlob& y, int64_t rows, int64_t n) {
  auto* xp = static_cast<const T*>(x.dptr);
  auto* yp = static_cast<T*>(y.dptr);
  if (softmax_in_registers<T, kLog>(xp, yp, rows, n)) return;
  const int threads = n >= 1024 ? 512 : n >= 256 ? 256 : 128;
  const int64_t grid = std::min<int64_t>(rows, int64_t{sm_count()} * 16);
  softmax_rows_kernel<T, kLog><<<grid, threads, 0, stream()>>>(xp, yp, rows, n);
}

}  // namespace

void softmax_rows(bool log_softmax, const TBlob& x, const TBlob& y, int64_t rows, int64_t n) {
  if (rows == 0 || n == 0) return;
  ::ndx::cuda::DeviceGuard guard(y.device.id);
  if (x.dtype == DType::kFloat32)
    log_softmax ? softmax_typed<float, true>(x, y, rows, n)
                : softmax_typed<float, false>(x, y, rows, n);
  else
    log_softmax ? softmax_typed<double, true>(x, y, rows, n)
                : softmax_typed<double, false>(x, y, rows, n);
  check_launch("softmax");
}

}  // namespace ndx::kernel::gpu
