// The reduction engine, compiled once per Highway target by the files that register
// reductions. `reduce<R>` reduces ReduceArgs::in over the dims where ReduceArgs::out has size
// 1, with reducer R (kernel/math/reducers-inl.h):
//
//   - the input and a contiguous accumulator (stride 0 along reduced dims) are walked together
//     by NdIter; a run along a reduced dim is folded into one accumulator ("horizontal": a
//     pairwise tree of SIMD partial sums for floats, NumPy's accuracy), a run along a kept dim
//     is combined lane by lane into a row of accumulators ("vertical", SIMD too);
//   - threads split a kept dim (disjoint accumulators), or, for a reduction to one value,
//     fixed blocks of the input whose partials are combined in order: results never depend on
//     the thread count;
//   - the input is cast to the accumulation type a block at a time; R::finalize(acc, count),
//     if present, runs before the store, which honours the output's dtype, strides and req.
//
// `arg_reduce<ArgMaxTag>` / `<ArgMinTag>` find first-occurrence extrema (NaN wins).
#if defined(NDX_KERNEL_REDUCE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_KERNEL_REDUCE_INL_H_
#undef NDX_KERNEL_REDUCE_INL_H_
#else
#define NDX_KERNEL_REDUCE_INL_H_
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "kernel/cast.h"
#include "kernel/elementwise-inl.h"
#include "kernel/iterator.h"
#include "kernel/parallel.h"
#include "kernel/reduce.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {

#include "kernel/math/reducers-inl.h"

template <class R>
constexpr bool has_finalize() {
  return requires(const R& r) { r.finalize(0.0, int64_t{0}); };
}

template <class R, class C>
HWY_INLINE C start_value(const ReduceArgs& a) {
  if (!a.initial) return R::template identity<C>();
  const double init = *a.initial;
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {  // (bool: v != 0)
    // An integer initial= arrives as a double: 2**63 - 1 (iinfo(int64).max) rounds to 2**63,
    // past the range (the op refuses values really outside it), and a cast would wrap.
    if (init >= static_cast<double>(std::numeric_limits<C>::max()))
      return std::numeric_limits<C>::max();
    if (init <= static_cast<double>(std::numeric_limits<C>::lowest()))
      return std::numeric_limits<C>::lowest();
  }
  C v;
  convert(&v, dtype_of<C>, 1, &init, DType::kFloat64, 1, 1);
  return v;
}

// Leaf of the pairwise tree: elements one SIMD pass folds before halves are combined.
inline constexpr int64_t kLeaf = 1024;

template <class R>
constexpr bool is_exact() {
  if constexpr (requires { R::kExact; })
    return R::kExact;
  else
    return false;
}

template <class R, class V>
constexpr bool has_fast() {
  return requires(const R& r, V v) { r.fast(v, v); };
}

// Integer max / min in Highway's lanes (bool's bytes, 0 or 1, as uint8_t): which of the two R
// is follows from the value that absorbs it (C's max for max). Integers have no NaN, so the
// plain instruction is exact (the compiler vectorized neither bool's loop nor int64's).
template <class C>
using IntLane = std::conditional_t<std::is_same_v<C, bool>, uint8_t, C>;

template <class R, class C>
constexpr bool is_int_extremum() {
  if constexpr (std::is_integral_v<C> && requires { R::template absorbing<C>(); })
    return true;
  else
    return false;
}

template <class R, class C, class V>
HWY_INLINE V int_extremum(V a, V b) {
  constexpr bool kMax = R::template absorbing<C>() == std::numeric_limits<C>::max();
  if constexpr (std::is_arithmetic_v<V>)
    return kMax ? std::max(a, b) : std::min(a, b);
  else if constexpr (kMax)
    return hn::Max(a, b);
  else
    return hn::Min(a, b);
}

// The max / min of x[0:n) from s, 8 blocks at a time, stopping once the value that absorbs
// everything is reached (a bool max soon after its first true, as NumPy's). A check every
// block cost int32 max about 8% single-threaded.
template <class R, class C>
HWY_INLINE C fold_int_extremum(const C* x, int64_t n, C s) {
  using L = IntLane<C>;
  const hn::ScalableTag<L> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const L* xl = reinterpret_cast<const L*>(x);
  const auto stop = hn::Set(d, static_cast<L>(R::template absorbing<C>()));
  auto a0 = hn::Set(d, static_cast<L>(s)), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  while (i + 4 * lanes <= n) {
    const int64_t end = std::min(n, i + 8 * kBlock) - 4 * lanes;
    for (; i <= end; i += 4 * lanes) {
      a0 = int_extremum<R, C>(a0, hn::LoadU(d, xl + i));
      a1 = int_extremum<R, C>(a1, hn::LoadU(d, xl + i + lanes));
      a2 = int_extremum<R, C>(a2, hn::LoadU(d, xl + i + 2 * lanes));
      a3 = int_extremum<R, C>(a3, hn::LoadU(d, xl + i + 3 * lanes));
    }
    // (Into a new variable: assigning it to a0 made GCC keep a0 on the stack in the loop.)
    const auto all = int_extremum<R, C>(int_extremum<R, C>(a0, a1), int_extremum<R, C>(a2, a3));
    if (!hn::AllFalse(d, hn::Eq(all, stop))) return R::template absorbing<C>();
  }
  a0 = int_extremum<R, C>(int_extremum<R, C>(a0, a1), int_extremum<R, C>(a2, a3));
  constexpr size_t kMax = HWY_MAX_BYTES / sizeof(L);
  HWY_ALIGN L lane[kMax];
  hn::Store(a0, d, lane);
  L r = lane[0];
  for (int64_t l = 1; l < lanes; ++l) r = int_extremum<R, C>(r, lane[l]);
  for (; i < n; ++i) r = int_extremum<R, C>(r, xl[i]);
  return static_cast<C>(r);
}

