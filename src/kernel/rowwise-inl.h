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
#include <vector>

namespace ndx::kernel {
struct RowwiseArgs {
  const void* in = nullptr;  // rows * n contiguous elements of `dtype`
  void* out = nullptr;       // the same layout (may be `in`)
  DType dtype = DType::kFloat32;
  int64_t rows = 0, n = 0;
};
using RowwiseFn = void (*)(const RowwiseArgs&);

// Layer normalization of each row of a contiguous [rows, n] array (float or double), every
// pointer of `dtype`:
//   mean = sum(x) / n,  sd = sqrt(sum((x - mean)^2) / n + eps),
//   y = (x - mean) * (1 / sd) * gamma + beta   (gamma, beta: n elements).
// mean and sd (rows elements each) may be null. y may be x.
struct NormRowsArgs {
  const void* x = nullptr;
  void* y = nullptr;
  const void *gamma = nullptr, *beta = nullptr;
  void *mean = nullptr, *sd = nullptr;
  DType dtype = DType::kFloat32;
  int64_t rows = 0, n = 0;
  double eps = 0;
};
using NormRowsFn = void (*)(const NormRowsArgs&);

// A row gradient: for each row of contiguous [rows, n] arrays g and y,
//   s = sum of Op::term(g, y);   dx = Op::out(g, y, s).
struct RowwiseGradArgs {
  const void *g = nullptr, *y = nullptr;
  void* dx = nullptr;  // may be g or y
  DType dtype = DType::kFloat32;
  int64_t rows = 0, n = 0;
};

// Its gradient, given the head gradient g and the forward's mean and sd:
//   xhat = (x - mean) / sd,  d = g * gamma,
//   dx = (d - sum(d) / n - xhat * sum(d * xhat) / n) / sd      (per row),
//   dgamma = sum over rows of g * xhat,  dbeta = sum over rows of g.
// The column sums fold fixed blocks of rows (their bounds depend on rows only) in order, so
// they do not depend on the thread count. `partials` is caller-given scratch of
// norm_rows_partials(rows, n) elements of `dtype`. dx, dgamma, dbeta may be null.
struct NormRowsGradArgs {
  const void *g = nullptr, *x = nullptr, *gamma = nullptr, *mean = nullptr, *sd = nullptr;
  void *dx = nullptr, *dgamma = nullptr, *dbeta = nullptr, *partials = nullptr;
  DType dtype = DType::kFloat32;
  int64_t rows = 0, n = 0;
};
using NormRowsGradFn = void (*)(const NormRowsGradArgs&);

// Rows per block of the gradient's column sums: about sqrt(rows), so that both the sums
// inside a block and the fold over blocks add about sqrt(rows) terms each.
inline int64_t norm_rows_block(int64_t rows) {
  int64_t b = 16;
  while (b * b < rows) b *= 2;
  return b;
}
inline int64_t norm_rows_partials(int64_t rows, int64_t n) {
  const int64_t b = norm_rows_block(rows);
  return (rows + b - 1) / b * 2 * n;
}

// Batch normalization over a contiguous [outer, channels, inner] array (float or double; every
// pointer of `dtype`; per-channel arrays hold `channels` elements). Row (o, c) of `inner`
// elements belongs to channel c.
//   channel_moments: mean[c] and var[c] (biased) over every (o, i), one pass over x.
//   channel_norm_grad: given the forward's mean and inv_std, and gamma (null: 1),
//     dbeta[c] = sum of g,  dgamma[c] = sum of g * xhat,  xhat = (x - mean) * inv_std,
//     dx = (g - dbeta / count - xhat * dgamma / count) * gamma * inv_std   (batch_stats), or
//     dx = g * gamma * inv_std   (the statistics were constants);
//     one pass over g and x for the sums and one for dx. dx, dgamma, dbeta may be null.
//   channel_normalize: y = (x - mean) * inv_std * gamma + beta (gamma null: 1), one pass with
//     each row's four numbers held in vectors (the elementwise engine broadcasts them per
//     element: 2.4x slower on 64x64x32x32 float32).
// A row's sums are pairwise in `dtype`; rows combine per channel in double, in order, so the
// results do not depend on the thread count. `scratch` holds 2 * outer * channels elements.
struct ChannelNormArgs {
  const void *x = nullptr, *g = nullptr, *gamma = nullptr, *inv_std = nullptr;
  void *mean = nullptr, *var = nullptr;  // outputs of channel_moments, inputs of the gradient
  void *dx = nullptr, *dgamma = nullptr, *dbeta = nullptr, *scratch = nullptr;
  const void* beta = nullptr;  // channel_normalize's shift, and y its output
  void* y = nullptr;
  DType dtype = DType::kFloat32;
  int64_t outer = 0, channels = 0, inner = 0;
  bool batch_stats = true;
};
using ChannelNormFn = void (*)(const ChannelNormArgs&);
}  // namespace ndx::kernel
#endif

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {

// Calls run(float{}) or run(double{}) for dtype; the row kernels take no other dtype.
template <class F>
void with_float_or_double(DType dtype, const char* what, F&& run) {
  if (dtype == DType::kFloat32)
    run(float{});
  else if (dtype == DType::kFloat64)
    run(double{});
  else
    unsupported_dtype(what, dtype);
}

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
  // Pass 3: y = post(v, s1, s2), or post_with(v, s1, row_factor(s2)) where the op computes
  // the part that depends on s2 alone once a row.
  constexpr bool kFactor = requires(const V& s) { op.row_factor(s); };
  const V s2v(s2);
  const V factor = [&] {
    if constexpr (kFactor)
      return op.row_factor(s2v);
    else
      return s2v;
  }();
  const auto post = [&](const V& t) {
    if constexpr (kFactor)
      return op.post_with(t, s1v, factor);
    else
      return op.post(t, s1v, s2v);
  };
  const T* v = Op::kStorePre ? pre_out : x;
  i = 0;
  if (stream && v != y && reinterpret_cast<uintptr_t>(y) % (lanes * sizeof(T)) == 0) {
    const typename V::D d;
    for (; i < nv; i += lanes) hn::Stream(post(V::load(v + i)).v, d, y + i);
  }
  for (; i < nv; i += lanes) post(V::load(v + i)).store(y + i);
  if (m > 0) {
    for (int64_t l = 0; l < lanes; ++l) tail[l] = v[nv + std::min(l, m - 1)];
    post(V::load(tail)).store(tail_y);
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
  with_float_or_double(a.dtype, "rowwise", run);
}

// ---------------------------------------------------------------- row gradients

template <class Op, class T>
void row_grad_typed(const Op& op, const T* g, const T* y, T* dx, int64_t n) {
  using V = Vec<T>;
  const int64_t lanes = static_cast<int64_t>(V::lanes()), nv = n / lanes * lanes;
  V a0(T(0)), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 4 * lanes <= nv; i += 4 * lanes) {
    a0 = a0 + op.term(V::load(g + i), V::load(y + i));
    a1 = a1 + op.term(V::load(g + i + lanes), V::load(y + i + lanes));
    a2 = a2 + op.term(V::load(g + i + 2 * lanes), V::load(y + i + 2 * lanes));
    a3 = a3 + op.term(V::load(g + i + 3 * lanes), V::load(y + i + 3 * lanes));
  }
  for (; i < nv; i += lanes) a0 = a0 + op.term(V::load(g + i), V::load(y + i));
  T s = hn::GetLane(hn::SumOfLanes(typename V::D(), ((a0 + a1) + (a2 + a3)).v));
  for (; i < n; ++i) s += op.term(g[i], y[i]);
  const V sv(s);
  for (i = 0; i < nv; i += lanes) op.out(V::load(g + i), V::load(y + i), sv).store(dx + i);
  for (; i < n; ++i) dx[i] = op.out(g[i], y[i], s);
}

