// The elementwise engine, compiled once per Highway target by the files that register
// elementwise ops. `elementwise<F>` runs functor F over ElementwiseArgs:
//
//   struct Exp {
//     static constexpr unsigned kTypes = kFloatTypes;   // optional; default: every dtype
//     template <class T> NDX_HD T operator()(T x) const { return exp(x); }
//   };
//
// The arity comes from F's call operator. The engine iterates the broadcast inputs and the
// output with NdIter (threads split the runs), reads each input into the compute type a
// block at a time (direct pointers when it already is contiguous and of that type; a single
// value when it is broadcast along the run), calls the functor's SIMD path (Vec<float> /
// Vec<double>) or its scalar path (integers, bool, and non-float results such as
// comparisons, left to the compiler's vectorizer), and stores with the output's dtype and
// request type.
#if defined(NDX_KERNEL_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_KERNEL_ELEMENTWISE_INL_H_
#undef NDX_KERNEL_ELEMENTWISE_INL_H_
#else
#define NDX_KERNEL_ELEMENTWISE_INL_H_
#endif

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

#include "kernel/cast.h"
#include "kernel/elementwise.h"
#include "kernel/functor_traits.h"
#include "kernel/iterator.h"
#include "kernel/parallel.h"
#include "kernel/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {

// A functor whose float path cannot take Vec (it branches on values) sets kScalarOnly.
template <class F>
constexpr bool scalar_only() {
  if constexpr (requires { F::kScalarOnly; })
    return F::kScalarOnly;
  else
    return false;
}

// Elements per block: what one input buffer holds (8 KiB of doubles).
inline constexpr int64_t kBlock = 1024;

template <class C>
struct Operand {
  const C* p;  // null: the operand is the single value s along this block
  C s{};       // initialized: the loops copy it for every operand (a garbage bool is UB)
};

// bool arrays are read and written as their bytes: GCC vectorizes none of the loops that
// load a bool (a bool `~x` ran at 0.7 ns an element), and does those of bytes (`!= 0` makes
// the bool, so any nonzero byte is True).
template <class T>
using Bytes = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

template <class F, class C, class R, unsigned kScalars, size_t... I>
HWY_INLINE void scalar_loop(const F& f, int64_t n, R* out, const Operand<C>* src,
                            std::index_sequence<I...>) {
  const Bytes<C>* p[] = {reinterpret_cast<const Bytes<C>*>(src[I].p)...};
  const C s[] = {src[I].s...};
  Bytes<R>* o = reinterpret_cast<Bytes<R>*>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = static_cast<Bytes<R>>(
        static_cast<R>(f(((kScalars >> I) & 1 ? s[I] : static_cast<C>(p[I][i]))...)));
}

template <class C, size_t I>
HWY_INLINE void fill_tail(C* dst, const C* src, int64_t m, size_t lanes) {
  for (size_t j = 0; j < lanes; ++j)
    dst[j] = src[std::min<int64_t>(static_cast<int64_t>(j), m - 1)];
}

template <class F, class C, unsigned kScalars, size_t... I>
HWY_INLINE void vector_loop(const F& functor, int64_t n, C* out, const Operand<C>* src, bool stream,
                            std::index_sequence<I...>) {
  // A local copy: Highway's stores may alias anything, so through the reference every
  // iteration reloaded the functor's parameters and converted them again (SGD's update ran
  // 3.9 instructions an element under AVX2; its lr, momentum and rescale are doubles).
  const F f = functor;
  using V = Vec<C>;
  const size_t lanes = V::lanes();
  const C* p[] = {src[I].p...};
  const V s[] = {V(src[I].s)...};
  int64_t i = 0;
  if (stream && reinterpret_cast<uintptr_t>(out) % (lanes * sizeof(C)) == 0) {
    // Non-temporal stores: a large output is not read for ownership first (a third less
    // memory traffic); the caller fences before the data is used.
    const typename V::D d;
    for (; i + static_cast<int64_t>(lanes) <= n; i += lanes)
      hn::Stream(f(((kScalars >> I) & 1 ? s[I] : V::load(p[I] + i))...).v, d, out + i);
  }
  for (; i + static_cast<int64_t>(lanes) <= n; i += lanes)
    f(((kScalars >> I) & 1 ? s[I] : V::load(p[I] + i))...).store(out + i);
  if (i == n) return;
  // The tail runs through the same vector code (so results never depend on where a thread's
  // range ends), on copies padded with the last element.
  constexpr size_t kMax = HWY_MAX_BYTES / sizeof(C);
  HWY_ALIGN C tail[sizeof...(I)][kMax];
  HWY_ALIGN C res[kMax];
  const int64_t m = n - i;
  ((((kScalars >> I) & 1) ? void() : fill_tail<C, I>(tail[I], p[I] + i, m, lanes)), ...);
  f(((kScalars >> I) & 1 ? s[I] : V::load(tail[I]))...).store(res);
  std::copy(res, res + m, out + i);
}