// The leaf of fold_contig with R::fast when it has one: a running sum of the inputs turns NaN
// on any NaN input (or on infinities of both signs), and then the exact combine redoes it.
template <class R, class C, class V>
HWY_INLINE bool fold_leaf_fast(const R& r, const C* x, int64_t n, V* out) {
  if constexpr (has_fast<R, V>()) {
    const int64_t lanes = static_cast<int64_t>(V::lanes());
    const V id(R::template identity<C>());
    V a0 = id, a1 = id, a2 = id, a3 = id, chk(C(0)), chk2(C(0));
    int64_t i = 0;
    for (; i + 4 * lanes <= n; i += 4 * lanes) {
      const V x0 = V::load(x + i), x1 = V::load(x + i + lanes), x2 = V::load(x + i + 2 * lanes),
              x3 = V::load(x + i + 3 * lanes);
      a0 = r.fast(a0, x0);
      a1 = r.fast(a1, x1);
      a2 = r.fast(a2, x2);
      a3 = r.fast(a3, x3);
      chk = chk + (x0 + x1);
      chk2 = chk2 + (x2 + x3);
    }
    for (; i + lanes <= n; i += lanes) {
      const V xi = V::load(x + i);
      a0 = r.fast(a0, xi);
      chk = chk + xi;
    }
    if (!hn::AllFalse(typename V::D(), is_nan(chk + chk2).m)) return false;
    *out = r.fast(r.fast(a0, a1), r.fast(a2, a3));
    return true;
  } else {
    return false;
  }
}

// The lanes of x[0:n) for n a multiple of the vector length: eight accumulators a lane. With
// four, a sum was bound by the add's latency (each accumulator took two dependent adds per
// eight loads): rows of 1024 float32 summed at 0.53 ms per 4096 rows against max's 0.39.
template <class R, class C>
HWY_INLINE Vec<C> fold_leaf(const R& r, const C* x, int64_t n) {
  using V = Vec<C>;
  V a0;
  if (fold_leaf_fast(r, x, n, &a0)) return a0;
  const int64_t lanes = static_cast<int64_t>(V::lanes());
  const V id(R::template identity<C>());
  V a1 = id, a2 = id, a3 = id, a4 = id, a5 = id, a6 = id, a7 = id;
  a0 = id;
  int64_t i = 0;
  // Kept a loop: GCC unrolls a leaf of known size (at most kLeaf) completely, and sum over
  // 64 MB then ran at 11 GB/s against 27 as a loop (Zen 4; why was not pinned down: the
  // unrolled code read the leaf's lines out of order in one build, in order in another).
#pragma GCC unroll 1
  for (; i + 8 * lanes <= n; i += 8 * lanes) {
    a0 = r(a0, V::load(x + i));
    a1 = r(a1, V::load(x + i + lanes));
    a2 = r(a2, V::load(x + i + 2 * lanes));
    a3 = r(a3, V::load(x + i + 3 * lanes));
    a4 = r(a4, V::load(x + i + 4 * lanes));
    a5 = r(a5, V::load(x + i + 5 * lanes));
    a6 = r(a6, V::load(x + i + 6 * lanes));
    a7 = r(a7, V::load(x + i + 7 * lanes));
  }
  for (; i < n; i += lanes) a0 = r(a0, V::load(x + i));
  return r(r(r(a0, a1), r(a2, a3)), r(r(a4, a5), r(a6, a7)));
}

// The reduction of x[0:n) (from R's identity), pairwise over leaves of kLeaf elements whose
// lanes stay vectors: leaf 2j joins leaf 2j + 1, then pairs of pairs, ... (a binary counter;
// the tree of recursive halving for a power-of-two count), and the lanes are added at the
// end: no horizontal sum per leaf, no recursion.
template <class R, class C>
C fold_contig(const R& r, const C* x, int64_t n) {
  if constexpr (std::is_floating_point_v<C>) {
    using V = Vec<C>;
    const int64_t lanes = static_cast<int64_t>(V::lanes());
    V a0;
    int64_t i = 0;
    if (n > kLeaf && !is_exact<R>()) {
      V stack[64];  // depth <= log2(n / kLeaf) + 1
      int depth = 0;
      for (int64_t leaves = 0; i + kLeaf <= n; i += kLeaf, ++leaves) {
        V v = fold_leaf(r, x + i, kLeaf);
        for (int64_t c = leaves; c & 1; c >>= 1) v = r(stack[--depth], v);
        stack[depth++] = v;
      }
      a0 = stack[--depth];
      while (depth > 0) a0 = r(stack[--depth], a0);
      const int64_t rest = (n - i) / lanes * lanes;
      if (rest > 0) a0 = r(a0, fold_leaf(r, x + i, rest));
      i += rest;
    } else {
      i = n / lanes * lanes;
      a0 = fold_leaf(r, x, i);
    }
    constexpr size_t kMax = HWY_MAX_BYTES / sizeof(C);
    HWY_ALIGN C lane[kMax];
    a0.store(lane);
    // The lanes pairwise (a tree of depth log2(lanes)): one after the other, they were a
    // chain of dependent adds as long as a row of 1024's whole vector loop.
    for (int64_t w = lanes / 2; w >= 1; w /= 2)
      for (int64_t l = 0; l < w; ++l) lane[l] = r(lane[l], lane[l + w]);
    C s = lane[0];
    for (; i < n; ++i) s = r(s, x[i]);
    return s;
  } else {
    if constexpr (is_complex_v<C> && !is_exact<R>()) {  // pairwise, as for floats
      if (n > kLeaf) return r(fold_contig(r, x, n / 2), fold_contig(r, x + n / 2, n - n / 2));
    }
    C s = R::template identity<C>();
    if constexpr (is_int_extremum<R, C>()) return fold_int_extremum<R>(x, n, s);
    for (int64_t i = 0; i < n; ++i) s = r(s, x[i]);
    return s;
  }
}

