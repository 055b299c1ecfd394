// The elementwise engine for CUDA: `gpu::elementwise<F>` runs the same functors as the CPU
// engine (kernel/elementwise-inl.h) over the same ElementwiseArgs. Two kernels:
//   - contiguous: every input contiguous in the compute type (or a single element), the output
//     contiguous in the result type and written, not added to: grid-stride, 16-byte packs;
//   - general: any strides, broadcasting, dtypes cast on load and store, add-to requests;
//     dims are coalesced on the host first.
#pragma once
#include <array>
#include <utility>

#include "kernel/cuda/common.cuh"
#include "kernel/elementwise.h"
#include "kernel/functor_traits.h"
#include "kernel/host_fallback.h"
#include "kernel/iterator.h"

namespace ndx::kernel::gpu {

template <class C, int N>
struct ContigInputs {
  const C* p[N];
  int64_t step[N];  // 1, or 0 for a single element read by every thread
};

template <class T, int K>
struct alignas(sizeof(T) * K) Pack {
  T v[K];
};

template <class F, class C, class R, int N, size_t... I>
__device__ __forceinline__ R call_at(const F& f, const ContigInputs<C, N>& in, int64_t i,
                                     std::index_sequence<I...>) {
  return static_cast<R>(f(in.p[I][i * in.step[I]]...));
}

template <class F, class C, class R, int N>
__global__ void contiguous_kernel(F f, R* out, ContigInputs<C, N> in, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = call_at<F, C, R, N>(f, in, i, std::make_index_sequence<N>());
}

// K elements per thread through 16-byte loads and stores; every pointer is aligned to a pack
// and n is a multiple of K (the caller runs the tail with contiguous_kernel).
template <class F, class C, class R, int N, int K, size_t... I>
__device__ __forceinline__ void packed_step(const F& f, R* out, const ContigInputs<C, N>& in,
                                            int64_t j, std::index_sequence<I...>) {
  Pack<C, K> x[N];
  for (int k = 0; k < N; ++k) {
    if (in.step[k])
      x[k] = reinterpret_cast<const Pack<C, K>*>(in.p[k])[j];
    else
      for (int e = 0; e < K; ++e) x[k].v[e] = in.p[k][0];
  }
  Pack<R, K> y;
#pragma unroll
  for (int e = 0; e < K; ++e) y.v[e] = static_cast<R>(f(x[I].v[e]...));
  reinterpret_cast<Pack<R, K>*>(out)[j] = y;
}

template <class F, class C, class R, int N, int K>
__global__ void packed_kernel(F f, R* out, ContigInputs<C, N> in, int64_t packs) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t j = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; j < packs; j += stride)
    packed_step<F, C, R, N, K>(f, out, in, j, std::make_index_sequence<N>());
}

template <int N>
struct StridedOperands {
  char* out;
  DType out_dtype;
  const char* in[N];
  DType in_dtype[N];
  int64_t size[N + 1];  // element sizes in bytes
};

template <class F, class C, class R, int N, size_t... I>
__device__ __forceinline__ R call_strided(const F& f, const StridedOperands<N>& op,
                                          const int64_t* off, std::index_sequence<I...>) {
  return static_cast<R>(f(load_as<C>(op.in[I] + off[I + 1] * op.size[I + 1], op.in_dtype[I])...));
}

template <class F, class C, class R, int N>
__global__ void strided_kernel(F f, StridedOperands<N> op, Geometry<N + 1> g, int64_t n, bool add) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[N + 1];
    g.offsets(i, off);
    const R v = call_strided<F, C, R, N>(f, op, off, std::make_index_sequence<N>());
    store_as(op.out + off[0] * op.size[0], op.out_dtype, v, add);
  }
}

