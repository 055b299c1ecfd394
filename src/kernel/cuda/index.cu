// Kernels whose work follows from an element's position rather than an engine functor:
// argmax / argmin, one_hot, advanced indexing's block gathers and scatters, and the creation
// ops whose values are a function of the index (arange, linspace, eye). Index arrays arrive
// as int64 on the device, already checked on the host.
#include "kernel/cuda/common.cuh"
#include "kernel/gpu.h"
#include "kernel/iterator.h"

namespace ndx::kernel::gpu {
namespace {

// ---- argmax / argmin ----

// Whether (v, i) comes before (w, j) as NumPy's argmax (kMax) or argmin picks: a NaN before
// any number, then the larger (smaller) value, then the first position. j < 0: nothing yet.
template <bool kMax, class C>
__device__ __forceinline__ bool before(C v, int64_t i, C w, int64_t j) {
  if (j < 0) return i >= 0;
  if (i < 0) return false;
  if constexpr (std::is_floating_point_v<C>) {
    const bool vn = v != v, wn = w != w;
    if (vn || wn) return vn && wn ? i < j : vn;
  }
  if (v != w) return kMax ? v > w : v < w;
  return i < j;
}

// One thread per lane (o, i), walking its n elements: adjacent threads read adjacent
// elements when inner is wide.
template <bool kMax, class C>
__global__ void arg_lanes_kernel(const char* x, DType t, int64_t size, int64_t outer, int64_t n,
                                 int64_t inner, int64_t* out) {
  const int64_t lanes = outer * inner, stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < lanes; e += stride) {
    const int64_t o = e / inner, i = e % inner;
    C best = C(0);
    int64_t at = -1;
    for (int64_t k = 0; k < n; ++k) {
      const C v = load_as<C>(x + ((o * n + k) * inner + i) * size, t);
      if (before<kMax>(v, k, best, at)) best = v, at = k;
    }
    out[e] = at;
  }
}

// One block per lane: its threads share the lane's n elements, then merge in shared memory
// (for long rows and axis=None).
template <bool kMax, class C>
__global__ void arg_block_kernel(const char* x, DType t, int64_t size, int64_t outer, int64_t n,
                                 int64_t inner, int64_t* out) {
  __shared__ C vals[256];
  __shared__ int64_t where[256];
  for (int64_t e = blockIdx.x; e < outer * inner; e += gridDim.x) {
    const int64_t o = e / inner, i = e % inner;
    C best = C(0);
    int64_t at = -1;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      const C v = load_as<C>(x + ((o * n + k) * inner + i) * size, t);
      if (before<kMax>(v, k, best, at)) best = v, at = k;
    }
    vals[threadIdx.x] = best;
    where[threadIdx.x] = at;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        const unsigned other = threadIdx.x + half;
        if (before<kMax>(vals[other], where[other], vals[threadIdx.x], where[threadIdx.x])) {
          vals[threadIdx.x] = vals[other];
          where[threadIdx.x] = where[other];
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) out[e] = where[0];
    __syncthreads();
  }
}

template <bool kMax, class C>
void launch_arg(const TBlob& x, int64_t outer, int64_t n, int64_t inner, int64_t* out) {
  const auto* p = static_cast<const char*>(x.dptr);
  const int64_t size = dtype_size(x.dtype), lanes = outer * inner;
  if (inner >= 32 || n <= 64) {
    arg_lanes_kernel<kMax, C>
        <<<grid_for(lanes, 256), 256, 0, stream()>>>(p, x.dtype, size, outer, n, inner, out);
  } else {
    const int64_t cap = int64_t{sm_count()} * 32;
    arg_block_kernel<kMax, C> < <<lanes<cap ? lanes : cap, 256, 0, stream()>>>(
                                    p, x.dtype, size, outer, n, inner, out);
  }
}

template <bool kMax>
void arg_typed(const TBlob& x, int64_t outer, int64_t n, int64_t inner, int64_t* out) {
  switch (x.dtype) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return launch_arg<kMax, double>(x, outer, n, inner, out);
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return launch_arg<kMax, uint64_t>(x, outer, n, inner, out);
    default:  // bool and the signed integers
      return launch_arg<kMax, int64_t>(x, outer, n, inner, out);
  }
}

// ---- one_hot ----

__global__ void one_hot_kernel(const int64_t* idx, int64_t depth, double on, double off, char* y,
                               DType t, int64_t size, bool add, int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += stride)
    store_as(y + e * size, t, idx[e / depth] == e % depth ? on : off, add);
}

// ---- advanced indexing ----

template <int S>
struct Word {
  alignas(S < 8 ? S : 8) unsigned char b[S];
};