// The same over n elements of any dtype and stride, cast to C a block at a time.
template <class R, class C>
C fold_strided(const R& r, const char* x, DType t, int64_t stride, int64_t n, C* buf) {
  if (n > kBlock) {
    const int64_t half = (n / 2 + kBlock - 1) / kBlock * kBlock;
    const int64_t step = half * stride * static_cast<int64_t>(dtype_size(t));
    return r(fold_strided(r, x, t, stride, half, buf),
             fold_strided(r, x + step, t, stride, n - half, buf));
  }
  convert(buf, dtype_of<C>, 1, x, t, stride, n);
  return fold_contig(r, buf, n);
}

// acc[i] = r(acc[i], x[i]) for i < n.
template <class R, class C>
HWY_INLINE void combine_rows(const R& r, C* acc, const C* x, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_floating_point_v<C>) {
    using V = Vec<C>;
    const int64_t lanes = static_cast<int64_t>(V::lanes());
    for (; i + lanes <= n; i += lanes) r(V::load(acc + i), V::load(x + i)).store(acc + i);
  } else if constexpr (is_int_extremum<R, C>()) {
    using L = IntLane<C>;
    const hn::ScalableTag<L> d;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    L* al = reinterpret_cast<L*>(acc);
    const L* xl = reinterpret_cast<const L*>(x);
    for (; i + lanes <= n; i += lanes)
      hn::StoreU(int_extremum<R, C>(hn::LoadU(d, al + i), hn::LoadU(d, xl + i)), d, al + i);
  }
  for (; i < n; ++i) acc[i] = r(acc[i], x[i]);
}

// combine_rows with R::fast (max / min), for a row of accumulators that holds no NaN. If the
// row's running sum turns NaN (a NaN in it, or infinities of both signs), every accumulator
// whose element is NaN becomes NaN, which is what the exact combine gives, and it returns
// false: the accumulators may now hold NaN, which `fast` can drop, so later rows take
// combine_rows. One row a pass reads memory as one stream (see four_rows_a_pass).
template <class R, class C>
HWY_INLINE bool combine_row_fast(const R& r, C* acc, const C* x, int64_t n) {
  using V = Vec<C>;
  const int64_t lanes = static_cast<int64_t>(V::lanes());
  V chk0(C(0)), chk1(C(0));
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const V v0 = V::load(x + i), v1 = V::load(x + i + lanes);
    r.fast(V::load(acc + i), v0).store(acc + i);
    r.fast(V::load(acc + i + lanes), v1).store(acc + i + lanes);
    chk0 = chk0 + v0;
    chk1 = chk1 + v1;
  }
  for (; i + lanes <= n; i += lanes) {
    const V v0 = V::load(x + i);
    r.fast(V::load(acc + i), v0).store(acc + i);
    chk0 = chk0 + v0;
  }
  for (int64_t j = i; j < n; ++j) acc[j] = r(acc[j], x[j]);
  if (hn::AllFalse(typename V::D(), is_nan(chk0 + chk1).m)) return true;
  for (int64_t j = 0; j < i; ++j)
    if (x[j] != x[j]) acc[j] = x[j];
  return false;
}

// combine_rows of the four rows x, x + stride, x + 2 stride, x + 3 stride in turn, in one pass
// over acc (the same operations in the same order; max / min may differ in the sign of a
// zero result): a quarter of the accumulator loads and stores, which bounded sum(axis=0) of
// cached data.
template <class R, class C>
HWY_INLINE void combine_four_rows(const R& r, C* acc, const C* x, int64_t stride, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_floating_point_v<C>) {
    using V = Vec<C>;
    const int64_t lanes = static_cast<int64_t>(V::lanes());
    const C *x1 = x + stride, *x2 = x1 + stride, *x3 = x2 + stride;
    for (; i + lanes <= n; i += lanes) {
      const V a = V::load(acc + i), v0 = V::load(x + i), v1 = V::load(x1 + i), v2 = V::load(x2 + i),
              v3 = V::load(x3 + i);
      if constexpr (has_fast<R, V>()) {
        // max / min: the plain instruction where none of the five is NaN (a NaN, or infinities
        // of both signs, make the sum NaN), a quarter of the exact combine's instructions.
        if (hn::AllFalse(typename V::D(), is_nan((a + v0) + ((v1 + v2) + v3)).m)) {
          r.fast(r.fast(r.fast(r.fast(a, v0), v1), v2), v3).store(acc + i);
          continue;
        }
      }
      r(r(r(r(a, v0), v1), v2), v3).store(acc + i);
    }
  }
  if (i == 0) {  // no vector path for C
    for (int k = 0; k < 4; ++k) combine_rows(r, acc, x + k * stride, n);
    return;
  }
  for (; i < n; ++i)
    acc[i] = r(r(r(r(acc[i], x[i]), x[i + stride]), x[i + 2 * stride]), x[i + 3 * stride]);
}

