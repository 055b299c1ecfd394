// The reduction engine for CUDA: `gpu::reduce<R>` takes the CPU engine's ReduceArgs (the
// output seen with the input's rank, size 1 along reduced dims) and the same reducers
// (kernel/math/reducers-inl.h). The kept dims and the reduced dims are coalesced separately;
// a block reduces several outputs at once, its threads split along the reduced elements
// ("inner": the input's unit stride is reduced, so a row of threads reads a row of input) or
// along the outputs ("outer": neighbouring threads read neighbouring outputs' inputs). Long
// reductions are split into segments whose partials a second kernel combines in order.
#include <memory>

#include "kernel/cuda/elementwise.cuh"
#include "kernel/gpu.h"
#include "kernel/reduce.h"
#include "ndx/storage.h"

namespace ndx::kernel::gpu {
#include "kernel/math/reducers-inl.h"

namespace {

template <class R>
constexpr bool has_finalize() {
  return requires(const R& r) { r.finalize(0.0, int64_t{0}); };
}

template <class C>
struct ReducePlan {
  Geometry<2> kept;  // strides[0]: input, strides[1]: output
  Geometry<1> red;   // input strides over the reduced dims
  int64_t K = 0, M = 0, seg_len = 0;
  int segs = 1;
  const char* in = nullptr;
  DType in_dtype{};
  int64_t in_size = 0;
  char* out = nullptr;
  DType out_dtype{};
  int64_t out_size = 0;
  C* partial = nullptr;  // [segs][K] when segs > 1
  bool add = false, has_init = false;
  C init{};
};

template <class C, bool kDirect>
__device__ __forceinline__ C load_in(const ReducePlan<C>& p, int64_t off) {
  if constexpr (kDirect)
    return reinterpret_cast<const C*>(p.in)[off];
  else
    return load_as<C>(p.in + off * p.in_size, p.in_dtype);
}

template <class R, class C>
__device__ __forceinline__ void finish(const R& r, const ReducePlan<C>& p, int64_t k, C acc) {
  if (p.has_init) acc = r(p.init, acc);
  int64_t off[2];
  p.kept.offsets(k, off);
  if constexpr (has_finalize<R>())
    store_as(p.out + off[1] * p.out_size, p.out_dtype, r.finalize(acc, p.M), p.add);
  else
    store_as(p.out + off[1] * p.out_size, p.out_dtype, acc, p.add);
}

// acc folded with row[begin, end) by the `reds` threads of a row, lane by lane: 16-byte
// loads over the aligned middle (two in flight per thread), single elements at the ends.
template <class R, class C>
__device__ __forceinline__ C fold_contiguous(const R& r, const C* row, int64_t begin, int64_t end,
                                             int lane, int reds, C acc) {
  constexpr int V = 16 / sizeof(C) > 0 ? 16 / sizeof(C) : 1;
  const auto misalign =
      static_cast<int64_t>((reinterpret_cast<uintptr_t>(row + begin) / sizeof(C)) % V);
  int64_t a0 = begin + (V - misalign) % V;
  if (a0 > end) a0 = end;
  const int64_t packs = (end - a0) / V;
  for (int64_t m = begin + lane; m < a0; m += reds) acc = r(acc, row[m]);
  const auto* pk = reinterpret_cast<const Pack<C, V>*>(row + a0);
  int64_t j = lane;
  for (; j + reds < packs; j += 2 * reds) {
    const Pack<C, V> x = pk[j], y = pk[j + reds];
#pragma unroll
    for (int e = 0; e < V; ++e) acc = r(acc, x.v[e]);
#pragma unroll
    for (int e = 0; e < V; ++e) acc = r(acc, y.v[e]);
  }
  for (; j < packs; j += reds) {
    const Pack<C, V> x = pk[j];
#pragma unroll
    for (int e = 0; e < V; ++e) acc = r(acc, x.v[e]);
  }
  for (int64_t m = a0 + packs * V + lane; m < end; m += reds) acc = r(acc, row[m]);
  return acc;
}

// blockDim (TX, TY). kInner: x runs along the reduced elements, y along outputs; otherwise
// x along outputs, y along the reduced elements. blockIdx.y is the segment.
template <class R, class C, bool kInner, bool kDirect>
__global__ void reduce_kernel(R r, ReducePlan<C> p) {
  __shared__ C shared[256];
  const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
  const int out_lane = kInner ? ty : tx, red_lane = kInner ? tx : ty;
  const int outs = kInner ? TY : TX, reds = kInner ? TX : TY;
  const int64_t k = int64_t{blockIdx.x} * outs + out_lane;
  const int64_t begin = int64_t{blockIdx.y} * p.seg_len;
  const int64_t end = begin + p.seg_len < p.M ? begin + p.seg_len : p.M;
  C acc = R::template identity<C>();
  if (k < p.K) {
    int64_t off[2];
    p.kept.offsets(k, off);
    const int64_t base = off[0];
    if (kInner && kDirect && p.red.nd == 1 && p.red.strides[0][0] == 1) {
      acc = fold_contiguous(r, reinterpret_cast<const C*>(p.in) + base, begin, end, red_lane, reds,
                            acc);
    } else if (p.red.nd == 1) {
      const int64_t st = p.red.strides[0][0];
      int64_t m = begin + red_lane;
      for (; m + 3 * reds < end; m += 4 * reds) {  // four loads in flight per thread
        const C x0 = load_in<C, kDirect>(p, base + m * st);
        const C x1 = load_in<C, kDirect>(p, base + (m + reds) * st);
        const C x2 = load_in<C, kDirect>(p, base + (m + 2 * reds) * st);
        const C x3 = load_in<C, kDirect>(p, base + (m + 3 * reds) * st);
        acc = r(r(acc, x0),
                r(r(R::template identity<C>(), x1), r(r(R::template identity<C>(), x2), x3)));
      }
      for (; m < end; m += reds) acc = r(acc, load_in<C, kDirect>(p, base + m * st));
    } else {
      for (int64_t m = begin + red_lane; m < end; m += reds) {
        int64_t ro[1];
        p.red.offsets(m, ro);
        acc = r(acc, load_in<C, kDirect>(p, base + ro[0]));
      }
    }
  }
  const int slot = ty * TX + tx;
  shared[slot] = acc;
  __syncthreads();
  for (int half = reds / 2; half > 0; half /= 2) {
    if (red_lane < half) {
      const int other = kInner ? ty * TX + (tx + half) : (ty + half) * TX + tx;
      shared[slot] = r(shared[slot], shared[other]);
    }
    __syncthreads();
  }
  if (red_lane != 0 || k >= p.K) return;
  if (p.segs == 1)
    finish(r, p, k, shared[slot]);
  else
    p.partial[int64_t{blockIdx.y} * p.K + k] = shared[slot];
}

// The outer reduction of a plain matrix whose kept dim is the input's unit stride (sum over
// axis 0 of a C-order matrix): each thread folds V = 16 / sizeof(C) neighbouring outputs with
// one 16-byte load per row, four rows in flight, so a warp reads 512 contiguous bytes per load
// rather than 128. blockDim (32, 8): x along the outputs, y along the reduced rows.
template <class R, class C>
__global__ void reduce_outer_packed(R r, ReducePlan<C> p) {
  constexpr int V = 16 / sizeof(C);
  __shared__ Pack<C, V> shared[8][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t k0 = (int64_t{blockIdx.x} * 32 + tx) * V;
  const int64_t begin = int64_t{blockIdx.y} * p.seg_len;
  const int64_t end = begin + p.seg_len < p.M ? begin + p.seg_len : p.M;
  const int64_t st = p.red.strides[0][0];
  const C* in = reinterpret_cast<const C*>(p.in) + k0;
  Pack<C, V> acc;
#pragma unroll
  for (int e = 0; e < V; ++e) acc.v[e] = R::template identity<C>();
  if (k0 + V <= p.K) {
    int64_t m = begin + ty;
    for (; m + 24 < end; m += 32) {
      Pack<C, V> x[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        x[u] = *reinterpret_cast<const Pack<C, V>*>(in + (m + 8 * u) * st);
#pragma unroll
      for (int e = 0; e < V; ++e)
        acc.v[e] =
            r(r(acc.v[e], x[0].v[e]), r(r(R::template identity<C>(), x[1].v[e]),
                                        r(r(R::template identity<C>(), x[2].v[e]), x[3].v[e])));
    }
    for (; m < end; m += 8) {
      const Pack<C, V> x = *reinterpret_cast<const Pack<C, V>*>(in + m * st);
#pragma unroll
      for (int e = 0; e < V; ++e) acc.v[e] = r(acc.v[e], x.v[e]);
    }
  } else if (k0 < p.K) {  // the last, partial pack: element by element
    for (int64_t m = begin + ty; m < end; m += 8)
      for (int e = 0; e < V && k0 + e < p.K; ++e) acc.v[e] = r(acc.v[e], in[m * st + e]);
  }
  shared[ty][tx] = acc;
  __syncthreads();
  for (int half = 4; half > 0; half /= 2) {
    if (ty < half) {
#pragma unroll
      for (int e = 0; e < V; ++e)
        shared[ty][tx].v[e] = r(shared[ty][tx].v[e], shared[ty + half][tx].v[e]);
    }
    __syncthreads();
  }
  if (ty != 0) return;
  for (int e = 0; e < V && k0 + e < p.K; ++e) {
    if (p.segs == 1)
      finish(r, p, k0 + e, shared[0][tx].v[e]);
    else
      p.partial[int64_t{blockIdx.y} * p.K + k0 + e] = shared[0][tx].v[e];
  }
}

// Whether the plan is a plain outer reduction reduce_outer_packed can read with aligned
// 16-byte loads: one kept dim of unit input stride, one reduced dim whose stride keeps rows
// aligned, the input dtype the compute type.
template <class C>
bool outer_packs(const ReducePlan<C>& p, bool inner, bool direct) {
  constexpr int64_t V = 16 / sizeof(C);
  return !inner && direct && V > 1 && p.kept.nd == 1 && p.kept.strides[0][0] == 1 &&
         p.red.nd == 1 && p.red.strides[0][0] % V == 0 && p.K >= 4 * V &&
         reinterpret_cast<uintptr_t>(p.in) % 16 == 0;
}

template <class R, class C>
__global__ void combine_kernel(R r, ReducePlan<C> p) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t k = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < p.K; k += stride) {
    C acc = p.partial[k];
    for (int s = 1; s < p.segs; ++s) acc = r(acc, p.partial[int64_t{s} * p.K + k]);
    finish(r, p, k, acc);
  }
}

// Outputs of an empty reduction: the start value, finalized (a mean of nothing is NaN).
template <class R, class C>
__global__ void empty_kernel(R r, ReducePlan<C> p) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t k = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < p.K; k += stride)
    finish(r, p, k, R::template identity<C>());
}