// Element e of the buffer is element r = e % blk of block b = e / blk: at offsets[b] plus r's
// offset in the block's (coalesced) layout.
template <int S>
__global__ void index_blocks_kernel(char* base, const int64_t* offsets, const int64_t* positions,
                                    Geometry<1> g, int64_t blk, char* buffer, bool to_buffer,
                                    int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t b = e / blk, r = e % blk;
    int64_t off[1];
    g.offsets(r, off);
    auto* at = reinterpret_cast<Word<S>*>(base + offsets[b] + off[0] * S);
    auto* slot = reinterpret_cast<Word<S>*>(buffer) + (positions ? positions[b] : b) * blk + r;
    if (to_buffer)
      *slot = *at;
    else
      *at = *slot;
  }
}

// ---- arange, linspace, eye ----

__global__ void index_fill_kernel(char* y, DType t, int64_t size, IndexFillArgs a, bool add,
                                  int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    double v;
    if (a.kind == IndexFill::kEye) {
      v = (i % a.cols) - (i / a.cols) == a.k ? 1.0 : 0.0;
    } else {
      // Rounded as the host computes start + i * step: no fused multiply-add.
      v = __dadd_rn(a.start, __dmul_rn(static_cast<double>(i), a.step));
      if (a.pin_last && i == total - 1 && i > 0) v = a.stop;
      if (a.floor) v = floor(v);
    }
    if (t == DType::kBool)
      store_as(y + i * size, t, v != 0, add);
    else
      store_as(y + i * size, t, v, add);
  }
}

}  // namespace

void arg_reduce(const TBlob& x, bool max, int64_t outer, int64_t n, int64_t inner, int64_t* out) {
  if (outer * inner == 0) return;
  ::ndx::cuda::DeviceGuard guard(x.device.id);
  if (max)
    arg_typed<true>(x, outer, n, inner, out);
  else
    arg_typed<false>(x, outer, n, inner, out);
  check_launch(max ? "argmax" : "argmin");
}

void one_hot(const int64_t* idx, int64_t rows, int64_t depth, double on, double off, const TBlob& y,
             bool add) {
  const int64_t total = rows * depth;
  if (total == 0) return;
  ::ndx::cuda::DeviceGuard guard(y.device.id);
  one_hot_kernel<<<grid_for(total, 256), 256, 0, stream()>>>(
      idx, depth, on, off, static_cast<char*>(y.dptr), y.dtype, dtype_size(y.dtype), add, total);
  check_launch("one_hot");
}

void index_blocks(char* base, const int64_t* offsets, const int64_t* positions, int64_t count,
                  const Shape& rest, const Shape& rest_strides, int64_t itemsize, char* buffer,
                  bool to_buffer, int device) {
  const int64_t blk = rest.size(), total = count * blk;
  if (total == 0) return;
  const NdIter<1> it(rest, {rest_strides.data()});
  if (it.ndim() > kMaxDims)
    not_implemented("[index] blocks with more than ", kMaxDims, " unmergeable dims on gpu");
  Geometry<1> g;
  g.nd = it.ndim();
  for (int d = 0; d < g.nd; ++d) {
    g.dims[d] = it.dim(d);
    g.strides[0][d] = it.stride(0, d);
  }
  ::ndx::cuda::DeviceGuard guard(device);
  const auto grid = grid_for(total, 256);
  switch (itemsize) {
    case 1:
      index_blocks_kernel<1>
          <<<grid, 256, 0, stream()>>>(base, offsets, positions, g, blk, buffer, to_buffer, total);
      break;
    case 2:
      index_blocks_kernel<2>
          <<<grid, 256, 0, stream()>>>(base, offsets, positions, g, blk, buffer, to_buffer, total);
      break;
    case 4:
      index_blocks_kernel<4>
          <<<grid, 256, 0, stream()>>>(base, offsets, positions, g, blk, buffer, to_buffer, total);
      break;
    case 8:
      index_blocks_kernel<8>
          <<<grid, 256, 0, stream()>>>(base, offsets, positions, g, blk, buffer, to_buffer, total);
      break;
    case 16:
      index_blocks_kernel<16>
          <<<grid, 256, 0, stream()>>>(base, offsets, positions, g, blk, buffer, to_buffer, total);
      break;
    default:
      not_implemented("[index] elements of ", itemsize, " bytes on gpu");
  }
  check_launch("index");
}

void index_fill(const TBlob& y, const IndexFillArgs& a, bool add) {
  const int64_t total = y.size();
  if (total == 0) return;
  ::ndx::cuda::DeviceGuard guard(y.device.id);
  index_fill_kernel<<<grid_for(total, 256), 256, 0, stream()>>>(static_cast<char*>(y.dptr), y.dtype,
                                                                dtype_size(y.dtype), a, add, total);
  check_launch("index_fill");
}

}  // namespace ndx::kernel::gpu