// Folds the runs of `it` (operand 0: accumulators, 1: input) in [begin, end) into acc.
template <class R, class C>
void fold_runs(const R& r, const NdIter<2>& it, int64_t begin, int64_t end, C* acc, const char* in,
               DType t, const std::array<int64_t, 2>& base) {
  constexpr DType kC = dtype_of<C>;
  const int64_t size = dtype_size(t);
  HWY_ALIGN C buf[kBlock];
  it.for_each_run(begin, end, [&](const Run<2>& run) {
    C* a = acc + base[0] + run.offset[0];
    const char* x = in + (base[1] + run.offset[1]) * size;
    if (run.stride[0] == 0) {  // horizontal: the run folds into one accumulator
      const C v = (t == kC && run.stride[1] == 1)
                      ? fold_contig(r, reinterpret_cast<const C*>(x), run.length)
                      : fold_strided(r, x, t, run.stride[1], run.length, buf);
      *a = r(*a, v);
      return;
    }
    for (int64_t j = 0; j < run.length; j += kBlock) {  // vertical (accumulator stride 1)
      const int64_t n = std::min(kBlock, run.length - j);
      const char* xj = x + j * run.stride[1] * size;
      const C* xs = reinterpret_cast<const C*>(xj);
      if (!(t == kC && run.stride[1] == 1)) {
        convert(buf, kC, 1, xj, t, run.stride[1], n);
        xs = buf;
      }
      combine_rows(r, a + j * run.stride[0], xs, n);
    }
  });
}

// Whether a reduction over the rows of a matrix combines four rows per pass: integers do;
// floats take one row at a time, reading memory as one stream. For sums, sum(axis=0) of
// 4096 x 1024 float32 not in the cache went from 0.78-0.82x NumPy's time to 0.94-1.02x, and in
// the bench's warm rows from 0.95-1.01x to 1.10-1.22x (one thread, the AVX-512 host); max /
// min followed (combine_row_fast).
template <class R, class C>
constexpr bool four_rows_a_pass() {
  if constexpr (std::is_floating_point_v<C>) {
    return false;
  } else {
    return true;
  }
}

// A full reduction splits its input into blocks of this many elements; a reduction over the
// outermost dim into blocks of rows of about kRowBlock elements, and at most kMaxRowBlocks of
// them: their partial rows take blocks x (kept elements) of memory, which without the cap
// reached half the input's size (sum(axis=0) of 1000 x 131000 float32 allocated 250 MB).
inline constexpr int64_t kFullBlock = 1 << 16, kRowBlock = 1 << 18, kMaxRowBlocks = 32;

// Rows of partial accumulators for a reduction over the rows of `x`, each starting at the
// offset of x within a 4 KiB page (rows of at least a page are padded to whole pages). A CPU
// takes a load whose address matches a pending store's in the low 12 bits for dependent on
// it; an accumulator row just above the input's offset made every vector's load wait for the
// previous vector's store (4096 x 1024 float32 summed over axis 0 from the cache: 0.39 ms at
// an offset of 64 bytes, 0.27 at 0, in a standalone test on the AVX-512 host).
template <class C>
class PartialRows {
 public:
  PartialRows(int64_t rows, int64_t m, const void* x) {
    constexpr int64_t kPage = 4096;
    const int64_t bytes = m * static_cast<int64_t>(sizeof(C));
    stride_ = bytes < kPage ? m : (bytes + kPage - 1) / kPage * kPage / sizeof(C);
    raw_.reset(new char[static_cast<size_t>(rows * stride_ * sizeof(C) + 2 * kPage)]);
    const auto base = (reinterpret_cast<uintptr_t>(raw_.get()) + kPage - 1) & ~uintptr_t{kPage - 1};
    const auto offset = reinterpret_cast<uintptr_t>(x) & (kPage - 1) & ~uintptr_t{alignof(C) - 1};
    first_ = reinterpret_cast<C*>(base + offset);
  }
  C* row(int64_t k) const { return first_ + k * stride_; }

 private:
  std::unique_ptr<char[]> raw_;
  C* first_;
  int64_t stride_;
};