template <class F, class C, class R, unsigned kScalars, int N>
HWY_INLINE void compute_masked(const F& f, int64_t n, R* out, const Operand<C>* src, bool stream) {
  if constexpr (std::is_floating_point_v<C> && std::is_same_v<R, C> && !scalar_only<F>())
    vector_loop<F, C, kScalars>(f, n, out, src, stream, std::make_index_sequence<N>());
  else
    scalar_loop<F, C, R, kScalars>(f, n, out, src, std::make_index_sequence<N>());
}

// out[0:n] = f(src...). Operands broadcast along the block are passed as values; with more
// than two inputs they are expanded into `bufs` (so few loops are compiled), except the
// last two of three.
// Not inlined: the small-call path and the iterator's blocks share one copy of the loops (a
// call per block of up to kBlock elements); inlined into both, they doubled the code the op
// files compile.
template <class F, class C, class R, int N>
HWY_NOINLINE void compute_block(const F& f, int64_t n, R* out, Operand<C>* src, C (*bufs)[kBlock],
                                bool stream) {
  unsigned mask = 0;
  for (int k = 0; k < N; ++k) mask |= src[k].p ? 0u : 1u << k;
  if (mask == (1u << N) - 1) {  // every operand broadcast: one value
    R v;
    scalar_loop<F, C, R, (1u << N) - 1>(f, 1, &v, src, std::make_index_sequence<N>());
    std::fill(out, out + n, v);
    return;
  }
  if constexpr (N == 2) {
    if (mask == 1) return compute_masked<F, C, R, 1, N>(f, n, out, src, stream);
    if (mask == 2) return compute_masked<F, C, R, 2, N>(f, n, out, src, stream);
  } else if constexpr (N > 2) {
    // Two values after an array, clip's (x, lo, hi) and where's (c, 1.0, 0.0): expanding
    // them cost int32 clip half its speed.
    if constexpr (N == 3)
      if (mask == 6) return compute_masked<F, C, R, 6, N>(f, n, out, src, stream);
    for (int k = 0; k < N; ++k)
      if (!src[k].p) {
        std::fill(bufs[k], bufs[k] + n, src[k].s);
        src[k].p = bufs[k];
      }
  }
  compute_masked<F, C, R, 0, N>(f, n, out, src, stream);
}

template <class C, class R, int N>
struct Buffers {
  HWY_ALIGN C in[N][kBlock];
  HWY_ALIGN R out[kBlock];
  HWY_ALIGN char cast[kBlock * 16];  // kBlock of the widest dtype (complex128)
};