template <class Op>
void rowwise_grad(const RowwiseGradArgs& a) {
  if (a.rows == 0 || a.n == 0) return;
  const Op op{};
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* g = static_cast<const T*>(a.g);
    const T* y = static_cast<const T*>(a.y);
    T* dx = static_cast<T*>(a.dx);
    parallel_for(a.rows, std::max<int64_t>(1, kGrain / a.n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        row_grad_typed(op, g + r * a.n, y + r * a.n, dx + r * a.n, a.n);
    });
  };
  with_float_or_double(a.dtype, "rowwise_grad", run);
}

// ---------------------------------------------------------------- layer normalization

template <class V>
HWY_INLINE typename V::Scalar lane_sum(V v) {
  return hn::GetLane(hn::SumOfLanes(typename V::D(), v.v));
}

// sum((x - m)^2) over x[0:n), pairwise over leaves as fold_contig.
template <class T>
T squared_deviations(const T* x, int64_t n, T m) {
  using V = Vec<T>;
  const int64_t lanes = static_cast<int64_t>(V::lanes());
  if (n > kLeaf) {
    const int64_t half = (n / 2 + 4 * lanes - 1) / (4 * lanes) * (4 * lanes);
    return squared_deviations(x, half, m) + squared_deviations(x + half, n - half, m);
  }
  const V mv(m);
  V a0(T(0)), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    const V d0 = V::load(x + i) - mv, d1 = V::load(x + i + lanes) - mv;
    const V d2 = V::load(x + i + 2 * lanes) - mv, d3 = V::load(x + i + 3 * lanes) - mv;
    a0 = a0 + d0 * d0, a1 = a1 + d1 * d1, a2 = a2 + d2 * d2, a3 = a3 + d3 * d3;
  }
  for (; i + lanes <= n; i += lanes) {
    const V d = V::load(x + i) - mv;
    a0 = a0 + d * d;
  }
  T s = lane_sum((a0 + a1) + (a2 + a3));
  for (; i < n; ++i) s += (x[i] - m) * (x[i] - m);
  return s;
}