int pow2_at_least(int64_t n, int lo, int hi) {
  int v = lo;
  while (v < hi && v < n) v *= 2;
  return v;
}

template <class R, class C>
void launch(const R& r, ReducePlan<C>& p, bool inner, bool direct, dim3 grid, dim3 block) {
  if (inner && direct)
    reduce_kernel<R, C, true, true><<<grid, block, 0, stream()>>>(r, p);
  else if (inner)
    reduce_kernel<R, C, true, false><<<grid, block, 0, stream()>>>(r, p);
  else if (direct)
    reduce_kernel<R, C, false, true><<<grid, block, 0, stream()>>>(r, p);
  else
    reduce_kernel<R, C, false, false><<<grid, block, 0, stream()>>>(r, p);
}

template <class R, class C>
void run(const ReduceArgs& a) {
  const TBlob& in = *a.in;
  const TBlob& out = *a.out;
  if (a.req == kNullOp) return;
  ::ndx::cuda::DeviceGuard guard(out.device.id);
  Shape kept_shape = Shape::filled(in.ndim(), 1), red_shape = Shape::filled(in.ndim(), 1);
  Shape kin = Shape::filled(in.ndim(), 0), kout = Shape::filled(in.ndim(), 0),
        rin = Shape::filled(in.ndim(), 0);
  int unit_reduced = -1;  // whether the input's smallest stride is along a reduced dim
  int64_t smallest = -1;
  for (int i = 0; i < in.ndim(); ++i) {
    if (in.shape[i] == 1) continue;
    const bool reduced = out.shape[i] == 1;
    const int64_t st = in.strides[i] < 0 ? -in.strides[i] : in.strides[i];
    if (smallest < 0 || st < smallest) {
      smallest = st;
      unit_reduced = reduced;
    }
    if (reduced) {
      red_shape[i] = in.shape[i];
      rin[i] = in.strides[i];
    } else {
      kept_shape[i] = in.shape[i];
      kin[i] = in.strides[i];
      kout[i] = out.strides[i];
    }
  }
  const NdIter<2> kept(kept_shape, {kin.data(), kout.data()});
  const NdIter<1> red(red_shape, {rin.data()});
  if (kept.ndim() > kMaxDims || red.ndim() > kMaxDims)
    not_implemented("[reduce] arrays with more than ", kMaxDims,
                    " unmergeable dims are not supported on gpu");
  ReducePlan<C> p;
  p.kept.nd = kept.ndim();
  for (int d = 0; d < p.kept.nd; ++d) {
    p.kept.dims[d] = kept.dim(d);
    p.kept.strides[0][d] = kept.stride(0, d);
    p.kept.strides[1][d] = kept.stride(1, d);
  }
  p.red.nd = red.ndim();
  for (int d = 0; d < p.red.nd; ++d) {
    p.red.dims[d] = red.dim(d);
    p.red.strides[0][d] = red.stride(0, d);
  }
  p.K = kept.size();
  p.M = red.size();
  if (p.K == 0) return;
  p.in = static_cast<const char*>(in.dptr);
  p.in_dtype = in.dtype;
  p.in_size = dtype_size(in.dtype);
  p.out = static_cast<char*>(out.dptr);
  p.out_dtype = out.dtype;
  p.out_size = dtype_size(out.dtype);
  p.add = a.req == kAddTo;
  if (a.initial) {
    p.has_init = true;
    p.init = cast_to<C>(*a.initial);
  }
  const R r = make_functor<R>(a.args);
  if (p.M == 0) {
    empty_kernel<R, C><<<grid_for(p.K, 256), 256, 0, stream()>>>(r, p);
    check_launch("reduce");
    return;
  }
  const bool inner = unit_reduced == 1;
  const bool direct = in.dtype == dtype_of<C>;
  const bool packed = outer_packs(p, inner, direct);
  dim3 block;
  if (inner) {
    block.x = pow2_at_least(p.M, 32, 256);
    block.y = 256 / block.x;
  } else {
    block.x = 32;
    block.y = 8;
  }
  const int64_t outs = inner ? block.y : block.x, reds = inner ? block.x : block.y;
  const int64_t per_block = packed ? outs * (16 / sizeof(C)) : outs;
  const int64_t blocks_k = (p.K + per_block - 1) / per_block;
  // Enough blocks for every multiprocessor a few times over; segments of at least 16 rounds.
  const int64_t want = int64_t{sm_count()} * 8;
  int64_t segs = blocks_k >= want ? 1 : (want + blocks_k - 1) / blocks_k;
  const int64_t max_segs = (p.M + reds * 16 - 1) / (reds * 16);
  segs = std::max<int64_t>(1, std::min<int64_t>({segs, max_segs, 65535}));
  p.seg_len = (p.M + segs - 1) / segs;
  p.segs = static_cast<int>((p.M + p.seg_len - 1) / p.seg_len);
  std::shared_ptr<Storage> partial;
  if (p.segs > 1) {
    partial = Storage::allocate(sizeof(C) * p.K * p.segs, out.device);
    p.partial = static_cast<C*>(partial->data());
  }
  if (blocks_k > 2147483647) not_implemented("[reduce] too many outputs for one launch on gpu");
  dim3 grid(static_cast<unsigned>(blocks_k), static_cast<unsigned>(p.segs));
  if (packed)
    reduce_outer_packed<R, C><<<grid, block, 0, stream()>>>(r, p);
  else
    launch(r, p, inner, direct, grid, block);
  check_launch("reduce");
  if (p.segs > 1) {
    combine_kernel<R, C><<<grid_for(p.K, 256), 256, 0, stream()>>>(r, p);
    check_launch("reduce");
  }
}

template <class R, class C>
void typed(const ReduceArgs& a) {
  if constexpr ((types_of<R>() & category_of<C>()) == 0)
    type_error("[reduce] this reduction does not take dtype ", a.compute);
  else
    run<R, C>(a);
}

}  // namespace

template <class R>
void reduce(const ReduceArgs& a) {
  if (is_complex(a.compute) || is_complex(a.in->dtype) || is_complex(a.out->dtype))
    fall_back_to_host("[reduce] complex arrays have no GPU reductions (dtype ", a.compute, ")");
  with_compute_type(a.compute, "reduce", [&](auto c) { typed<R, decltype(c)>(a); });
}

#define NDX_INSTANTIATE_(R) template void reduce<R>(const ReduceArgs&);
NDX_REDUCERS(NDX_INSTANTIATE_)
#undef NDX_INSTANTIATE_

}  // namespace ndx::kernel::gpu
