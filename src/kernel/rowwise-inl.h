// Row kernels of the engine, compiled per Highway target like kernel/elementwise-inl.h: for
// each row x of a contiguous [rows, n] array (float or double),
//
//   s1 = R1 over x;   s2 = R2 over Pre(x, s1);   y = Post(v, s1, s2)
//
// where v is Pre(x, s1) when Op::kStorePre (it is written to y on the way, so Post does not
// recompute it) and x otherwise. A row stays in cache across the passes, which is what makes
// softmax-like ops memory-bound rather than pass-bound. In place (y == x) is fine: Post reads
// each element before writing it. Threads split the rows.
//
//   struct Softmax {
//     using R1 = MaxReducer; using R2 = SumReducer; static constexpr bool kStorePre = true;
//     template <class T> T pre(T x, T s1) const { return exp(x - s1); }
//     template <class T> T post(T t, T s1, T s2) const { return t / s2; }
//   };
#if defined(NDX_KERNEL_ROWWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_KERNEL_ROWWISE_INL_H_
#undef NDX_KERNEL_ROWWISE_INL_H_
#else
#define NDX_KERNEL_ROWWISE_INL_H_
#endif

#include "kernel/reduce-inl.h"

#ifndef NDX_KERNEL_ROWWISE_ARGS_
#define NDX_KERNEL_ROWWISE_ARGS_
namespace ndx::kernel {
struct RowwiseArgs {
  const void* in = nullptr;  // rows * n contiguous elements of `dtype`
  void* out = nullptr;       // the same layout (may be `in`)
  DType dtype = DType::kFloat32;
  int64_t rows = 0, n = 0;
};
using RowwiseFn = void (*)(const RowwiseArgs&);
}  // namespace ndx::kernel
#endif

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {

// Rows up to this many elements keep Pre's values in a per-thread scratch row (in cache)
// rather than in y, so y is written once (with non-temporal stores when it is large).
inline constexpr int64_t kRowScratch = 4096;

template <class Op, class T>
void row_typed(const Op& op, const T* x, T* y, int64_t n, T* scratch, bool stream) {
  using V = Vec<T>;
  using R1 = typename Op::R1;
  using R2 = typename Op::R2;
  const R1 r1{};
  const R2 r2{};
  const int64_t lanes = static_cast<int64_t>(V::lanes());
  const int64_t nv = n / lanes * lanes;
  // Pass 1: s1.
  const T s1 = fold_contig(r1, x, n);
  // Pass 2: s2 over pre(x, s1), stored when kStorePre.
  const V s1v(s1);
  T* pre_out = n <= kRowScratch ? scratch : y;
  V a0(R2::template identity<T>()), a1 = a0;
  int64_t i = 0;
  for (; i + 2 * lanes <= nv; i += 2 * lanes) {
    const V t0 = op.pre(V::load(x + i), s1v), t1 = op.pre(V::load(x + i + lanes), s1v);
    if constexpr (Op::kStorePre) t0.store(pre_out + i), t1.store(pre_out + i + lanes);
    a0 = r2(a0, t0);
    a1 = r2(a1, t1);
  }
  for (; i < nv; i += lanes) {
    const V t0 = op.pre(V::load(x + i), s1v);
    if constexpr (Op::kStorePre) t0.store(pre_out + i);
    a0 = r2(a0, t0);
  }
  a0 = r2(a0, a1);
  constexpr size_t kMax = HWY_MAX_BYTES / sizeof(T);
  HWY_ALIGN T lane[kMax];
  a0.store(lane);
  T s2 = lane[0];
  for (int64_t l = 1; l < lanes; ++l) s2 = r2(s2, lane[l]);
  HWY_ALIGN T tail[kMax], tail_y[kMax];
  const int64_t m = n - nv;
  if (m > 0) {  // the tail through the same vector code, padded
    for (int64_t l = 0; l < lanes; ++l) tail[l] = x[nv + std::min(l, m - 1)];
    const V t = op.pre(V::load(tail), s1v);
    t.store(tail_y);
    for (int64_t l = 0; l < m; ++l) s2 = r2(s2, tail_y[l]);
    if constexpr (Op::kStorePre) std::copy(tail_y, tail_y + m, pre_out + nv);
  }
  // Pass 3: y = post(v, s1, s2).
  const V s2v(s2);
  const T* v = Op::kStorePre ? pre_out : x;
  i = 0;
  if (stream && v != y && reinterpret_cast<uintptr_t>(y) % (lanes * sizeof(T)) == 0) {
    const typename V::D d;
    for (; i < nv; i += lanes) hn::Stream(op.post(V::load(v + i), s1v, s2v).v, d, y + i);
  }
  for (; i < nv; i += lanes) op.post(V::load(v + i), s1v, s2v).store(y + i);
  if (m > 0) {
    for (int64_t l = 0; l < lanes; ++l) tail[l] = v[nv + std::min(l, m - 1)];
    op.post(V::load(tail), s1v, s2v).store(tail_y);
    std::copy(tail_y, tail_y + m, y + nv);
  }
}

template <class Op>
void rowwise(const RowwiseArgs& a) {
  const Op op{};
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a.in);
    T* y = static_cast<T*>(a.out);
    const bool stream = a.rows * a.n * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
    parallel_for(a.rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(a.n, 1)),
                 [&](int64_t b, int64_t e) {
                   HWY_ALIGN T scratch[kRowScratch];
                   for (int64_t r = b; r < e; ++r)
                     row_typed(op, x + r * a.n, y + r * a.n, a.n, scratch, stream);
                   if (stream) hwy::FlushStream();
                 });
  };
  if (a.rows == 0 || a.n == 0) return;
  if (a.dtype == DType::kFloat32)
    run(float{});
  else if (a.dtype == DType::kFloat64)
    run(double{});
  else
    unsupported_dtype("rowwise", a.dtype);
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NDX_KERNEL_ROWWISE_INL_H_