template <class T>
void norm_row(const NormRowsArgs& a, int64_t r, bool stream) {
  using V = Vec<T>;
  const int64_t n = a.n, lanes = static_cast<int64_t>(V::lanes());
  const T* x = static_cast<const T*>(a.x) + r * n;
  T* y = static_cast<T*>(a.y) + r * n;
  const T* gamma = static_cast<const T*>(a.gamma);
  const T* beta = static_cast<const T*>(a.beta);
  const T mean = fold_contig(SumReducer{}, x, n) / static_cast<T>(n);
  const T sd =
      std::sqrt(squared_deviations(x, n, mean) / static_cast<T>(n) + static_cast<T>(a.eps));
  const T rstd = T(1) / sd;
  if (a.mean) static_cast<T*>(a.mean)[r] = mean;
  if (a.sd) static_cast<T*>(a.sd)[r] = sd;
  const V mv(mean), rv(rstd);
  int64_t i = 0;
  const int64_t nv = n / lanes * lanes;
  if (stream && x != y && reinterpret_cast<uintptr_t>(y) % (lanes * sizeof(T)) == 0) {
    const typename V::D d;
    for (; i < nv; i += lanes)
      hn::Stream(((V::load(x + i) - mv) * rv * V::load(gamma + i) + V::load(beta + i)).v, d, y + i);
  }
  for (; i < nv; i += lanes)
    ((V::load(x + i) - mv) * rv * V::load(gamma + i) + V::load(beta + i)).store(y + i);
  for (; i < n; ++i) y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
}

inline void layer_norm_rows(const NormRowsArgs& a) {
  if (a.rows == 0 || a.n == 0) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const bool stream = a.rows * a.n * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
    parallel_for(a.rows, std::max<int64_t>(1, kGrain / a.n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) norm_row<T>(a, r, stream);
      if (stream) hwy::FlushStream();
    });
  };
  with_float_or_double(a.dtype, "layer_norm_rows", run);
}