template <class F, class C, class R, int N>
void process_run(const F& f, const ElementwiseArgs& a, const Run<N + 1>& run, Buffers<C, R, N>& buf,
                 bool stream) {
  constexpr DType kC = dtype_of<C>, kR = dtype_of<R>;
  const TBlob& out = *a.out;
  const int64_t out_size = dtype_size(out.dtype);
  for (int64_t j = 0; j < run.length; j += kBlock) {
    const int64_t n = std::min(kBlock, run.length - j);
    Operand<C> src[N];
    for (int k = 0; k < N; ++k) {
      const TBlob& b = a.in[k];
      const int64_t st = run.stride[k + 1];
      const char* base = static_cast<const char*>(b.dptr) +
                         (run.offset[k + 1] + j * st) * static_cast<int64_t>(dtype_size(b.dtype));
      if (st == 0) {
        src[k].p = nullptr;
        convert(&src[k].s, kC, 1, base, b.dtype, 0, 1);
      } else if (st == 1 && b.dtype == kC) {
        src[k].p = reinterpret_cast<const C*>(base);
      } else {
        convert(buf.in[k], kC, 1, base, b.dtype, st, n);
        src[k].p = buf.in[k];
      }
    }
    const int64_t ost = run.stride[0];
    char* obase = static_cast<char*>(out.dptr) + (run.offset[0] + j * ost) * out_size;
    const bool direct = ost == 1 && out.dtype == kR && a.req != kAddTo;
    R* o = direct ? reinterpret_cast<R*>(obase) : buf.out;
    compute_block<F, C, R, N>(f, n, o, src, buf.in, stream && direct);
    if (direct) continue;
    if (a.req != kAddTo) {
      convert(obase, out.dtype, ost, buf.out, kR, 1, n);
    } else if (out.dtype == kR) {
      accumulate(obase, kR, ost, buf.out, n);
    } else {
      convert(buf.cast, out.dtype, 1, buf.out, kR, 1, n);
      accumulate(obase, out.dtype, ost, buf.cast, n);
    }
  }
}

// Small calls where every operand is contiguous in the compute type (or a single value) and
// the output is written directly: no iterator, no blocks, no threads.
template <class F, class C, class R, int N>
HWY_INLINE bool elementwise_direct(const F& f, const ElementwiseArgs& a) {
  const TBlob& out = *a.out;
  const int64_t n = out.size();
  if (n >= 2 * kGrain || a.req == kAddTo || out.dtype != dtype_of<R> || !out.is_contiguous())
    return false;
  Operand<C> src[N];
  for (int k = 0; k < N; ++k) {
    const TBlob& b = a.in[k];
    if (b.size() == 1 && b.dtype == dtype_of<C>) {
      src[k].p = nullptr;
      src[k].s = *static_cast<const C*>(b.dptr);
    } else if (b.dtype == dtype_of<C> && b.shape == out.shape && b.is_contiguous()) {
      src[k].p = static_cast<const C*>(b.dptr);
    } else {
      return false;
    }
  }
  C bufs[N > 2 ? N : 1][N > 2 ? kBlock : 1];
  if (N > 2 && n > kBlock) return false;
  compute_block<F, C, R, N>(f, n, static_cast<R*>(out.dptr), src,
                            reinterpret_cast<C(*)[kBlock]>(bufs), a.stream);
  if (a.stream) hwy::FlushStream();
  return true;
}

template <class F, class C, int N>
void elementwise_run(const ElementwiseArgs& a) {
  using R = decltype(result_of<F, C>(std::make_index_sequence<N>()));
  if (a.nin != N)
    raise(ErrorKind::kRuntimeError, "[elementwise] the functor takes ", N, " inputs, got ", a.nin);
  const TBlob& out = *a.out;
  if (a.req == kNullOp || out.size() == 0) return;
  const F f = make_functor<F>(a.args);
  if (elementwise_direct<F, C, R, N>(f, a)) return;
  if (out.ndim() > Shape::kMaxDims) raise(ErrorKind::kValueError, "[elementwise] too many dims");
  int64_t bst[N][Shape::kMaxDims];
  std::array<const int64_t*, N + 1> strides;
  strides[0] = out.strides.data();
  for (int k = 0; k < N; ++k) {
    broadcast_strides_into(a.in[k].shape, a.in[k].strides, out.shape, bst[k]);
    strides[k + 1] = bst[k];
  }
  using Iter = NdIter<N + 1>;
  using RunT = Run<N + 1>;
  const Iter it(out.shape, strides);
  const int64_t out_bytes = it.size() * static_cast<int64_t>(sizeof(R));
  int64_t working_set = out_bytes;
  for (int k = 0; k < N; ++k)
    if (a.in[k].size() == it.size())  // (a broadcast input is read from the cache)
      working_set += a.in[k].size() * static_cast<int64_t>(dtype_size(a.in[k].dtype));
  const bool stream = out_bytes >= kStreamBytes ||
                      (out_bytes >= kStreamMinBytes && working_set >= kStreamWorkingSetBytes);
  parallel_for(it.size(), kGrain, [&](int64_t begin, int64_t end) {
    Buffers<C, R, N> buf;
    it.for_each_run(begin, end,
                    [&](const RunT& run) { process_run<F, C, R, N>(f, a, run, buf, stream); });
    if (stream) hwy::FlushStream();
  });
}