template <class R, class C>
void reduce_typed(const ReduceArgs& a) {
  if constexpr ((types_of<R>() & category_of<C>()) == 0) {
    type_error("[reduce] this reduction does not take dtype ", a.compute);
  } else {
    const R r = make_functor<R>(a.args);
    const TBlob& in = *a.in;
    const TBlob& out = *a.out;
    if (a.req == kNullOp || out.size() == 0) return;
    const int nd = in.ndim();
    int64_t count = 1;
    Shape acc_strides = Shape::filled(nd, 0);
    bool out_dense = out.dtype == dtype_of<C> && a.req != kAddTo;
    for (int d = nd - 1, s = 1; d >= 0; --d) {
      if (out.shape[d] == in.shape[d]) {
        acc_strides[d] = out.shape[d] == 1 ? 0 : s;
        if (out.shape[d] != 1 && out.strides[d] != s) out_dense = false;
        s *= static_cast<int>(out.shape[d]);
      } else {
        count *= in.shape[d];
      }
    }
    const int64_t m = out.size();
    std::unique_ptr<C[]> owned;
    C* acc = reinterpret_cast<C*>(out.dptr);
    if (!out_dense) {
      owned.reset(new C[static_cast<size_t>(m)]);
      acc = owned.get();
    }
    const C start = start_value<R, C>(a);
    std::fill(acc, acc + m, start);
    const char* x = static_cast<const char*>(in.dptr);
    const NdIter<2> it(in.shape, {acc_strides.data(), in.strides.data()});
    if (it.size() > 0) {
      if (m == 1) {
        // One result: fixed blocks, partials folded in order.
        const int64_t blocks = (it.size() + kFullBlock - 1) / kFullBlock;
        std::unique_ptr<C[]> partial(new C[static_cast<size_t>(blocks)]);
        parallel_for(it.size(), kGrain, [&](int64_t b, int64_t e) {
          for (int64_t k = b / kFullBlock; k * kFullBlock < e; ++k) {
            if (k * kFullBlock < b) continue;  // owned by the previous range
            C p = R::template identity<C>();
            fold_runs(r, it, k * kFullBlock, std::min(it.size(), (k + 1) * kFullBlock), &p, x,
                      in.dtype, {0, 0});
            partial[k] = p;
          }
        });
        acc[0] = r(acc[0], fold_contig(r, partial.get(), blocks));
      } else if (it.stride(0, 0) == 0 && it.dim(0) * kRowBlock / it.size() > 1) {
        // The outermost dim is reduced (sum over axis 0 of a matrix, say): fixed blocks of it,
        // each into its own row of accumulators, then the rows folded in order. Threads take
        // blocks; every block walks memory in order; the blocking depends on the shape only.
        const int64_t per_index = it.size() / it.dim(0);
        const int64_t rows =
            std::max(kRowBlock / per_index, (it.dim(0) + kMaxRowBlocks - 1) / kMaxRowBlocks);
        const int64_t blocks = (it.dim(0) + rows - 1) / rows;
        const PartialRows<C> partial(blocks, m, x);
        // A matrix of C with contiguous rows, reduced over its rows: four rows a pass for
        // max / min (see four_rows_a_pass).
        const bool dense_rows = it.ndim() == 2 && in.dtype == dtype_of<C> && it.stride(0, 1) == 1 &&
                                it.stride(1, 1) == 1;
        parallel_for(blocks, 1, [&](int64_t b, int64_t e) {
          for (int64_t k = b; k < e; ++k) {
            C* p = partial.row(k);
            std::fill(p, p + m, R::template identity<C>());
            if (dense_rows) {
              const int64_t row_stride = it.stride(1, 0);
              const int64_t end = std::min(it.dim(0), (k + 1) * rows);
              const C* xr = reinterpret_cast<const C*>(x);
              int64_t i = k * rows;
              if constexpr (four_rows_a_pass<R, C>())
                for (; i + 4 <= end; i += 4)
                  combine_four_rows(r, p, xr + i * row_stride, row_stride, m);
              if constexpr (std::is_floating_point_v<C>) {
                if constexpr (has_fast<R, Vec<C>>())
                  while (i < end && combine_row_fast(r, p, xr + i * row_stride, m)) ++i;
              }
              for (; i < end; ++i) combine_rows(r, p, xr + i * row_stride, m);
              continue;
            }
            std::array<int64_t, 2> base;
            const NdIter<2> part =
                it.slice(0, k * rows, std::min(it.dim(0), (k + 1) * rows), &base);
            fold_runs(r, part, 0, part.size(), p, x, in.dtype, {0, base[1]});
          }
        });
        for (int64_t k = 0; k < blocks; ++k) combine_rows(r, acc, partial.row(k), m);
      } else {
        // Split the outermost kept dim: threads own disjoint accumulators.
        int split = -1;
        for (int d = 0; d < it.ndim() && split < 0; ++d)
          if (it.stride(0, d) != 0) split = d;
        const int64_t extent = it.dim(split);
        const int64_t per_index = it.size() / extent;
        parallel_for(extent, std::max<int64_t>(1, kGrain / std::max<int64_t>(per_index, 1)),
                     [&](int64_t b, int64_t e) {
                       std::array<int64_t, 2> base;
                       const NdIter<2> part = it.slice(split, b, e, &base);
                       fold_runs(r, part, 0, part.size(), acc, x, in.dtype, base);
                     });
      }
    }
    if constexpr (has_finalize<R>()) {
      for (int64_t i = 0; i < m; ++i) acc[i] = r.finalize(acc[i], count);
    }
    if (out_dense) return;
    // Store: out (req) acc, acc laid out contiguously in out's dim order.
    const Shape acc_out = contiguous_strides(out.shape);
    const NdIter<2> st(out.shape, {out.strides.data(), acc_out.data()});
    HWY_ALIGN char buf[16 * kBlock];  // kBlock of the widest dtype (complex128)
    st.for_each_run(0, st.size(), [&](const Run<2>& run) {
      char* o = static_cast<char*>(out.dptr) + run.offset[0] * dtype_size(out.dtype);
      for (int64_t j = 0; j < run.length; j += kBlock) {
        const int64_t n = std::min(kBlock, run.length - j);
        const C* src = acc + run.offset[1] + j * run.stride[1];
        char* oj = o + j * run.stride[0] * dtype_size(out.dtype);
        if (a.req != kAddTo) {
          convert(oj, out.dtype, run.stride[0], src, dtype_of<C>, run.stride[1], n);
        } else {
          convert(buf, out.dtype, 1, src, dtype_of<C>, run.stride[1], n);
          accumulate(oj, out.dtype, run.stride[0], buf, n);
        }
      }
    });
  }
}

// The registered entry: every target's for float compute types, AVX2's or the static
// target's for the others (see compiled_for_target).
template <class R>
void reduce(const ReduceArgs& a) {
  with_any_compute_type(a.compute, "reduce", [&](auto c) {
    if constexpr (compiled_for_target<decltype(c)>())
      reduce_typed<R, decltype(c)>(a);
    else
      raise(ErrorKind::kRuntimeError, "[reduce] dtype ", a.compute, " has no kernel compiled for ",
            hwy::TargetName(HWY_TARGET), "'s");
  });
}

// ---- argmax / argmin ----
struct ArgMaxTag {
  static constexpr bool kMax = true;
};
struct ArgMinTag {
  static constexpr bool kMax = false;
};

template <bool kMax, class C>
HWY_INLINE bool better(C v, C best) {
  return kMax ? v > best : v < best;
}

// Columns an argmax along an outer axis tracks in one pass over the rows.
inline constexpr int64_t kArgCols = 4096;