// dx of row r (when a.dx) and the row's terms of the column sums, added into pg (g * xhat)
// and pb (g).
template <class T>
void norm_row_grad(const NormRowsGradArgs& a, int64_t r, T* pg, T* pb) {
  using V = Vec<T>;
  const int64_t n = a.n, lanes = static_cast<int64_t>(V::lanes()), nv = n / lanes * lanes;
  const T* g = static_cast<const T*>(a.g) + r * n;
  const T* x = static_cast<const T*>(a.x) + r * n;
  const T* gamma = static_cast<const T*>(a.gamma);
  const T mean = static_cast<const T*>(a.mean)[r];
  const T rstd = T(1) / static_cast<const T*>(a.sd)[r];
  const V mv(mean), rv(rstd);
  V sum_dv(T(0)), sum_dxv(T(0));  // sum(d), sum(d * xhat)
  int64_t i = 0;
  for (; i < nv; i += lanes) {
    const V gi = V::load(g + i), xh = (V::load(x + i) - mv) * rv;
    const V di = gi * V::load(gamma + i);
    sum_dv = sum_dv + di;
    sum_dxv = sum_dxv + di * xh;
    (V::load(pg + i) + gi * xh).store(pg + i);
    (V::load(pb + i) + gi).store(pb + i);
  }
  T sum_d = lane_sum(sum_dv), sum_dx = lane_sum(sum_dxv);
  for (; i < n; ++i) {
    const T xh = (x[i] - mean) * rstd, di = g[i] * gamma[i];
    sum_d += di, sum_dx += di * xh;
    pg[i] += g[i] * xh, pb[i] += g[i];
  }
  if (!a.dx) return;
  T* dx = static_cast<T*>(a.dx) + r * n;
  const T inv_n = T(1) / static_cast<T>(n);
  const T md = sum_d * inv_n, mdx = sum_dx * inv_n;
  const V mdv(md), mdxv(mdx);
  for (i = 0; i < nv; i += lanes) {
    const V xh = (V::load(x + i) - mv) * rv;
    ((V::load(g + i) * V::load(gamma + i) - mdv - xh * mdxv) * rv).store(dx + i);
  }
  for (; i < n; ++i) {
    const T xh = (x[i] - mean) * rstd;
    dx[i] = (g[i] * gamma[i] - md - xh * mdx) * rstd;
  }
}

inline void layer_norm_rows_grad(const NormRowsGradArgs& a) {
  if (a.rows == 0 || a.n == 0) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = a.n, block = norm_rows_block(a.rows);
    const int64_t blocks = (a.rows + block - 1) / block;
    T* partials = static_cast<T*>(a.partials);  // per block: n sums of g * xhat, n of g
    parallel_for(blocks, std::max<int64_t>(1, kGrain / (block * n)), [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        T* pg = partials + k * 2 * n;
        std::fill(pg, pg + 2 * n, T(0));
        for (int64_t r = k * block; r < std::min(a.rows, (k + 1) * block); ++r)
          norm_row_grad<T>(a, r, pg, pg + n);
      }
    });
    if (!a.dgamma && !a.dbeta) return;
    // Block 0's partials take the others', in block order, column by column.
    parallel_for(2 * n, std::max<int64_t>(1, kGrain / blocks), [&](int64_t b, int64_t e) {
      for (int64_t k = 1; k < blocks; ++k) {
        const T* pk = partials + k * 2 * n;
        for (int64_t j = b; j < e; ++j) partials[j] += pk[j];
      }
    });
    if (a.dgamma) std::copy(partials, partials + n, static_cast<T*>(a.dgamma));
    if (a.dbeta) std::copy(partials + n, partials + 2 * n, static_cast<T*>(a.dbeta));
  };
  with_float_or_double(a.dtype, "layer_norm_rows_grad", run);
}