template <class F, class C, class R, int N>
bool try_contiguous(const F& f, const ElementwiseArgs& a) {
  const TBlob& out = *a.out;
  if (a.req == kAddTo || out.dtype != dtype_of<R> || !out.is_contiguous()) return false;
  ContigInputs<C, N> in;
  for (int k = 0; k < N; ++k) {
    const TBlob& b = a.in[k];
    if (b.dtype != dtype_of<C>) return false;
    if (b.size() == 1)
      in.step[k] = 0;
    else if (b.shape == out.shape && b.is_contiguous())
      in.step[k] = 1;
    else
      return false;
    in.p[k] = static_cast<const C*>(b.dptr);
  }
  const int64_t n = out.size();
  R* o = static_cast<R*>(out.dptr);
  constexpr int K = 16 / (sizeof(C) > sizeof(R) ? sizeof(C) : sizeof(R));
  bool aligned = reinterpret_cast<uintptr_t>(o) % (sizeof(R) * K) == 0;
  for (int k = 0; k < N; ++k)
    aligned &= !in.step[k] || reinterpret_cast<uintptr_t>(in.p[k]) % (sizeof(C) * K) == 0;
  int64_t done = 0;
  if constexpr (K > 1) {
    if (aligned && n >= K) {
      const int64_t packs = n / K;
      packed_kernel<F, C, R, N, K><<<grid_for(packs, 256), 256, 0, stream()>>>(f, o, in, packs);
      done = packs * K;
    }
  }
  if (done < n) {
    ContigInputs<C, N> rest = in;
    for (int k = 0; k < N; ++k) rest.p[k] += done * in.step[k];
    contiguous_kernel<F, C, R, N>
        <<<grid_for(n - done, 256), 256, 0, stream()>>>(f, o + done, rest, n - done);
  }
  check_launch("elementwise");
  return true;
}

template <class F, class C, int N>
void run(const ElementwiseArgs& a) {
  using R = decltype(result_of<F, C>(std::make_index_sequence<N>()));
  if (a.nin != N)
    raise(ErrorKind::kRuntimeError, "[elementwise] the functor takes ", N, " inputs, got ", a.nin);
  const TBlob& out = *a.out;
  if (a.req == kNullOp || out.size() == 0) return;
  ::ndx::cuda::DeviceGuard guard(out.device.id);
  const F f = make_functor<F>(a.args);
  if (try_contiguous<F, C, R, N>(f, a)) return;
  if (out.ndim() > Shape::kMaxDims) raise(ErrorKind::kValueError, "[elementwise] too many dims");
  int64_t bst[N][Shape::kMaxDims];
  std::array<const int64_t*, N + 1> strides;
  strides[0] = out.strides.data();
  for (int k = 0; k < N; ++k) {
    broadcast_strides_into(a.in[k].shape, a.in[k].strides, out.shape, bst[k]);
    strides[k + 1] = bst[k];
  }
  const NdIter<N + 1> it(out.shape, strides);
  if (it.ndim() > kMaxDims)
    not_implemented("[elementwise] arrays whose strides leave more than ", kMaxDims,
                    " dims after merging are not supported on gpu");
  Geometry<N + 1> g;
  g.nd = it.ndim();
  for (int d = 0; d < g.nd; ++d) {
    g.dims[d] = it.dim(d);
    for (int k = 0; k <= N; ++k) g.strides[k][d] = it.stride(k, d);
  }
  StridedOperands<N> op;
  op.out = static_cast<char*>(out.dptr);
  op.out_dtype = out.dtype;
  op.size[0] = dtype_size(out.dtype);
  for (int k = 0; k < N; ++k) {
    op.in[k] = static_cast<const char*>(a.in[k].dptr);
    op.in_dtype[k] = a.in[k].dtype;
    op.size[k + 1] = dtype_size(a.in[k].dtype);
  }
  const int64_t n = it.size();
  strided_kernel<F, C, R, N><<<grid_for(n, 256), 256, 0, stream()>>>(f, op, g, n, a.req == kAddTo);
  check_launch("elementwise");
}

template <class F, class C>
void typed(const ElementwiseArgs& a) {
  if constexpr ((types_of<F>() & category_of<C>()) == 0) {
    type_error("[elementwise] this kernel does not take dtype ", a.compute);
  } else {
    static_assert(arity<F, C>() >= 1, "a functor takes 1 to 5 arguments of the compute type");
    run<F, C, arity<F, C>()>(a);
  }
}

// Complex operands have no GPU kernels: their ops run on the host (kernel/host_fallback.h).
inline void require_real_operands(const ElementwiseArgs& a) {
  bool complex_operand = is_complex(a.compute) || is_complex(a.out->dtype);
  for (int k = 0; k < a.nin; ++k) complex_operand |= is_complex(a.in[k].dtype);
  if (complex_operand)
    fall_back_to_host("[elementwise] complex arrays have no GPU kernels (dtype ", a.compute, ")");
}

template <class F>
void elementwise(const ElementwiseArgs& a) {
  require_real_operands(a);
  with_compute_type(a.compute, "elementwise", [&](auto c) { typed<F, decltype(c)>(a); });
}

}  // namespace ndx::kernel::gpu