// Index of the first extremum of x[0:n) (n > 0); the first NaN if there is one.
// arg_contig of integers and bool (no NaN): each block's extremum by SIMD, and only when it
// beats the best so far a scan for its first index; a value nothing can beat (a bool's true
// for argmax) ends the search, as in NumPy.
// argmax of bools is the first true, argmin the first false (0 when there is none): a scan
// that stops there, a vector at a time (rows of 1024 bools whose first true came at about 60
// were read whole, at 0.89x NumPy's speed, which stops as this does).
template <bool kMax>
HWY_INLINE int64_t arg_contig_bool(const bool* x, int64_t n) {
  const hn::ScalableTag<uint8_t> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const uint8_t* b = reinterpret_cast<const uint8_t*>(x);
  const auto zero = hn::Zero(d);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(d, b + i);
    const intptr_t k = hn::FindFirstTrue(d, kMax ? hn::Ne(v, zero) : hn::Eq(v, zero));
    if (k >= 0) return i + k;
  }
  for (; i < n; ++i)
    if ((b[i] != 0) == kMax) return i;
  return 0;
}

template <bool kMax, class T>
HWY_INLINE int64_t arg_contig_int(const T* x, int64_t n) {
  if constexpr (std::is_same_v<T, bool>) return arg_contig_bool<kMax>(x, n);
  using L = IntLane<T>;
  const hn::ScalableTag<L> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const L* xl = reinterpret_cast<const L*>(x);
  const L absorbing =
      static_cast<L>(kMax ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest());
  const auto ext = [](auto a, auto b) {
    if constexpr (kMax)
      return hn::Max(a, b);
    else
      return hn::Min(a, b);
  };
  const auto beats = [](L v, L best) { return kMax ? v > best : v < best; };
  L best = xl[0];
  int64_t idx = 0, i = 0;
  if (best == absorbing) return 0;
  constexpr int64_t kArgBlock = 2048;
  while (i + 4 * lanes <= n) {
    const int64_t len = std::min(kArgBlock, (n - i) / (4 * lanes) * (4 * lanes));
    // Accumulator k sees vectors k, k + 4, ... only, so a lane of it that holds the block's
    // extremum names the one sequence of positions to search (see first_of_class).
    auto e0 = hn::LoadU(d, xl + i), e1 = hn::LoadU(d, xl + i + lanes),
         e2 = hn::LoadU(d, xl + i + 2 * lanes), e3 = hn::LoadU(d, xl + i + 3 * lanes);
    for (int64_t j = i; j < i + len; j += 4 * lanes) {
      e0 = ext(e0, hn::LoadU(d, xl + j));
      e1 = ext(e1, hn::LoadU(d, xl + j + lanes));
      e2 = ext(e2, hn::LoadU(d, xl + j + 2 * lanes));
      e3 = ext(e3, hn::LoadU(d, xl + j + 3 * lanes));
    }
    const auto all = ext(ext(e0, e1), ext(e2, e3));
    L e;
    if constexpr (sizeof(L) >= 2) {  // (Highway 1.0 has no 8-bit MaxOfLanes)
      e = hn::GetLane(kMax ? hn::MaxOfLanes(d, all) : hn::MinOfLanes(d, all));
    } else {
      constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(L);
      HWY_ALIGN L lane[kMaxLanes];
      hn::Store(all, d, lane);
      e = lane[0];
      for (int64_t l = 1; l < lanes; ++l) e = beats(lane[l], e) ? lane[l] : e;
    }
    if (beats(e, best)) {
      // The first position holding e. When few lanes of the accumulators hold it (an
      // extremum that is rare, as in most data), each of those lanes is searched along its
      // stride of four vectors: rescanning the block vector by vector made argmax of rows of
      // 1024 int32 (in L2) 0.69x NumPy's speed. When many do (ties, a bool's trues), the
      // first is likely early and the vector scan finds it soonest: the lane search made
      // argmax of bool rows 5x slower.
      best = e;
      const auto ev = hn::Set(d, e);
      const decltype(hn::Eq(e0, ev)) holds[4] = {hn::Eq(e0, ev), hn::Eq(e1, ev), hn::Eq(e2, ev),
                                                 hn::Eq(e3, ev)};
      size_t candidates = 0;
      for (const auto& h : holds) candidates += hn::CountTrue(d, h);
      int64_t first = i + len;
      if (candidates <= 4) {
        for (int64_t k = 0; k < 4; ++k) {
          auto h = holds[k];
          for (intptr_t l = hn::FindFirstTrue(d, h); l >= 0; l = hn::FindFirstTrue(d, h)) {
            for (int64_t p = i + k * lanes + l; p < first; p += 4 * lanes)
              if (xl[p] == e) {
                first = p;
                break;
              }
            h = hn::AndNot(hn::FirstN(d, static_cast<size_t>(l) + 1), h);
          }
        }
      } else {
        for (int64_t j = i;; j += lanes) {
          const intptr_t k = hn::FindFirstTrue(d, hn::Eq(hn::LoadU(d, xl + j), ev));
          if (k >= 0) {
            first = j + k;
            break;
          }
        }
      }
      idx = first;
      if (best == absorbing) return idx;
    }
    i += len;
  }
  for (; i < n; ++i)
    if (beats(xl[i], best)) best = xl[i], idx = i;
  return idx;
}