template <class F, class C>
void elementwise_typed(const ElementwiseArgs& a) {
  if constexpr ((types_of<F>() & category_of<C>()) == 0) {
    type_error("[elementwise] this kernel does not take dtype ", a.compute);
  } else {
    static_assert(arity<F, C>() >= 1, "a functor takes 1 to 5 arguments of the compute type");
    elementwise_run<F, C, arity<F, C>()>(a);
  }
}

// The registered entry.
// The registered entry: every target's for float compute types, AVX2's or the static
// target's for the others (see compiled_for_target).
template <class F>
void elementwise(const ElementwiseArgs& a) {
  with_any_compute_type(a.compute, "elementwise", [&](auto c) {
    if constexpr (compiled_for_target<decltype(c)>())
      elementwise_typed<F, decltype(c)>(a);
    else
      raise(ErrorKind::kRuntimeError, "[elementwise] dtype ", a.compute,
            " has no kernel compiled for ", hwy::TargetName(HWY_TARGET), "'s");
  });
}

// A contiguous block of a fused chain (see BlockFn): compute_block, as the general entry's
// direct path runs it.
template <class F, class C>
void elementwise_block_typed(const FunctorArgs& args, const BlockOperand* in, void* out, int64_t n,
                             bool stream) {
  constexpr int N = arity<F, C>();
  const F f = make_functor<F>(args);
  Operand<C> src[N];
  for (int k = 0; k < N; ++k) {
    if (in[k].scalar) {
      src[k].p = nullptr;
      src[k].s = *static_cast<const C*>(in[k].p);
    } else {
      src[k].p = static_cast<const C*>(in[k].p);
    }
  }
  if constexpr (N > 2) {  // single values are expanded into buffers of kBlock
    HWY_ALIGN C bufs[N][kBlock];
    for (int64_t i = 0; i < n; i += kBlock) {
      Operand<C> part[N];
      for (int k = 0; k < N; ++k) part[k] = {src[k].p ? src[k].p + i : nullptr, src[k].s};
      compute_block<F, C, C, N>(f, std::min(kBlock, n - i), static_cast<C*>(out) + i, part, bufs,
                                stream);
    }
  } else {
    compute_block<F, C, C, N>(f, n, static_cast<C*>(out), src, nullptr, stream);
  }
  if (stream) hwy::FlushStream();
}

template <class F, class C>
constexpr bool block_supported() {
  if constexpr ((types_of<F>() & kFloatTypes) == 0 || arity<F, C>() == 0) {
    return false;
  } else {
    using R = decltype(result_of<F, C>(std::make_index_sequence<arity<F, C>()>()));
    return std::is_same_v<R, C>;
  }
}

// The registered block resolver.
template <class F>
BlockFn elementwise_block(DType compute) {
  if constexpr (block_supported<F, float>())
    if (compute == DType::kFloat32) return &elementwise_block_typed<F, float>;
  if constexpr (block_supported<F, double>())
    if (compute == DType::kFloat64) return &elementwise_block_typed<F, double>;
  return nullptr;
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NDX_KERNEL_ELEMENTWISE_INL_H_