// ---------------------------------------------------------------- batch normalization

// sum(g) and sum(g * (x - m)) over [0, n), pairwise over leaves as fold_contig.
template <class T>
void grad_sums(const T* g, const T* x, int64_t n, T m, T* s1, T* s2) {
  using V = Vec<T>;
  const int64_t lanes = static_cast<int64_t>(V::lanes());
  if (n > kLeaf) {
    const int64_t half = (n / 2 + 2 * lanes - 1) / (2 * lanes) * (2 * lanes);
    T a1, a2, b1, b2;
    grad_sums(g, x, half, m, &a1, &a2);
    grad_sums(g + half, x + half, n - half, m, &b1, &b2);
    *s1 = a1 + b1, *s2 = a2 + b2;
    return;
  }
  const V mv(m);
  V g0(T(0)), g1 = g0, p0 = g0, p1 = g0;
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const V ga = V::load(g + i), gb = V::load(g + i + lanes);
    g0 = g0 + ga, g1 = g1 + gb;
    p0 = p0 + ga * (V::load(x + i) - mv), p1 = p1 + gb * (V::load(x + i + lanes) - mv);
  }
  T a = lane_sum(g0 + g1), b = lane_sum(p0 + p1);
  for (; i < n; ++i) a += g[i], b += g[i] * (x[i] - m);
  *s1 = a, *s2 = b;
}

// Per-row values (two per row, in scratch) folded per channel over the outer index in double.
template <class T, class Combine>
void fold_channels(const ChannelNormArgs& a, const T* rows, Combine&& combine) {
  for (int64_t c = 0; c < a.channels; ++c)
    for (int64_t o = 0; o < a.outer; ++o) {
      const T* r = rows + 2 * (o * a.channels + c);
      combine(c, o, static_cast<double>(r[0]), static_cast<double>(r[1]));
    }
}

template <class T, class RowFn>
void for_rows(const ChannelNormArgs& a, RowFn&& row) {
  parallel_for(a.outer * a.channels, std::max<int64_t>(1, kGrain / a.inner),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) row(r, r % a.channels);
               });
}

inline void channel_moments(const ChannelNormArgs& a) {
  if (a.outer * a.channels == 0 || a.inner == 0) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a.x);
    T* rows = static_cast<T*>(a.scratch);
    for_rows<T>(a, [&](int64_t r, int64_t) {
      const T* xr = x + r * a.inner;
      const T m = fold_contig(SumReducer{}, xr, a.inner) / static_cast<T>(a.inner);
      rows[2 * r] = m, rows[2 * r + 1] = squared_deviations(xr, a.inner, m);
    });
    // Chan et al.'s pairwise update: rows of equal count, so the weights are o / (o + 1).
    std::vector<double> mean(static_cast<size_t>(a.channels)), m2(mean.size());
    const double n = static_cast<double>(a.inner);
    fold_channels<T>(a, rows, [&](int64_t c, int64_t o, double rm, double rm2) {
      const double delta = rm - mean[c], k = static_cast<double>(o);
      mean[c] += delta / (k + 1);
      m2[c] += rm2 + delta * delta * n * k / (k + 1);
    });
    const double count = n * static_cast<double>(a.outer);
    for (int64_t c = 0; c < a.channels; ++c) {
      static_cast<T*>(a.mean)[c] = static_cast<T>(mean[c]);
      static_cast<T*>(a.var)[c] = static_cast<T>(m2[c] / count);
    }
  };
  with_float_or_double(a.dtype, "channel_moments", run);
}

