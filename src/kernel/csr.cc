// CSR times dense kernels (kernel/csr.h). A row of A @ rhs is a sum of rhs rows scaled by the
// row's values: its columns are taken four vectors at a time and kept in registers across the
// row's values, so the output is written once instead of loaded and stored per value (the
// plain loop, even vectorized, ran at 0.66x SciPy's CSR product on 64 columns). One column
// (matrix-vector) is a gather-and-dot with four running sums.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernel/csr.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <cstdint>

#include "kernel/csr.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

int64_t first_index_outside_lanes(const int64_t* HWY_RESTRICT indices, int64_t nnz, int64_t limit) {
  const hn::ScalableTag<int64_t> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d), last = hn::Set(d, limit - 1);
  const auto outside = [&](int64_t j) {
    const auto x = hn::LoadU(d, indices + j);
    return hn::Or(hn::Gt(zero, x), hn::Gt(x, last));
  };
  int64_t j = 0;
  for (; j + 4 * N <= nnz; j += 4 * N) {
    const auto bad =
        hn::Or(hn::Or(outside(j), outside(j + N)), hn::Or(outside(j + 2 * N), outside(j + 3 * N)));
    if (!hn::AllFalse(d, bad)) break;
  }
  for (; j < nnz; ++j)
    if (indices[j] < 0 || indices[j] >= limit) return j;
  return nnz;
}

// One column: out[i] = sum_j val[j] * rhs[indices[j]].
template <class T>
void csr_times_vector(const int64_t* HWY_RESTRICT indptr, const int64_t* HWY_RESTRICT indices,
                      const T* HWY_RESTRICT val, const T* HWY_RESTRICT rhs, T* HWY_RESTRICT out,
                      int64_t r0, int64_t r1) {
  for (int64_t i = r0; i < r1; ++i) {
    T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t j = indptr[i];
    const int64_t end = indptr[i + 1];
    for (; j + 4 <= end; j += 4) {
      s0 += val[j] * rhs[indices[j]];
      s1 += val[j + 1] * rhs[indices[j + 1]];
      s2 += val[j + 2] * rhs[indices[j + 2]];
      s3 += val[j + 3] * rhs[indices[j + 3]];
    }
    for (; j < end; ++j) s0 += val[j] * rhs[indices[j]];
    out[i] = (s0 + s1) + (s2 + s3);
  }
}

template <class T>
void csr_times_dense_lanes(const int64_t* HWY_RESTRICT indptr, const int64_t* HWY_RESTRICT indices,
                           const T* HWY_RESTRICT val, const T* HWY_RESTRICT rhs, int64_t n,
                           T* HWY_RESTRICT out, int64_t r0, int64_t r1) {
  if (n == 1) return csr_times_vector(indptr, indices, val, rhs, out, r0, r1);
  const hn::ScalableTag<T> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = r0; i < r1; ++i) {
    const int64_t begin = indptr[i], end = indptr[i + 1];
    T* HWY_RESTRICT o = out + i * n;
    int64_t c = 0;
    for (; c + 4 * N <= n; c += 4 * N) {
      auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
      for (int64_t j = begin; j < end; ++j) {
        const auto v = hn::Set(d, val[j]);
        const T* r = rhs + indices[j] * n + c;
        a0 = hn::MulAdd(v, hn::LoadU(d, r), a0);
        a1 = hn::MulAdd(v, hn::LoadU(d, r + N), a1);
        a2 = hn::MulAdd(v, hn::LoadU(d, r + 2 * N), a2);
        a3 = hn::MulAdd(v, hn::LoadU(d, r + 3 * N), a3);
      }
      hn::StoreU(a0, d, o + c);
      hn::StoreU(a1, d, o + c + N);
      hn::StoreU(a2, d, o + c + 2 * N);
      hn::StoreU(a3, d, o + c + 3 * N);
    }
    for (; c + N <= n; c += N) {
      auto a = hn::Zero(d);
      for (int64_t j = begin; j < end; ++j)
        a = hn::MulAdd(hn::Set(d, val[j]), hn::LoadU(d, rhs + indices[j] * n + c), a);
      hn::StoreU(a, d, o + c);
    }
    // the last columns, fewer than a vector (no masked loads: Highway's emulated targets
    // read the whole vector, past the end of rhs)
    for (; c < n; ++c) {
      T s = 0;
      for (int64_t j = begin; j < end; ++j) s += val[j] * rhs[indices[j] * n + c];
      o[c] = s;
    }
  }
}

template <class T>
void csr_transpose_add_lanes(const int64_t* HWY_RESTRICT indptr,
                             const int64_t* HWY_RESTRICT indices, const T* HWY_RESTRICT val,
                             const T* HWY_RESTRICT rhs, int64_t n, int64_t c0, int64_t c1,
                             T* HWY_RESTRICT out, int64_t r0, int64_t r1) {
  const hn::ScalableTag<T> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = r0; i < r1; ++i) {
    const T* r = rhs + i * n;
    for (int64_t j = indptr[i]; j < indptr[i + 1]; ++j) {
      T* o = out + indices[j] * n;
      const auto v = hn::Set(d, val[j]);
      int64_t c = c0;
      for (; c + N <= c1; c += N)
        hn::StoreU(hn::MulAdd(v, hn::LoadU(d, r + c), hn::LoadU(d, o + c)), d, o + c);
      for (; c < c1; ++c) o[c] += val[j] * r[c];
    }
  }
}