// The first index in x[i, i + len) holding e, where acc[k] holds the per-lane extrema of the
// block's vectors k, k + 4, k + 8, ... (len a multiple of 4 vectors): e sits in lane l of such
// a vector only where acc[k]'s lane l equals e, so only those (usually one) lane sequences are
// searched, each by a stride of four vectors through the block.
template <class T, class V>
HWY_INLINE int64_t first_of_class(const T* x, int64_t i, int64_t len, int64_t lanes, T e,
                                  const std::array<V, 4>& acc) {
  const typename V::D d;
  const V ev(e);
  int64_t first = i + len;
  for (int64_t k = 0; k < 4; ++k) {
    auto holds = (acc[k] == ev).m;
    for (intptr_t l = hn::FindFirstTrue(d, holds); l >= 0; l = hn::FindFirstTrue(d, holds)) {
      for (int64_t p = i + k * lanes + l; p < first; p += 4 * lanes)
        if (x[p] == e) {
          first = p;
          break;
        }
      holds = hn::AndNot(hn::FirstN(d, static_cast<size_t>(l) + 1), holds);
    }
  }
  return first;
}

template <bool kMax, class T>
int64_t arg_contig(const T* x, int64_t n) {
  if constexpr (std::is_integral_v<T>) {
    return arg_contig_int<kMax>(x, n);
  } else {
    using C = compute_t<T>;
    int64_t idx = 0;
    C best = static_cast<C>(x[0]);
    if (is_nan(best)) return 0;
    // The SIMD blocks start at 0 (x[0] is already the best, so ties keep index 0).
    int64_t i = std::is_floating_point_v<T> ? 0 : 1;
    if constexpr (std::is_floating_point_v<T>) {
      // Blocks: the block's extremum by SIMD (a NaN flagged by a running sum, which infinities
      // of both signs flag too), then the first index of a new extremum from the lanes that
      // hold it (first_of_class); a flagged block is scanned exactly.
      using V = Vec<T>;
      const int64_t lanes = static_cast<int64_t>(V::lanes());
      constexpr int64_t kArgBlock = 2048;
      while (i + 4 * lanes <= n) {
        const int64_t len = std::min(kArgBlock, (n - i) / (4 * lanes) * (4 * lanes));
        V e0 = V::load(x + i), e1 = V::load(x + i + lanes), e2 = V::load(x + i + 2 * lanes),
          e3 = V::load(x + i + 3 * lanes), chk(T(0));
        for (int64_t j = i; j < i + len; j += 4 * lanes) {
          const V x0 = V::load(x + j), x1 = V::load(x + j + lanes), x2 = V::load(x + j + 2 * lanes),
                  x3 = V::load(x + j + 3 * lanes);
          e0 = kMax ? max(e0, x0) : min(e0, x0);
          e1 = kMax ? max(e1, x1) : min(e1, x1);
          e2 = kMax ? max(e2, x2) : min(e2, x2);
          e3 = kMax ? max(e3, x3) : min(e3, x3);
          chk = chk + ((x0 + x1) + (x2 + x3));
        }
        if (!hn::AllFalse(typename V::D(), is_nan(chk).m)) {  // a NaN, or only an inf
          for (int64_t j = i; j < i + len; ++j) {
            const C v = static_cast<C>(x[j]);
            if (is_nan(v)) return j;
            if (better<kMax>(v, best)) best = v, idx = j;
          }
          i += len;
          continue;
        }
        const typename V::D d;
        const V all = kMax ? max(max(e0, e1), max(e2, e3)) : min(min(e0, e1), min(e2, e3));
        const C e = hn::GetLane(kMax ? hn::MaxOfLanes(d, all.v) : hn::MinOfLanes(d, all.v));
        if (better<kMax>(e, best)) {
          best = e;
          idx = first_of_class<T, V>(x, i, len, lanes, e, {e0, e1, e2, e3});
        }
        i += len;
      }
    }
    for (; i < n; ++i) {
      const C v = static_cast<C>(x[i]);
      if (is_nan(v)) return i;
      if (better<kMax>(v, best)) best = v, idx = i;
    }
    return idx;
  }
}

