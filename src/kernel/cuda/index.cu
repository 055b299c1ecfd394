// Kernels whose work follows from an element's position rather than an engine functor:
// argmax / argmin, one_hot, advanced indexing's block gathers and scatters, and the creation
// ops whose values are a function of the index (arange, linspace, eye). Index arrays arrive
// as int64 on the device, already checked on the host.
#include "kernel/cuda/common.cuh"
#include "kernel/element_size.h"
#include "kernel/gpu.h"
#include "kernel/gpu_fused.h"
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

// Elements of dtype T compared as C: native loads (no per-element dtype switch), float16 and
// bfloat16 as float.
template <class T>
struct Elem {
  using C = std::conditional_t<std::is_same_v<T, bool>, int, T>;
  static __device__ __forceinline__ C of(T v) { return static_cast<C>(v); }
  static __device__ __forceinline__ C load(const void* x, int64_t k) {
    return of(static_cast<const T*>(x)[k]);
  }
};
template <>
struct Elem<__half> {
  using C = float;
  static __device__ __forceinline__ C of(__half v) { return __half2float(v); }
  static __device__ __forceinline__ C load(const void* x, int64_t k) {
    return of(static_cast<const __half*>(x)[k]);
  }
};
template <>
struct Elem<__nv_bfloat16> {
  using C = float;
  static __device__ __forceinline__ C of(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ C load(const void* x, int64_t k) {
    return of(static_cast<const __nv_bfloat16*>(x)[k]);
  }
};

// Whether v at a later position than `at` replaces best: the first NaN, else a strictly
// better value (an equal one comes later, so the first occurrence stays).
template <bool kMax, class C>
__device__ __forceinline__ bool improves(C v, C best, int64_t at) {
  if (at < 0) return true;
  if constexpr (std::is_floating_point_v<C>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  return kMax ? v > best : v < best;
}

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// A thread's (best, at) over row[begin, end) for `lane` of `reds` threads: single elements
// up to 16-byte alignment, then 16-byte loads, then single elements; a thread visits its
// positions in increasing order, which is what `improves` relies on.
template <bool kMax, class T>
__device__ __forceinline__ void scan_contiguous(const T* row, int64_t begin, int64_t end, int lane,
                                                int reds, typename Elem<T>::C& best, int64_t& at) {
  constexpr int V = 16 / sizeof(T);
  using C = typename Elem<T>::C;
  const auto misalign =
      static_cast<int64_t>((reinterpret_cast<uintptr_t>(row + begin) / sizeof(T)) % V);
  int64_t a0 = begin + (V - misalign) % V;
  if (a0 > end) a0 = end;
  const int64_t packs = (end - a0) / V;
  auto visit = [&](C v, int64_t k) {
    if (improves<kMax>(v, best, at)) best = v, at = k;
  };
  for (int64_t k = begin + lane; k < a0; k += reds) visit(Elem<T>::of(row[k]), k);
  const auto* pk = reinterpret_cast<const Vec<T, V>*>(row + a0);
  int64_t j = lane;
  for (; j + reds < packs; j += 2 * reds) {
    const Vec<T, V> p = pk[j], q = pk[j + reds];
#pragma unroll
    for (int e = 0; e < V; ++e) visit(Elem<T>::of(p.v[e]), a0 + j * V + e);
#pragma unroll
    for (int e = 0; e < V; ++e) visit(Elem<T>::of(q.v[e]), a0 + (j + reds) * V + e);
  }
  for (; j < packs; j += reds) {
    const Vec<T, V> p = pk[j];
#pragma unroll
    for (int e = 0; e < V; ++e) visit(Elem<T>::of(p.v[e]), a0 + j * V + e);
  }
  for (int64_t k = a0 + packs * V + lane; k < end; k += reds) visit(Elem<T>::of(row[k]), k);
}

// One thread per lane (o, i), walking its n elements: adjacent threads read adjacent
// elements when inner is wide.
template <bool kMax, class T>
__global__ void arg_lanes_kernel(const void* x, int64_t outer, int64_t n, int64_t inner,
                                 int64_t* out) {
  using C = typename Elem<T>::C;
  const int64_t lanes = outer * inner, stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < lanes; e += stride) {
    const int64_t o = e / inner, i = e % inner;
    C best = C(0);
    int64_t at = -1;
    for (int64_t k = 0; k < n; ++k) {
      const C v = Elem<T>::load(x, (o * n + k) * inner + i);
      if (before<kMax>(v, k, best, at)) best = v, at = k;
    }
    out[e] = at;
  }
}

// One block per (lane, segment): its threads share the segment's elements and merge in
// shared memory. With one segment per lane the index goes straight to out; otherwise each
// segment's (value, index) goes to the partials, which arg_merge_kernel combines in order.
template <bool kMax, class T>
__global__ void arg_segments_kernel(const void* x, int64_t outer, int64_t n, int64_t inner,
                                    int64_t segs, int64_t seg_len, typename Elem<T>::C* part_v,
                                    int64_t* part_i, int64_t* out) {
  using C = typename Elem<T>::C;
  __shared__ C vals[256];
  __shared__ int64_t where[256];
  for (int64_t w = blockIdx.x; w < outer * inner * segs; w += gridDim.x) {
    const int64_t e = w / segs, seg = w % segs, o = e / inner, i = e % inner;
    const int64_t begin = seg * seg_len, end = begin + seg_len < n ? begin + seg_len : n;
    C best = C(0);
    int64_t at = -1;
    if (inner == 1) {
      scan_contiguous<kMax, T>(static_cast<const T*>(x) + o * n, begin, end, threadIdx.x,
                               blockDim.x, best, at);
    } else {
      for (int64_t k = begin + threadIdx.x; k < end; k += blockDim.x) {
        const C v = Elem<T>::load(x, (o * n + k) * inner + i);
        if (before<kMax>(v, k, best, at)) best = v, at = k;
      }
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
    if (threadIdx.x == 0) {
      if (segs == 1) {
        out[e] = where[0];
      } else {
        part_v[w] = vals[0];
        part_i[w] = where[0];
      }
    }
    __syncthreads();
  }
}

// One block per lane: its threads scan the lane's segment partials, then merge in shared
// memory (`before` compares positions, so the order of the merge does not matter).
template <bool kMax, class C>
__global__ void arg_merge_kernel(const C* part_v, const int64_t* part_i, int64_t lanes,
                                 int64_t segs, int64_t* out) {
  __shared__ C vals[256];
  __shared__ int64_t where[256];
  for (int64_t e = blockIdx.x; e < lanes; e += gridDim.x) {
    C best = C(0);
    int64_t at = -1;
    for (int64_t s = threadIdx.x; s < segs; s += blockDim.x)
      if (before<kMax>(part_v[e * segs + s], part_i[e * segs + s], best, at))
        best = part_v[e * segs + s], at = part_i[e * segs + s];
    vals[threadIdx.x] = best;
    where[threadIdx.x] = at;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half && before<kMax>(vals[threadIdx.x + half], where[threadIdx.x + half],
                                             vals[threadIdx.x], where[threadIdx.x])) {
        vals[threadIdx.x] = vals[threadIdx.x + half];
        where[threadIdx.x] = where[threadIdx.x + half];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) out[e] = where[0];
    __syncthreads();
  }
}

template <bool kMax, class T>
void launch_arg(const TBlob& x, int64_t outer, int64_t n, int64_t inner, int64_t* out) {
  using C = typename Elem<T>::C;
  const int64_t lanes = outer * inner;
  if (inner >= 32 || n <= 64) {
    arg_lanes_kernel<kMax, T>
        <<<grid_for(lanes, 256), 256, 0, stream()>>>(x.dptr, outer, n, inner, out);
    return;
  }
  // Enough blocks to fill the device a few times over: few lanes (axis=None) split into
  // segments of at least 4096 elements.
  const int64_t target = int64_t{sm_count()} * (inner == 1 ? 32 : 8);
  int64_t segs = (target + lanes - 1) / lanes;
  segs = std::max<int64_t>(1, std::min(segs, (n + 4095) / 4096));
  const int64_t seg_len = (n + segs - 1) / segs;
  const int64_t cap = int64_t{sm_count()} * 32, work = lanes * segs;
  const int64_t grid = work < cap ? work : cap;
  if (segs == 1) {
    arg_segments_kernel<kMax, T>
        <<<grid, 256, 0, stream()>>>(x.dptr, outer, n, inner, 1, seg_len, nullptr, nullptr, out);
    return;
  }
  const int device = x.device.id;
  std::size_t cap_v = 0, cap_i = 0;
  auto* part_v = static_cast<C*>(
      ::ndx::cuda::allocate(static_cast<std::size_t>(work) * sizeof(C), device, &cap_v));
  auto* part_i = static_cast<int64_t*>(
      ::ndx::cuda::allocate(static_cast<std::size_t>(work) * sizeof(int64_t), device, &cap_i));
  arg_segments_kernel<kMax, T>
      <<<grid, 256, 0, stream()>>>(x.dptr, outer, n, inner, segs, seg_len, part_v, part_i, out);
  arg_merge_kernel<kMax, C>
      <<<std::min<int64_t>(lanes, int64_t{sm_count()} * 8), 256, 0, stream()>>>(part_v, part_i,
                                                                                lanes, segs, out);
  ::ndx::cuda::release(part_v, cap_v, device);  // stream-ordered: after the kernels
  ::ndx::cuda::release(part_i, cap_i, device);
}

template <bool kMax>
void arg_typed(const TBlob& x, int64_t outer, int64_t n, int64_t inner, int64_t* out) {
  switch (x.dtype) {
    case DType::kBool:
      return launch_arg<kMax, bool>(x, outer, n, inner, out);
    case DType::kInt8:
      return launch_arg<kMax, int8_t>(x, outer, n, inner, out);
    case DType::kInt16:
      return launch_arg<kMax, int16_t>(x, outer, n, inner, out);
    case DType::kInt32:
      return launch_arg<kMax, int32_t>(x, outer, n, inner, out);
    case DType::kInt64:
      return launch_arg<kMax, int64_t>(x, outer, n, inner, out);
    case DType::kUInt8:
      return launch_arg<kMax, uint8_t>(x, outer, n, inner, out);
    case DType::kUInt16:
      return launch_arg<kMax, uint16_t>(x, outer, n, inner, out);
    case DType::kUInt32:
      return launch_arg<kMax, uint32_t>(x, outer, n, inner, out);
    case DType::kUInt64:
      return launch_arg<kMax, uint64_t>(x, outer, n, inner, out);
    case DType::kFloat16:
      return launch_arg<kMax, __half>(x, outer, n, inner, out);
    case DType::kBFloat16:
      return launch_arg<kMax, __nv_bfloat16>(x, outer, n, inner, out);
    case DType::kFloat32:
      return launch_arg<kMax, float>(x, outer, n, inner, out);
    default:
      return launch_arg<kMax, double>(x, outer, n, inner, out);
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

// ---- x[idx] with idx on the device ----

// offsets[b] of idx[b] normalized into [0, n); the first position out of range goes to *bad
// (an atomic minimum over the positions, so the verdict does not depend on thread order).
// With `last`, last[i] becomes the largest position b whose index is i (the writer that wins).
__global__ void row_offsets_kernel(const char* idx, DType t, int64_t size, int64_t n,
                                   int64_t base_offset, int64_t step_bytes, int64_t* offsets,
                                   unsigned long long* bad, long long* last, int64_t count) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t b = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; b < count; b += stride) {
    int64_t i = load_as<int64_t>(idx + b * size, t);
    if (t == DType::kUInt64 && i < 0) i = n;  // beyond int64: out of range
    if (i < 0) i += n;
    if (i < 0 || i >= n) {
      atomicMin(bad, static_cast<unsigned long long>(b));
      i = 0;
    }
    offsets[b] = base_offset + i * step_bytes;
    if (last) atomicMax(last + i, static_cast<long long>(b));
  }
}

// x[idx] = values: element r of block b goes to row rows[b] unless a later position names the
// same row (last[rows[b]] != b).
template <int S>
__global__ void put_rows_kernel(char* base, int64_t step_bytes, const int64_t* rows,
                                const long long* last, Geometry<1> g, int64_t blk,
                                const char* values, int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t b = e / blk, r = e % blk, row = rows[b];
    if (last[row] != b) continue;
    int64_t off[1];
    g.offsets(r, off);
    *reinterpret_cast<Word<S>*>(base + row * step_bytes + off[0] * S) =
        reinterpret_cast<const Word<S>*>(values)[e];
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
      v = a.single ? static_cast<double>(
                         __fadd_rn(static_cast<float>(a.start),
                                   __fmul_rn(static_cast<float>(i), static_cast<float>(a.step))))
                   : __dadd_rn(a.start, __dmul_rn(static_cast<double>(i), a.step));
      if (a.pin_last && i == total - 1 && i > 0) v = a.stop;
      if (a.pin_second && i <= 1) v = i == 0 ? a.start : a.second;
      if (a.floor) v = floor(v);
      if (a.wrap_span > 0) v -= a.wrap_span * floor((v - a.wrap_low) / a.wrap_span);
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
  const Geometry<1> g = geometry_of(rest, rest_strides, "[index] blocks");
  ::ndx::cuda::DeviceGuard guard(device);
  const auto grid = grid_for(total, 256);
  with_element_size(itemsize, "index on gpu", [&](auto size) {
    index_blocks_kernel<decltype(size)::value>
        <<<grid, 256, 0, stream()>>>(base, offsets, positions, g, blk, buffer, to_buffer, total);
  });
  check_launch("index");
}

int64_t row_offsets(const TBlob& idx, int64_t n, int64_t base_offset, int64_t step_bytes,
                    int64_t* offsets) {
  const int64_t count = idx.size();
  if (count == 0) return -1;
  const int device = idx.device.id;
  ::ndx::cuda::DeviceGuard guard(device);
  std::size_t cap = 0;
  auto* bad = static_cast<unsigned long long*>(
      ::ndx::cuda::allocate(sizeof(unsigned long long), device, &cap));
  cudaMemsetAsync(bad, 0xff, sizeof(unsigned long long), stream());
  row_offsets_kernel<<<grid_for(count, 256), 256, 0, stream()>>>(
      static_cast<const char*>(idx.dptr), idx.dtype, dtype_size(idx.dtype), n, base_offset,
      step_bytes, offsets, bad, nullptr, count);
  check_launch("index");
  unsigned long long first = 0;
  ::ndx::cuda::copy_to_host(&first, bad, sizeof(first), device);  // waits for the kernel
  ::ndx::cuda::release(bad, cap, device);
  return first == ~0ull ? -1 : static_cast<int64_t>(first);
}

int64_t put_rows(const TBlob& idx, int64_t n, char* base, int64_t step_bytes, const Shape& rest,
                 const Shape& rest_strides, int64_t itemsize, const char* values) {
  const int64_t count = idx.size(), blk = rest.size();
  if (count == 0) return -1;
  const Geometry<1> g = geometry_of(rest, rest_strides, "[index] blocks");
  const int device = idx.device.id;
  ::ndx::cuda::DeviceGuard guard(device);
  std::size_t cap_bad = 0, cap_rows = 0, cap_last = 0;
  auto* bad = static_cast<unsigned long long*>(
      ::ndx::cuda::allocate(sizeof(unsigned long long), device, &cap_bad));
  auto* rows = static_cast<int64_t*>(
      ::ndx::cuda::allocate(static_cast<std::size_t>(count) * sizeof(int64_t), device, &cap_rows));
  auto* last = static_cast<long long*>(::ndx::cuda::allocate(
      static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(long long), device, &cap_last));
  cudaMemsetAsync(bad, 0xff, sizeof(unsigned long long), stream());
  cudaMemsetAsync(last, 0xff, static_cast<std::size_t>(n) * sizeof(long long), stream());  // -1
  row_offsets_kernel<<<grid_for(count, 256), 256, 0, stream()>>>(static_cast<const char*>(idx.dptr),
                                                                 idx.dtype, dtype_size(idx.dtype),
                                                                 n, 0, 1, rows, bad, last, count);
  check_launch("index");
  unsigned long long first = 0;
  ::ndx::cuda::copy_to_host(&first, bad, sizeof(first), device);  // waits for the kernel
  if (first == ~0ull && blk > 0) {
    with_element_size(itemsize, "index on gpu", [&](auto size) {
      put_rows_kernel<decltype(size)::value><<<grid_for(count * blk, 256), 256, 0, stream()>>>(
          base, step_bytes, rows, last, g, blk, values, count * blk);
    });
    check_launch("index");
  }
  ::ndx::cuda::release(bad, cap_bad, device);  // stream-ordered: after the kernels
  ::ndx::cuda::release(rows, cap_rows, device);
  ::ndx::cuda::release(last, cap_last, device);
  return first == ~0ull ? -1 : static_cast<int64_t>(first);
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