template <class T>
void csr_sampled_dot_lanes(const int64_t* HWY_RESTRICT indptr, const int64_t* HWY_RESTRICT indices,
                           const T* HWY_RESTRICT left, const T* HWY_RESTRICT right, int64_t n,
                           bool swap, T* HWY_RESTRICT g, int64_t r0, int64_t r1) {
  const hn::ScalableTag<T> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = r0; i < r1; ++i)
    for (int64_t j = indptr[i]; j < indptr[i + 1]; ++j) {
      const T* a = left + (swap ? indices[j] : i) * n;
      const T* b = right + (swap ? i : indices[j]) * n;
      auto acc = hn::Zero(d);
      int64_t c = 0;
      for (; c + N <= n; c += N) acc = hn::MulAdd(hn::LoadU(d, a + c), hn::LoadU(d, b + c), acc);
      T s = hn::GetLane(hn::SumOfLanes(d, acc));
      for (; c < n; ++c) s += a[c] * b[c];
      g[j] = s;
    }
}

void times_f32(const int64_t* p, const int64_t* x, const float* v, const float* r, int64_t n,
               float* o, int64_t r0, int64_t r1) {
  csr_times_dense_lanes(p, x, v, r, n, o, r0, r1);
}
void times_f64(const int64_t* p, const int64_t* x, const double* v, const double* r, int64_t n,
               double* o, int64_t r0, int64_t r1) {
  csr_times_dense_lanes(p, x, v, r, n, o, r0, r1);
}
void transpose_f32(const int64_t* p, const int64_t* x, const float* v, const float* r, int64_t n,
                   int64_t c0, int64_t c1, float* o, int64_t r0, int64_t r1) {
  csr_transpose_add_lanes(p, x, v, r, n, c0, c1, o, r0, r1);
}
void transpose_f64(const int64_t* p, const int64_t* x, const double* v, const double* r, int64_t n,
                   int64_t c0, int64_t c1, double* o, int64_t r0, int64_t r1) {
  csr_transpose_add_lanes(p, x, v, r, n, c0, c1, o, r0, r1);
}
void sampled_f32(const int64_t* p, const int64_t* x, const float* a, const float* b, int64_t n,
                 bool swap, float* g, int64_t r0, int64_t r1) {
  csr_sampled_dot_lanes(p, x, a, b, n, swap, g, r0, r1);
}
void sampled_f64(const int64_t* p, const int64_t* x, const double* a, const double* b, int64_t n,
                 bool swap, double* g, int64_t r0, int64_t r1) {
  csr_sampled_dot_lanes(p, x, a, b, n, swap, g, r0, r1);
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernel/dispatch.h"

namespace ndx::kernel {

int64_t first_index_outside(const int64_t* indices, int64_t nnz, int64_t limit) {
  static const auto fn = NDX_DISPATCH_FN(first_index_outside_lanes);
  return fn(indices, nnz, limit);
}

void csr_times_dense(const int64_t* p, const int64_t* x, const float* v, const float* r, int64_t n,
                     float* o, int64_t r0, int64_t r1) {
  static const auto fn = NDX_DISPATCH_FN(times_f32);
  fn(p, x, v, r, n, o, r0, r1);
}
void csr_times_dense(const int64_t* p, const int64_t* x, const double* v, const double* r,
                     int64_t n, double* o, int64_t r0, int64_t r1) {
  static const auto fn = NDX_DISPATCH_FN(times_f64);
  fn(p, x, v, r, n, o, r0, r1);
}
void csr_transpose_add(const int64_t* p, const int64_t* x, const float* v, const float* r,
                       int64_t n, int64_t c0, int64_t c1, float* o, int64_t r0, int64_t r1) {
  static const auto fn = NDX_DISPATCH_FN(transpose_f32);
  fn(p, x, v, r, n, c0, c1, o, r0, r1);
}
void csr_transpose_add(const int64_t* p, const int64_t* x, const double* v, const double* r,
                       int64_t n, int64_t c0, int64_t c1, double* o, int64_t r0, int64_t r1) {
  static const auto fn = NDX_DISPATCH_FN(transpose_f64);
  fn(p, x, v, r, n, c0, c1, o, r0, r1);
}
void csr_sampled_dot(const int64_t* p, const int64_t* x, const float* a, const float* b, int64_t n,
                     bool swap, float* g, int64_t r0, int64_t r1) {
  static const auto fn = NDX_DISPATCH_FN(sampled_f32);
  fn(p, x, a, b, n, swap, g, r0, r1);
}
void csr_sampled_dot(const int64_t* p, const int64_t* x, const double* a, const double* b,
                     int64_t n, bool swap, double* g, int64_t r0, int64_t r1) {
  static const auto fn = NDX_DISPATCH_FN(sampled_f64);
  fn(p, x, a, b, n, swap, g, r0, r1);
}

}  // namespace ndx::kernel
#endif  // HWY_ONCE