template <bool kMax, class T>
void arg_typed(const ArgReduceArgs& a) {
  using C = compute_t<T>;
  const TBlob& in = *a.in;
  const T* x = static_cast<const T*>(in.dptr);
  if (a.axis < 0) {
    const int64_t size = in.size(), blocks = (size + kFullBlock - 1) / kFullBlock;
    if (blocks <= 2) {
      *a.out = arg_contig<kMax>(x, size);
      return;
    }
    // Fixed blocks in parallel, merged in order: the earliest extremum (or NaN) wins.
    std::unique_ptr<int64_t[]> idx(new int64_t[static_cast<size_t>(blocks)]);
    parallel_for(blocks, 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k)
        idx[k] = k * kFullBlock +
                 arg_contig<kMax>(x + k * kFullBlock, std::min(kFullBlock, size - k * kFullBlock));
    });
    int64_t best = idx[0];
    for (int64_t k = 1; k < blocks; ++k) {
      const C b = static_cast<C>(x[best]), v = static_cast<C>(x[idx[k]]);
      if (!is_nan(b) && (is_nan(v) || better<kMax>(v, b))) best = idx[k];
    }
    *a.out = best;
    return;
  }
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < in.ndim(); ++d) {
    if (d < a.axis) outer *= in.shape[d];
    if (d > a.axis) inner *= in.shape[d];
  }
  const int64_t n = in.shape[a.axis];
  if (inner == 1) {
    parallel_for(outer, std::max<int64_t>(1, kGrain / n), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) a.out[o] = arg_contig<kMax>(x + o * n, n);
    });
    return;
  }
  // Along an outer axis: one best value and index per column, rows [i0, i1) streamed in order.
  // Columns [0, w) of rows [i0, i1) of a slab into best / idx: SIMD over columns for float and
  // double (row indices in lanes of the same width), scalar otherwise. A row takes a column
  // when !(v <= best) (greater, or NaN) and best is not NaN: first occurrence, NaN first.
  auto scan = [inner](const T* slab, int64_t i0, int64_t i1, int64_t w, C* best, int64_t* idx) {
    int64_t done = 0;
    if constexpr (std::is_floating_point_v<T>) {
      using V = Vec<T>;
      using D = typename V::D;
      const hn::RebindToSigned<D> di;
      using I = hn::TFromD<decltype(di)>;
      const int64_t lanes = static_cast<int64_t>(V::lanes());
      if (i1 <= std::numeric_limits<I>::max()) {
        // Rows outer, columns inner: memory is read in order, in one pass for rows of up to
        // kArgCols columns (their running best, 32 KiB for float, stays in L1 / L2).
        HWY_ALIGN T b[kArgCols];
        HWY_ALIGN I bi[kArgCols];
        for (; done + lanes <= w; done += kArgCols) {
          const int64_t cw = std::min(kArgCols, (w - done) / lanes * lanes);
          std::copy(slab + i0 * inner + done, slab + i0 * inner + done + cw, b);
          std::fill(bi, bi + cw, static_cast<I>(i0));
          for (int64_t i = i0 + 1; i < i1; ++i) {
            const T* row = slab + i * inner + done;
            const auto iv = hn::Set(di, static_cast<I>(i));
            for (int64_t j = 0; j < cw; j += lanes) {
              const V v = V::load(row + j), bv = V::load(b + j);
              const auto take = (kMax ? !(v <= bv) : !(v >= bv)) & !is_nan(bv);
              select(take, v, bv).store(b + j);
              hn::Store(hn::IfThenElse(hn::RebindMask(di, take.m), iv, hn::Load(di, bi + j)), di,
                        bi + j);
            }
          }
          std::copy(b, b + cw, best + done);
          for (int64_t j = 0; j < cw; ++j) idx[done + j] = bi[j];
          if (cw < kArgCols) {
            done += cw;
            break;
          }
        }
      }
    }
    for (int64_t j0 = done; j0 < w; j0 += kBlock) {
      const int64_t cw = std::min(kBlock, w - j0);
      C b[kBlock];
      int64_t ix[kBlock];
      for (int64_t j = 0; j < cw; ++j) b[j] = static_cast<C>(slab[i0 * inner + j0 + j]), ix[j] = i0;
      for (int64_t i = i0 + 1; i < i1; ++i) {
        const T* row = slab + i * inner + j0;
        for (int64_t j = 0; j < cw; ++j) {
          const C v = static_cast<C>(row[j]);
          const bool take = better<kMax>(v, b[j]) || (is_nan(v) && !is_nan(b[j]));
          b[j] = take ? v : b[j];
          ix[j] = take ? i : ix[j];
        }
      }
      std::copy(b, b + cw, best + j0);
      std::copy(ix, ix + cw, idx + j0);
    }
  };
  // argmax is exact, so the blocking may follow the thread count: one block per thread
  // (twice that, for late workers) when the axis is long, none otherwise.
  const int threads = num_threads();
  const int64_t blocks = threads > 1 && outer < threads && n * inner >= 2 * kGrain
                             ? std::min<int64_t>(2 * threads, std::max<int64_t>(1, n / 64))
                             : 1;
  const int64_t rows = (n + blocks - 1) / blocks;
  if (blocks > 1) {
    // A long axis: blocks of rows in parallel (each walks memory in order), their answers
    // merged in block order, so the earliest extremum (or NaN) wins as in one scan.
    std::unique_ptr<C[]> best(new C[static_cast<size_t>(blocks * inner)]);
    std::unique_ptr<int64_t[]> idx(new int64_t[static_cast<size_t>(blocks * inner)]);
    for (int64_t o = 0; o < outer; ++o) {
      const T* slab = x + o * n * inner;
      parallel_for(blocks, 1, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k)
          scan(slab, k * rows, std::min(n, (k + 1) * rows), inner, best.get() + k * inner,
               idx.get() + k * inner);
      });
      int64_t* out = a.out + o * inner;
      C* b0 = best.get();
      std::copy(idx.get(), idx.get() + inner, out);
      for (int64_t k = 1; k < blocks; ++k)
        for (int64_t j = 0; j < inner; ++j) {
          const C v = best[k * inner + j];
          if (!is_nan(b0[j]) && (is_nan(v) || better<kMax>(v, b0[j])))
            b0[j] = v, out[j] = idx[k * inner + j];
        }
    }
    return;
  }
  parallel_for(outer * inner, std::max<int64_t>(1, kGrain / n), [&](int64_t b, int64_t e) {
    C best[kBlock];
    while (b < e) {
      const int64_t o = b / inner, j0 = b % inner;
      const int64_t w = std::min({inner - j0, e - b, kBlock});
      scan(x + o * n * inner + j0, 0, n, w, best, a.out + o * inner + j0);
      b += w;
    }
  });
}

// Every target's for float32 / float64 input; for the others AVX-512's too, besides AVX2's
// and the static target's (compiled_for_target): with AVX2 only, int64 argmax of a 4096 x
// 1024 array ran at 0.73x NumPy's AVX-512 loop on an Emerald Rapids host, int32 argmax(-1)
// at 0.84x.
template <class T>
constexpr bool arg_compiled_for_target() {
  return compiled_for_target<T>() || HWY_TARGET == HWY_AVX3;
}

template <class Tag>
void arg_reduce(const ArgReduceArgs& a) {
  NDX_DTYPE_SWITCH_COMPLEX(a.in->dtype, T, {  // complex: NumPy's order (math/scalar-inl.h)
    if constexpr (arg_compiled_for_target<T>())
      arg_typed<Tag::kMax, T>(a);
    else
      raise(ErrorKind::kRuntimeError, "[arg_reduce] dtype ", a.in->dtype,
            " has no kernel compiled for ", hwy::TargetName(HWY_TARGET), "'s");
  });
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NDX_KERNEL_REDUCE_INL_H_