inline void channel_norm_grad(const ChannelNormArgs& a) {
  if (a.outer * a.channels == 0 || a.inner == 0) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using V = Vec<T>;
    const int64_t n = a.inner, lanes = static_cast<int64_t>(V::lanes()), nv = n / lanes * lanes;
    const T *g = static_cast<const T*>(a.g), *x = static_cast<const T*>(a.x);
    const T *mean = static_cast<const T*>(a.mean), *inv = static_cast<const T*>(a.inv_std);
    const T* gamma = static_cast<const T*>(a.gamma);
    T* rows = static_cast<T*>(a.scratch);
    for_rows<T>(a, [&](int64_t r, int64_t c) {
      grad_sums(g + r * n, x + r * n, n, mean[c], &rows[2 * r], &rows[2 * r + 1]);
    });
    std::vector<double> sum_g(static_cast<size_t>(a.channels)), sum_gxc(sum_g.size());
    fold_channels<T>(a, rows, [&](int64_t c, int64_t, double v1, double v2) {
      sum_g[c] += v1, sum_gxc[c] += v2;
    });
    // dx = (g - shift - (x - mean) * slope) * scale, per channel.
    const double inv_count = 1.0 / (static_cast<double>(n) * static_cast<double>(a.outer));
    std::vector<T> scale(sum_g.size()), shift(sum_g.size()), slope(sum_g.size());
    for (int64_t c = 0; c < a.channels; ++c) {
      const double ic = static_cast<double>(inv[c]), gxhat = sum_gxc[c] * ic;
      if (a.dbeta) static_cast<T*>(a.dbeta)[c] = static_cast<T>(sum_g[c]);
      if (a.dgamma) static_cast<T*>(a.dgamma)[c] = static_cast<T>(gxhat);
      scale[c] = static_cast<T>((gamma ? static_cast<double>(gamma[c]) : 1.0) * ic);
      shift[c] = a.batch_stats ? static_cast<T>(sum_g[c] * inv_count) : T(0);
      slope[c] = a.batch_stats ? static_cast<T>(gxhat * inv_count * ic) : T(0);
    }
    if (!a.dx) return;
    T* dx = static_cast<T*>(a.dx);
    for_rows<T>(a, [&](int64_t r, int64_t c) {
      const T *gr = g + r * n, *xr = x + r * n;
      T* d = dx + r * n;
      const T m = mean[c], sc = scale[c], sh = shift[c], sl = slope[c];
      const V mv(m), scv(sc), shv(sh), slv(sl);
      int64_t i = 0;
      for (; i < nv; i += lanes)
        ((V::load(gr + i) - shv - (V::load(xr + i) - mv) * slv) * scv).store(d + i);
      for (; i < n; ++i) d[i] = (gr[i] - sh - (xr[i] - m) * sl) * sc;
    });
  };
  with_float_or_double(a.dtype, "channel_norm_grad", run);
}

inline void channel_normalize(const ChannelNormArgs& a) {
  if (a.outer * a.channels == 0 || a.inner == 0) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using V = Vec<T>;
    const int64_t n = a.inner, lanes = static_cast<int64_t>(V::lanes()), nv = n / lanes * lanes;
    const T *x = static_cast<const T*>(a.x), *mean = static_cast<const T*>(a.mean);
    const T *inv = static_cast<const T*>(a.inv_std), *gamma = static_cast<const T*>(a.gamma);
    const T* beta = static_cast<const T*>(a.beta);
    T* y = static_cast<T*>(a.y);
    for_rows<T>(a, [&](int64_t r, int64_t c) {
      const T *xr = x + r * n, m = mean[c], iv = inv[c], g = gamma ? gamma[c] : T(1), b = beta[c];
      T* yr = y + r * n;
      const V mv(m), ivv(iv), gv(g), bv(b);
      int64_t i = 0;
      for (; i < nv; i += lanes) ((V::load(xr + i) - mv) * ivv * gv + bv).store(yr + i);
      for (; i < n; ++i) yr[i] = (xr[i] - m) * iv * g + b;
    });
  };
  with_float_or_double(a.dtype, "channel_normalize", run);
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NDX_KERNEL_ROWWISE_INL_H_
