// np.linalg's LAPACK ops (registered as _npi_*): inv, det, slogdet, solve, cholesky, qr, eigh,
// eig, svd and lstsq, batched over leading dimensions, in float32, float64, complex64 and
// complex128 (LAPACK's s, d, c and z routines). LAPACK comes from OpenBLAS (its Fortran entry
// points, LP64); matrices are handed to it column-major.
//
// Gradients: inv, det, slogdet and solve compose registered ops (so they differentiate again,
// and take complex input); cholesky, qr, eigh and svd have first-order backward ops that run
// in double, for real input.
// Singular or non-convergent input raises LinAlgError (a ValueError, as NumPy's).
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"
#include "operator/nn_check.h"

extern "C" {
// Fortran COMPLEX is laid out as std::complex; the hidden size_t arguments are the lengths of
// the character arguments (gfortran's convention).
#define NDX_LAPACK_DECLARE_COMMON_(P, T)                                                         \
  void P##getrf_(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);        \
  void P##getri_(const int* n, T* a, const int* lda, const int* ipiv, T* work, const int* lwork, \
                 int* info);                                                                     \
  void P##getrs_(const char* trans, const int* n, const int* nrhs, const T* a, const int* lda,   \
                 const int* ipiv, T* b, const int* ldb, int* info, size_t);                      \
  void P##potrf_(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);       \
  void P##geqrf_(const int* m, const int* n, T* a, const int* lda, T* tau, T* work,              \
                 const int* lwork, int* info);
#define NDX_LAPACK_DECLARE_REAL_(P, T)                                                            \
  NDX_LAPACK_DECLARE_COMMON_(P, T)                                                                \
  void P##orgqr_(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau,    \
                 T* work, const int* lwork, int* info);                                           \
  void P##syevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w,    \
                 T* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,     \
                 size_t);                                                                         \
  void P##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u,  \
                 const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, int* iwork,   \
                 int* info, size_t);                                                              \
  void P##geev_(const char* jobvl, const char* jobvr, const int* n, T* a, const int* lda, T* wr,  \
                T* wi, T* vl, const int* ldvl, T* vr, const int* ldvr, T* work, const int* lwork, \
                int* info, size_t, size_t);                                                       \
  void P##gelsd_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b,         \
                 const int* ldb, T* s, const T* rcond, int* rank, T* work, const int* lwork,      \
                 int* iwork, int* info);                                                          \
  void P##trtri_(const char* uplo, const char* diag, const int* n, T* a, const int* lda,          \
                 int* info, size_t, size_t);
#define NDX_LAPACK_DECLARE_COMPLEX_(P, T, R)                                                     \
  NDX_LAPACK_DECLARE_COMMON_(P, T)                                                               \
  void P##ungqr_(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau,   \
                 T* work, const int* lwork, int* info);                                          \
  void P##heevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, R* w,   \
                 T* work, const int* lwork, R* rwork, const int* lrwork, int* iwork,             \
                 const int* liwork, int* info, size_t, size_t);                                  \
  void P##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, R* s, T* u, \
                 const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, R* rwork,    \
                 int* iwork, int* info, size_t);                                                 \
  void P##geev_(const char* jobvl, const char* jobvr, const int* n, T* a, const int* lda, T* w,  \
                T* vl, const int* ldvl, T* vr, const int* ldvr, T* work, const int* lwork,       \
                R* rwork, int* info, size_t, size_t);                                            \
  void P##gelsd_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b,        \
                 const int* ldb, R* s, const R* rcond, int* rank, T* work, const int* lwork,     \
                 R* rwork, int* iwork, int* info);
NDX_LAPACK_DECLARE_REAL_(s, float)
NDX_LAPACK_DECLARE_REAL_(d, double)
NDX_LAPACK_DECLARE_COMPLEX_(c, std::complex<float>, float)
NDX_LAPACK_DECLARE_COMPLEX_(z, std::complex<double>, double)
#undef NDX_LAPACK_DECLARE_COMPLEX_
#undef NDX_LAPACK_DECLARE_REAL_
#undef NDX_LAPACK_DECLARE_COMMON_
}

namespace ndx {
namespace {

// The real type of a LAPACK element type: R for std::complex<R>.
template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<std::complex<R>> {
  using type = R;
};
template <class T>
using real_of = typename RealOf<T>::type;
template <class T>
using complex_of_t = std::complex<real_of<T>>;

// ---- LAPACK by element type ----
// One overload set for float, double, complex64 and complex128. The complex routines' extra
// real workspaces (rwork) are sized and owned here, so the callers read the same for all four.
namespace lapack {
#define NDX_LAPACK_COMMON_(P, T)                                                                 \
  inline void getrf(int m, int n, T* a, int* ipiv, int* info) {                                  \
    P##getrf_(&m, &n, a, &m, ipiv, info);                                                        \
  }                                                                                              \
  inline void getri(int n, T* a, const int* ipiv, T* work, int lwork, int* info) {               \
    P##getri_(&n, a, &n, ipiv, work, &lwork, info);                                              \
  }                                                                                              \
  inline void getrs(char trans, int n, int nrhs, const T* a, const int* ipiv, T* b, int* info) { \
    P##getrs_(&trans, &n, &nrhs, a, &n, ipiv, b, &n, info, 1);                                   \
  }                                                                                              \
  inline void potrf(char uplo, int n, T* a, int* info) { P##potrf_(&uplo, &n, a, &n, info, 1); } \
  inline void geqrf(int m, int n, T* a, T* tau, T* work, int lwork, int* info) {                 \
    P##geqrf_(&m, &n, a, &m, tau, work, &lwork, info);                                           \
  }
#define NDX_LAPACK_REAL_(P, T)                                                                    \
  NDX_LAPACK_COMMON_(P, T)                                                                        \
  inline void orgqr(int m, int n, int k, T* a, const T* tau, T* work, int lwork, int* info) {     \
    P##orgqr_(&m, &n, &k, a, &m, tau, work, &lwork, info);                                        \
  }                                                                                               \
  inline void syevd(char jobz, char uplo, int n, T* a, T* w, T* work, int lwork, int* iwork,      \
                    int liwork, int* info) {                                                      \
    P##syevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, info, 1, 1);              \
  }                                                                                               \
  inline void gesdd(char jobz, int m, int n, T* a, T* s, T* u, int ldu, T* vt, int ldvt, T* work, \
                    int lwork, int* iwork, int* info) {                                           \
    P##gesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);         \
  }                                                                                               \
  inline void geev(int n, T* a, T* wr, T* wi, T* vr, T* work, int lwork, int* info) {             \
    const char no = 'N', yes = 'V';                                                               \
    int one = 1;                                                                                  \
    P##geev_(&no, &yes, &n, a, &n, wr, wi, nullptr, &one, vr, &n, work, &lwork, info, 1, 1);      \
  }                                                                                               \
  inline void gelsd(int m, int n, int nrhs, T* a, T* b, int ldb, T* s, T rcond, int* rank,        \
                    T* work, int lwork, int* iwork, int* info) {                                  \
    P##gelsd_(&m, &n, &nrhs, a, &m, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info);         \
  }
// rwork sizes from LAPACK's documentation of zheevd (jobz 'V'), zgesdd and zgeev; zgelsd
// reports its own in a workspace query.
#define NDX_LAPACK_COMPLEX_(P, T, R)                                                              \
  NDX_LAPACK_COMMON_(P, T)                                                                        \
  inline void orgqr(int m, int n, int k, T* a, const T* tau, T* work, int lwork, int* info) {     \
    P##ungqr_(&m, &n, &k, a, &m, tau, work, &lwork, info);                                        \
  }                                                                                               \
  inline void syevd(char jobz, char uplo, int n, T* a, R* w, T* work, int lwork, int* iwork,      \
                    int liwork, int* info) {                                                      \
    std::vector<R> rwork(std::max<size_t>(1 + 5 * size_t(n) + 2 * size_t(n) * n, 1));             \
    const int lrwork = lwork == -1 ? -1 : static_cast<int>(rwork.size());                         \
    P##heevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, rwork.data(), &lrwork, iwork, &liwork,    \
              info, 1, 1);                                                                        \
  }                                                                                               \
  inline void gesdd(char jobz, int m, int n, T* a, R* s, T* u, int ldu, T* vt, int ldvt, T* work, \
                    int lwork, int* iwork, int* info) {                                           \
    const size_t lo = std::min(m, n), hi = std::max(m, n);                                        \
    std::vector<R> rwork(std::max<size_t>(                                                        \
        jobz == 'N' ? 7 * lo : std::max(5 * lo * lo + 5 * lo, 2 * hi * lo + 2 * lo * lo + lo),    \
        1));                                                                                      \
    P##gesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, rwork.data(), iwork,     \
              info, 1);                                                                           \
  }                                                                                               \
  inline void geev(int n, T* a, T* w, T* vr, T* work, int lwork, int* info) {                     \
    const char no = 'N', yes = 'V';                                                               \
    int one = 1;                                                                                  \
    std::vector<R> rwork(std::max(2 * n, 1));                                                     \
    P##geev_(&no, &yes, &n, a, &n, w, nullptr, &one, vr, &n, work, &lwork, rwork.data(), info, 1, \
             1);                                                                                  \
  }                                                                                               \
  inline void gelsd(int m, int n, int nrhs, T* a, T* b, int ldb, R* s, R rcond, int* rank,        \
                    T* work, int lwork, int* iwork, int* info) {                                  \
    std::vector<R> rwork(1);                                                                      \
    if (lwork != -1) { /* ask for rwork's size first */                                           \
      T query{};                                                                                  \
      int iquery = 0, minus_one = -1;                                                             \
      P##gelsd_(&m, &n, &nrhs, a, &m, b, &ldb, s, &rcond, rank, &query, &minus_one, rwork.data(), \
                &iquery, info);                                                                   \
      rwork.resize(std::max<size_t>(static_cast<size_t>(rwork[0]), 1));                           \
    }                                                                                             \
    P##gelsd_(&m, &n, &nrhs, a, &m, b, &ldb, s, &rcond, rank, work, &lwork, rwork.data(), iwork,  \
              info);                                                                              \
  }
NDX_LAPACK_REAL_(s, float)
NDX_LAPACK_REAL_(d, double)
NDX_LAPACK_COMPLEX_(c, std::complex<float>, float)
NDX_LAPACK_COMPLEX_(z, std::complex<double>, double)
#undef NDX_LAPACK_COMPLEX_
#undef NDX_LAPACK_REAL_
#undef NDX_LAPACK_COMMON_
inline void trtri(char uplo, int n, double* a, int* info) {
  const char diag = 'N';
  dtrtri_(&uplo, &diag, &n, a, &n, info, 1, 1);
}
// A workspace query's answer (LAPACK returns it in work[0], a complex one in its real part).
template <class T>
int64_t query_size(T q) {
  return std::max<int64_t>(static_cast<int64_t>(std::real(q)), 1);
}
}  // namespace lapack

[[noreturn]] void linalg_error(const std::string& op, const std::string& what) {
  raise(ErrorKind::kLinAlgError, "[", op, "] ", what);
}

// ---- shapes ----
struct Batch {
  int64_t count = 1;  // product of the leading dims
  int64_t rows = 0, cols = 0;
};

Batch batch_of(const std::string& op, const Shape& s, bool square) {
  if (s.ndim() < 2)
    linalg_error(op, std::to_string(s.ndim()) +
                         "-dimensional array given. Array must be at least two-dimensional");
  Batch b;
  for (int i = 0; i < s.ndim() - 2; ++i) b.count *= s[i];
  b.rows = s[s.ndim() - 2], b.cols = s[s.ndim() - 1];
  if (square && b.rows != b.cols)
    linalg_error(op, "Last 2 dimensions of the array must be square; got " + s.str());
  if (b.rows > std::numeric_limits<int>::max() / 2 || b.cols > std::numeric_limits<int>::max() / 2)
    value_error("[", op, "] matrices this large are beyond LAPACK's 32-bit sizes; got ", s.str());
  return b;
}

Shape leading(const Shape& s, int drop) {
  Shape out;
  for (int i = 0; i < s.ndim() - drop; ++i) out.push_back(s[i]);
  return out;
}
Shape with(Shape s, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) s.push_back(d);
  return s;
}

// The one dtype of a linalg op's inputs: float32, float64, complex64 or complex128.
DType linalg_input_type(const NodeAttrs& attrs, const DTypeVector& in) {
  const DType t = in[0];
  for (DType u : in)
    if (u != t)
      type_error("[", op_name(attrs), "] inputs must have one dtype; got ", t, " and ", u);
  if (t != DType::kFloat32 && t != DType::kFloat64 && !is_complex(t))
    type_error("[", op_name(attrs), "] array type ", t,
               " is unsupported in linalg (float32, float64, complex64 and complex128 are)");
  return t;
}

// What each output's dtype is, given the input's: the same, its real counterpart (singular
// values, eigenvalues of Hermitian matrices, log|det|), its complex counterpart (eig) or int64.
enum class Out { kSame, kReal, kComplex, kInt64 };
DType output_type(Out rule, DType t) {
  switch (rule) {
    case Out::kReal:
      return real_dtype(t);
    case Out::kComplex:
      return complex_dtype(t);
    case Out::kInt64:
      return DType::kInt64;
    default:
      return t;
  }
}
FInferType linalg_types(std::vector<Out> rules) {
  return [rules = std::move(rules)](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
    const DType t = linalg_input_type(attrs, *in);
    for (size_t i = 0; i < out->size(); ++i)
      (*out)[i] = output_type(i < rules.size() ? rules[i] : Out::kSame, t);
    return true;
  };
}

// ---- column-major staging ----
template <class T>
void to_col_major(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
}
template <class T>
void from_col_major(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = src[c * rows + r];
}

template <class T>
bool all_finite(const T* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(std::real(p[i])) || !std::isfinite(std::imag(p[i]))) return false;
  return true;
}

// Whether the row-major n x n matrix's lower (or upper) triangle is finite: the one triangle
// eigh reads (NumPy ignores the other, whatever it holds).
template <class T>
bool triangle_finite(const T* p, int64_t n, bool lower) {
  for (int64_t i = 0; i < n; ++i) {
    const T* row = p + i * n;
    if (!(lower ? all_finite(row, i + 1) : all_finite(row + i, n - i))) return false;
  }
  return true;
}

// Calls fn(T{}) with T the element type of t: float, double, complex64 or complex128.
template <class Fn>
void lapack_switch(DType t, Fn&& fn) {
  switch (t) {
    case DType::kFloat64:
      return fn(double{});
    case DType::kComplex64:
      return fn(complex64{});
    case DType::kComplex128:
      return fn(complex128{});
    default:
      return fn(float{});
  }
}

template <class T>
T conj_of(T v) {
  if constexpr (is_complex_v<T>)
    return std::conj(v);
  else
    return v;
}

// Writes `result` (contiguous, out's shape and dtype) to out as req asks.
void finish(const NDArray& result, const TBlob& out, OpReqType req) {
  if (req != kNullOp) kernel::copy(kernel::to_blob(result), out, req);
}

// ============================== inv / det / slogdet ==============================
void inv_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Batch b = batch_of(op_name(attrs), in[0].shape, true);
  NDArray result(in[0].shape, in[0].dtype);
  lapack_switch(in[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    const int n = static_cast<int>(b.rows);
    std::vector<int> ipiv(std::max(n, 1));
    std::vector<T> work(std::max<int64_t>(int64_t{n} * 64, 1));
    const T* src = in[0].ptr<T>();
    T* dst = result.data<T>();
    for (int64_t k = 0; k < b.count && n > 0; ++k) {
      T* m = dst + k * n * n;
      std::copy(src + k * n * n, src + (k + 1) * n * n, m);  // inv(A^T) = inv(A)^T
      int info = 0;
      lapack::getrf(n, n, m, ipiv.data(), &info);
      if (info > 0) linalg_error(op_name(attrs), "Singular matrix");
      lapack::getri(n, m, ipiv.data(), work.data(), static_cast<int>(work.size()), &info);
      if (info > 0) linalg_error(op_name(attrs), "Singular matrix");
    }
  });
  finish(result, out[0], req[0]);
}

// sign and log|det| of each matrix from its LU factors (det(A^T) = det(A)); the sign of a
// complex determinant is det / |det|.
template <class T>
void lu_sign_logdet(const TBlob& a, const Batch& b, complex128* sign, double* logdet) {
  const int n = static_cast<int>(b.rows);
  std::vector<int> ipiv(std::max(n, 1));
  std::vector<T> m(static_cast<size_t>(n) * n);
  for (int64_t k = 0; k < b.count; ++k) {
    std::copy(a.ptr<T>() + k * n * n, a.ptr<T>() + (k + 1) * n * n, m.begin());
    int info = 0;
    if (n > 0) lapack::getrf(n, n, m.data(), ipiv.data(), &info);
    complex128 s = 1;
    double l = 0;
    for (int i = 0; i < n; ++i) {
      const auto d = m[static_cast<size_t>(i) * n + i];
      const double mag = std::abs(d);
      if (ipiv[i] != i + 1) s = -s;
      if (mag > 0) s *= complex128(std::real(d) / mag, std::imag(d) / mag);
      l += std::log(mag);
    }
    if (info > 0) s = 0, l = -std::numeric_limits<double>::infinity();
    sign[k] = s, logdet[k] = l;
  }
}

// The determinants in complex128 (float64 for real input), then cast to out's dtype.
void det_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Batch b = batch_of(op_name(attrs), in[0].shape, true);
  std::vector<complex128> sign(b.count);
  std::vector<double> logdet(b.count);
  lapack_switch(in[0].dtype, [&](auto zero) {
    lu_sign_logdet<decltype(zero)>(in[0], b, sign.data(), logdet.data());
  });
  NDArray det(out[0].shape, DType::kComplex128);
  for (int64_t k = 0; k < b.count; ++k) det.data<complex128>()[k] = sign[k] * std::exp(logdet[k]);
  finish(det, out[0], req[0]);
}

void slogdet_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Batch b = batch_of(op_name(attrs), in[0].shape, true);
  NDArray sign(out[0].shape, DType::kComplex128), logdet(out[1].shape, DType::kFloat64);
  lapack_switch(in[0].dtype, [&](auto zero) {
    lu_sign_logdet<decltype(zero)>(in[0], b, sign.data<complex128>(), logdet.data<double>());
  });
  finish(sign, out[0], req[0]);
  finish(logdet, out[1], req[1]);
}

bool batch_scalar_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  batch_of(op_name(attrs), (*in)[0], true);
  for (auto& o : *out) o = leading((*in)[0], 2);
  return true;
}
bool square_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  batch_of(op_name(attrs), (*in)[0], true);
  (*out)[0] = (*in)[0];
  return true;
}

NodeEntry op1(const char* op, NodeEntry a) { return make_node(op, {std::move(a)}); }
NodeEntry op2(const char* op, NodeEntry a, NodeEntry b) {
  return make_node(op, {std::move(a), std::move(b)});
}
NodeEntry transposed(NodeEntry a) {
  return make_node("_np_swapaxes", {std::move(a)}, {{"axis1", "-1"}, {"axis2", "-2"}});
}
NodeEntry as_matrix_scale(NodeEntry a) {  // (...,) -> (..., 1, 1)
  NodeEntry e = make_node("_np_expand_dims", {std::move(a)}, {{"axis", "-1"}});
  return make_node("_np_expand_dims", {std::move(e)}, {{"axis", "-1"}});
}
// The conjugate transpose A^H (a transpose, plus a copy, for real A).
NodeEntry adjoint(NodeEntry a) { return op1("_np_conjugate", transposed(std::move(a))); }

// The composed gradients follow the conjugate Wirtinger convention (PyTorch's): for a real
// loss, the gradient of complex A is dL/dRe(A) + i dL/dIm(A). For real A they reduce to the
// familiar formulas with A^H = A^T.
// d inv(A) = -inv(A) dA inv(A):  grad_A = -inv(A)^H g inv(A)^H.
std::vector<NodeEntry> inv_grad(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const NodeEntry h = adjoint(NodeEntry{n, 0, 0});
  return {op1("_np_negative", op2("_np_matmul", op2("_np_matmul", h, og[0]), h))};
}
// d det(A) = det(A) tr(inv(A) dA):  grad_A = g conj(det(A)) inv(A)^H.
std::vector<NodeEntry> det_grad(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const NodeEntry scale = as_matrix_scale(op2("_npi_multiply_conj", og[0], NodeEntry{n, 0, 0}));
  return {op2("_np_multiply", scale, adjoint(op1("_npi_inv", n->inputs[0])))};
}
// With t = tr(inv(A) dA): d log|det| = Re t and d sign = i sign Im t (0 for real A), so
// grad_A = c inv(A)^H with c = g_logabsdet - i Im(sign conj(g_sign)).
std::vector<NodeEntry> slogdet_grad(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const NodeEntry sign{n, 0, 0};
  const NodeEntry turn =
      op2("_npi_imag_unit_times", op1("_np_imag", op2("_npi_multiply_conj", sign, og[0])), sign);
  const NodeEntry c = op2("_np_subtract", og[1], turn);
  return {op2("_np_multiply", as_matrix_scale(c), adjoint(op1("_npi_inv", n->inputs[0])))};
}

// ============================== solve ==============================
// a (..., M, M) and b (..., M, K) with the same leading dims (np.linalg.solve broadcasts and
// handles vector b in Python).
bool solve_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const std::string& name = op_name(attrs);
  const Batch a = batch_of(name, (*in)[0], true);
  const Shape& b = (*in)[1];
  if (b.ndim() != (*in)[0].ndim() || leading(b, 2) != leading((*in)[0], 2) ||
      b[b.ndim() - 2] != a.rows)
    value_error("[", name, "] b must have shape (..., ", a.rows, ", K) with a's leading dims ",
                leading((*in)[0], 2).str(), "; got ", b.str());
  (*out)[0] = b;
  return true;
}

void solve_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Batch a = batch_of(op_name(attrs), in[0].shape, true);
  const int64_t k = in[1].shape[in[1].ndim() - 1];
  NDArray result(in[1].shape, in[1].dtype);
  lapack_switch(in[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    const int n = static_cast<int>(a.rows), nrhs = static_cast<int>(k);
    std::vector<int> ipiv(std::max(n, 1));
    std::vector<T> lu(static_cast<size_t>(n) * n), rhs(static_cast<size_t>(n) * k);
    for (int64_t i = 0; i < a.count && n > 0 && k > 0; ++i) {
      // LAPACK sees the row-major A as A^T: factor it and solve with trans = 'T'.
      std::copy(in[0].ptr<T>() + i * n * n, in[0].ptr<T>() + (i + 1) * n * n, lu.begin());
      to_col_major(in[1].ptr<T>() + i * n * k, n, k, rhs.data());
      int info = 0;
      lapack::getrf(n, n, lu.data(), ipiv.data(), &info);
      if (info > 0) linalg_error(op_name(attrs), "Singular matrix");
      lapack::getrs('T', n, nrhs, lu.data(), ipiv.data(), rhs.data(), &info);
      from_col_major(rhs.data(), n, k, result.data<T>() + i * n * k);
    }
  });
  finish(result, out[0], req[0]);
}

// x = inv(A) b:  grad_b = inv(A)^H g = solve(A^H, g),  grad_A = -grad_b x^H.
std::vector<NodeEntry> solve_grad(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const NodeEntry gb = op2("_npi_solve", adjoint(n->inputs[0]), og[0]);
  return {op1("_np_negative", op2("_np_matmul", gb, adjoint(NodeEntry{n, 0, 0}))), gb};
}

// ============================== dense double helpers for backward ops
// ============================== A row-major double matrix.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0) {}
  double& operator()(int64_t r, int64_t c) { return v[static_cast<size_t>(r * cols + c)]; }
  double operator()(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

Mat read_mat(const TBlob& b, int64_t index, int64_t rows, int64_t cols) {
  Mat m(rows, cols);
  kernel::convert(m.v.data(), DType::kFloat64, 1,
                  static_cast<const char*>(b.dptr) + index * rows * cols * dtype_size(b.dtype),
                  b.dtype, 1, rows * cols);
  return m;
}
void write_mat(const Mat& m, NDArray& dst, int64_t index) {
  kernel::convert(static_cast<char*>(dst.raw_data()) + index * m.rows * m.cols * dst.itemsize(),
                  dst.dtype(), 1, m.v.data(), DType::kFloat64, 1, m.rows * m.cols);
}

// op(a) op(b), op = transpose where asked.
Mat mm(const Mat& a, const Mat& b, bool ta = false, bool tb = false) {
  const int64_t m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols, n = tb ? b.rows : b.cols;
  Mat c(m, n);
  if (m == 0 || n == 0 || k == 0) return c;
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a.v.data(),
              static_cast<int>(a.cols), b.v.data(), static_cast<int>(b.cols), 0.0, c.v.data(),
              static_cast<int>(n));
  return c;
}
Mat transpose(const Mat& a) {
  Mat t(a.cols, a.rows);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t c = 0; c < a.cols; ++c) t(c, r) = a(r, c);
  return t;
}
Mat symmetric_part(const Mat& a) {
  Mat s(a.rows, a.cols);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t c = 0; c < a.cols; ++c) s(r, c) = 0.5 * (a(r, c) + a(c, r));
  return s;
}
// The inverse of a lower-triangular matrix (LAPACK's trtri sees row-major lower as upper).
Mat lower_inverse(const std::string& op, Mat l) {
  int info = 0;
  if (l.rows > 0) lapack::trtri('U', static_cast<int>(l.rows), l.v.data(), &info);
  if (info > 0) linalg_error(op, "the factor is singular; the gradient is undefined");
  return l;
}

// ============================== cholesky ==============================
struct CholeskyParam {
  bool upper = false;
  static void declare(ParamDecl<CholeskyParam>& d) {
    d.field("upper", &CholeskyParam::upper)
        .set_default(false)
        .describe("Return the upper factor U (A = U^T U) instead of the lower L (A = L L^T).");
  }
};

void cholesky_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Batch b = batch_of(op_name(attrs), in[0].shape, true);
  const bool upper = attrs.get<CholeskyParam>().upper;
  NDArray result(in[0].shape, in[0].dtype);
  lapack_switch(in[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    const int n = static_cast<int>(b.rows);
    for (int64_t k = 0; k < b.count && n > 0; ++k) {
      T* m = result.data<T>() + k * n * n;
      std::copy(in[0].ptr<T>() + k * n * n, in[0].ptr<T>() + (k + 1) * n * n, m);
      // Row-major lower L is column-major upper: factor 'U' for L (reading A's lower triangle).
      int info = 0;
      lapack::potrf(upper ? 'L' : 'U', n, m, &info);
      if (info > 0) linalg_error(op_name(attrs), "Matrix is not positive definite");
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
          if (upper ? c < r : c > r) m[r * n + c] = 0;
    }
  });
  finish(result, out[0], req[0]);
}

// grad_A = sym(L^-T Phi(L^T G) L^-1), Phi = lower triangle with the diagonal halved.
void cholesky_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const Batch b = batch_of(op_name(attrs), in[1].shape, true);
  const bool upper = attrs.get<CholeskyParam>().upper;
  NDArray result(out[0].shape, out[0].dtype);
  for (int64_t k = 0; k < b.count; ++k) {
    Mat g = read_mat(in[0], k, b.rows, b.rows), l = read_mat(in[1], k, b.rows, b.rows);
    if (upper) g = transpose(g), l = transpose(l);
    Mat p = mm(l, g, true, false);
    for (int64_t r = 0; r < p.rows; ++r) {
      for (int64_t c = r + 1; c < p.cols; ++c) p(r, c) = 0;
      p(r, r) *= 0.5;
    }
    const Mat li = lower_inverse(op_name(attrs), l);
    write_mat(symmetric_part(mm(mm(li, p, true, false), li)), result, k);
  }
  finish(result, out[0], req[0]);
}

// ============================== qr ==============================
struct QRParam {
  std::string mode = "reduced";
  static void declare(ParamDecl<QRParam>& d) {
    d.field("mode", &QRParam::mode)
        .set_default(std::string("reduced"))
        .set_enum({"reduced", "complete"})
        .describe("'reduced': Q (M, K), R (K, N) with K = min(M, N); 'complete': Q (M, M).");
  }
};

bool qr_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Batch b = batch_of(op_name(attrs), (*in)[0], false);
  const int64_t k = std::min(b.rows, b.cols);
  const int64_t q = attrs.get<QRParam>().mode == "complete" ? b.rows : k;
  (*out)[0] = with(leading((*in)[0], 2), {b.rows, q});
  (*out)[1] = with(leading((*in)[0], 2), {q, b.cols});
  return true;
}

void qr_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Batch b = batch_of(op_name(attrs), in[0].shape, false);
  const int64_t q = out[0].shape[out[0].ndim() - 1];
  NDArray qa(out[0].shape, in[0].dtype), ra(out[1].shape, in[0].dtype);
  kernel::fill(kernel::to_blob(ra), 0.0);
  lapack_switch(in[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    const int m = static_cast<int>(b.rows), n = static_cast<int>(b.cols);
    const int k = std::min(m, n);
    std::vector<T> a(static_cast<size_t>(m) * std::max<int64_t>(n, q)), tau(std::max(k, 1));
    for (int64_t i = 0; i < b.count && m > 0; ++i) {
      to_col_major(in[0].ptr<T>() + i * m * n, m, n, a.data());
      int info = 0, lwork = -1;
      T query{};
      lapack::geqrf(m, n, a.data(), tau.data(), &query, lwork, &info);
      std::vector<T> work(lapack::query_size(query));
      if (n > 0)
        lapack::geqrf(m, n, a.data(), tau.data(), work.data(), static_cast<int>(work.size()),
                      &info);
      T* r = ra.data<T>() + i * q * n;  // R: the upper triangle of the first q rows
      for (int row = 0; row < q; ++row)
        for (int c = row; c < n; ++c) r[row * n + c] = a[static_cast<size_t>(c) * m + row];
      lapack::orgqr(m, static_cast<int>(q), k, a.data(), tau.data(), &query, -1, &info);
      work.resize(std::max<size_t>(work.size(), lapack::query_size(query)));
      if (q > 0)
        lapack::orgqr(m, static_cast<int>(q), k, a.data(), tau.data(), work.data(),
                      static_cast<int>(work.size()), &info);
      from_col_major(a.data(), m, q, qa.data<T>() + i * m * q);
    }
  });
  finish(qa, out[0], req[0]);
  finish(ra, out[1], req[1]);
}

// M >= N (R square and invertible): grad_A = (gQ + Q copyutl(M)) R^-T with
// M = gR R^T - Q^T gQ and copyutl(M) its upper triangle mirrored into the lower.
void qr_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const std::string& name = op_name(attrs);
  const Shape& qs = in[2].shape;
  const Shape& rs = in[3].shape;
  const int64_t m = qs[qs.ndim() - 2], q = qs[qs.ndim() - 1], n = rs[rs.ndim() - 1];
  if (m < n || q != n)
    not_implemented("[", name, "] the gradient of qr needs M >= N and mode='reduced'; got ",
                    "a of shape (..., ", m, ", ", n, ")");
  const int64_t count = out[0].size() / std::max<int64_t>(m * n, 1);
  NDArray result(out[0].shape, out[0].dtype);
  for (int64_t i = 0; i < count && m * n > 0; ++i) {
    const Mat gq = read_mat(in[0], i, m, n), gr = read_mat(in[1], i, n, n);
    const Mat qm = read_mat(in[2], i, m, n), r = read_mat(in[3], i, n, n);
    Mat mm_ = mm(gr, r, false, true);
    const Mat qtg = mm(qm, gq, true, false);
    for (size_t j = 0; j < mm_.v.size(); ++j) mm_.v[j] -= qtg.v[j];
    for (int64_t row = 0; row < n; ++row)
      for (int64_t c = 0; c < row; ++c) mm_(row, c) = mm_(c, row);
    Mat b = mm(qm, mm_);
    for (size_t j = 0; j < b.v.size(); ++j) b.v[j] += gq.v[j];
    // b R^-T = (R^-1 b^T)^T; R^T is lower triangular.
    const Mat rinv_t = lower_inverse(name, transpose(r));  // (R^T)^-1 = R^-T
    write_mat(mm(b, rinv_t, false, false), result, i);
  }
  finish(result, out[0], req[0]);
}

// ============================== eigh / eig ==============================
struct EighParam {
  std::string UPLO = "L";
  static void declare(ParamDecl<EighParam>& d) {
    d.field("UPLO", &EighParam::UPLO)
        .set_default(std::string("L"))
        .set_enum({"L", "U"})
        .describe("Which triangle of a to read: 'L' (lower) or 'U' (upper).");
  }
};

bool eig_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Batch b = batch_of(op_name(attrs), (*in)[0], true);
  (*out)[0] = with(leading((*in)[0], 2), {b.rows});
  (*out)[1] = (*in)[0];
  return true;
}

void eigh_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Batch b = batch_of(op_name(attrs), in[0].shape, true);
  // Row-major lower is column-major upper. LAPACK sees A^T, which is conj(A) for a Hermitian
  // A: the same eigenvalues, conjugated eigenvectors.
  const char uplo = attrs.get<EighParam>().UPLO == "L" ? 'U' : 'L';
  NDArray w(out[0].shape, real_dtype(in[0].dtype)), v(out[1].shape, in[0].dtype);
  lapack_switch(in[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    using R = real_of<T>;
    const int n = static_cast<int>(b.rows);
    std::vector<T> a(static_cast<size_t>(n) * n);
    for (int64_t k = 0; k < b.count && n > 0; ++k) {
      std::copy(in[0].ptr<T>() + k * n * n, in[0].ptr<T>() + (k + 1) * n * n, a.begin());
      if (!triangle_finite(a.data(), n, uplo == 'U'))
        linalg_error(op_name(attrs), "Eigenvalues did not converge (the input is not finite)");
      int info = 0, iquery = 0;
      T query{};
      R* wk = w.data<R>() + k * n;
      lapack::syevd('V', uplo, n, a.data(), wk, &query, -1, &iquery, -1, &info);
      std::vector<T> work(lapack::query_size(query));
      std::vector<int> iwork(std::max(iquery, 1));
      lapack::syevd('V', uplo, n, a.data(), wk, work.data(), static_cast<int>(work.size()),
                    iwork.data(), static_cast<int>(iwork.size()), &info);
      if (info > 0) linalg_error(op_name(attrs), "Eigenvalues did not converge");
      T* vk = v.data<T>() + k * n * n;
      from_col_major(a.data(), n, n, vk);
      if constexpr (is_complex_v<T>) std::transform(vk, vk + n * n, vk, conj_of<T>);
    }
  });
  finish(w, out[0], req[0]);
  finish(v, out[1], req[1]);
}

// grad_A = sym(V (diag(gw) + F o (V^T gV)) V^T), F_ij = 1 / (w_j - w_i) off the diagonal.
void eigh_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const Shape& vs = in[3].shape;
  const int64_t n = vs[vs.ndim() - 1], count = out[0].size() / std::max<int64_t>(n * n, 1);
  NDArray result(out[0].shape, out[0].dtype);
  for (int64_t k = 0; k < count && n > 0; ++k) {
    const Mat gw = read_mat(in[0], k, 1, n), gv = read_mat(in[1], k, n, n);
    const Mat w = read_mat(in[2], k, 1, n), v = read_mat(in[3], k, n, n);
    Mat inner = mm(v, gv, true, false);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        inner(i, j) = i == j ? gw(0, i) : inner(i, j) / (w(0, j) - w(0, i));
    write_mat(symmetric_part(mm(mm(v, inner), v, false, true)), result, k);
  }
  (void)attrs;
  finish(result, out[0], req[0]);
}

// The general eigenproblem. The results are complex (NumPy's Python layer makes them real when
// every eigenvalue of a real matrix is). A real matrix's complex eigenvalues come in conjugate
// pairs whose eigenvectors LAPACK packs as a real and an imaginary column.
template <class T>
void eig_one(const std::string& op, int n, const T* src, complex_of_t<T>* w, complex_of_t<T>* v) {
  std::vector<T> a(static_cast<size_t>(n) * n), vr(static_cast<size_t>(n) * n);
  to_col_major(src, n, n, a.data());
  if (!all_finite(a.data(), int64_t{n} * n))
    linalg_error(op, "Eigenvalues did not converge (the input is not finite)");
  int info = 0;
  T query{};
  if constexpr (is_complex_v<T>) {
    lapack::geev(n, a.data(), w, vr.data(), &query, -1, &info);
    std::vector<T> work(lapack::query_size(query));
    lapack::geev(n, a.data(), w, vr.data(), work.data(), static_cast<int>(work.size()), &info);
    if (info > 0) linalg_error(op, "Eigenvalues did not converge");
    from_col_major(vr.data(), n, n, v);
  } else {
    std::vector<T> wr(n), wi(n);
    lapack::geev(n, a.data(), wr.data(), wi.data(), vr.data(), &query, -1, &info);
    std::vector<T> work(lapack::query_size(query));
    lapack::geev(n, a.data(), wr.data(), wi.data(), vr.data(), work.data(),
                 static_cast<int>(work.size()), &info);
    if (info > 0) linalg_error(op, "Eigenvalues did not converge");
    using C = complex_of_t<T>;
    for (int j = 0; j < n; ++j) {
      w[j] = C(wr[j], wi[j]);
      const T* re = vr.data() + static_cast<size_t>(j) * n;  // column j
      const bool paired = wi[j] != 0 && j + 1 < n;
      const T* im = paired ? re + n : nullptr;
      for (int r = 0; r < n; ++r) v[static_cast<size_t>(r) * n + j] = C(re[r], im ? im[r] : T(0));
      if (!paired) continue;
      ++j;  // the conjugate partner
      w[j] = C(wr[j], wi[j]);
      for (int r = 0; r < n; ++r) v[static_cast<size_t>(r) * n + j] = C(re[r], -im[r]);
    }
  }
}

void eig_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Batch b = batch_of(op_name(attrs), in[0].shape, true);
  const DType ct = complex_dtype(in[0].dtype);
  NDArray w(out[0].shape, ct), v(out[1].shape, ct);
  lapack_switch(in[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    using C = complex_of_t<T>;
    const int n = static_cast<int>(b.rows);
    for (int64_t k = 0; k < b.count && n > 0; ++k)
      eig_one<T>(op_name(attrs), n, in[0].ptr<T>() + k * n * n, w.data<C>() + k * n,
                 v.data<C>() + k * n * n);
  });
  finish(w, out[0], req[0]);
  finish(v, out[1], req[1]);
}

// ============================== svd ==============================
struct SVDParam {
  bool full_matrices = true;
  bool compute_uv = true;
  static void declare(ParamDecl<SVDParam>& d) {
    d.field("full_matrices", &SVDParam::full_matrices)
        .set_default(true)
        .describe("U (M, M) and Vh (N, N) when true; (M, K) and (K, N) when false.");
    d.field("compute_uv", &SVDParam::compute_uv)
        .set_default(true)
        .describe("Return U, S, Vh when true; S alone when false.");
  }
};

bool svd_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Batch b = batch_of(op_name(attrs), (*in)[0], false);
  const auto& p = attrs.get<SVDParam>();
  const int64_t k = std::min(b.rows, b.cols);
  const Shape lead = leading((*in)[0], 2);
  if (!p.compute_uv) {
    (*out)[0] = with(lead, {k});
    return true;
  }
  (*out)[0] = with(lead, {b.rows, p.full_matrices ? b.rows : k});
  (*out)[1] = with(lead, {k});
  (*out)[2] = with(lead, {p.full_matrices ? b.cols : k, b.cols});
  return true;
}

void svd_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Batch b = batch_of(op_name(attrs), in[0].shape, false);
  const auto& p = attrs.get<SVDParam>();
  const int m = static_cast<int>(b.rows), n = static_cast<int>(b.cols), k = std::min(m, n);
  const int ucols = p.full_matrices ? m : k, vrows = p.full_matrices ? n : k;
  const size_t s_out = p.compute_uv ? 1 : 0;
  NDArray s(out[s_out].shape, real_dtype(in[0].dtype)), u, vh;
  if (p.compute_uv) u = NDArray(out[0].shape, in[0].dtype), vh = NDArray(out[2].shape, in[0].dtype);
  const char jobz = !p.compute_uv ? 'N' : p.full_matrices ? 'A' : 'S';
  lapack_switch(in[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> a(static_cast<size_t>(m) * n), uc(p.compute_uv ? size_t(m) * ucols : 1),
        vc(p.compute_uv ? size_t(vrows) * n : 1);
    std::vector<int> iwork(std::max(8 * k, 1));
    for (int64_t i = 0; i < b.count && k > 0; ++i) {
      to_col_major(in[0].ptr<T>() + i * m * n, m, n, a.data());
      if (!all_finite(a.data(), int64_t{m} * n))
        linalg_error(op_name(attrs), "SVD did not converge (the input is not finite)");
      int info = 0;
      T query{};
      real_of<T>* sp = s.data<real_of<T>>() + i * k;
      lapack::gesdd(jobz, m, n, a.data(), sp, uc.data(), m, vc.data(), std::max(vrows, 1), &query,
                    -1, iwork.data(), &info);
      std::vector<T> work(lapack::query_size(query));
      lapack::gesdd(jobz, m, n, a.data(), sp, uc.data(), m, vc.data(), std::max(vrows, 1),
                    work.data(), static_cast<int>(work.size()), iwork.data(), &info);
      if (info > 0) linalg_error(op_name(attrs), "SVD did not converge");
      if (!p.compute_uv) continue;
      from_col_major(uc.data(), m, ucols, u.data<T>() + i * m * ucols);
      from_col_major(vc.data(), vrows, n, vh.data<T>() + i * vrows * n);
    }
    if (p.compute_uv && k == 0) {  // empty matrices: U and Vh are identities
      kernel::fill(kernel::to_blob(u), 0.0);
      kernel::fill(kernel::to_blob(vh), 0.0);
      for (int64_t i = 0; i < b.count; ++i) {
        for (int d = 0; d < std::min(m, ucols); ++d) u.data<T>()[i * m * ucols + d * ucols + d] = 1;
        for (int d = 0; d < std::min(vrows, n); ++d) vh.data<T>()[i * vrows * n + d * n + d] = 1;
      }
    }
  });
  if (!p.compute_uv) return finish(s, out[0], req[0]);
  finish(u, out[0], req[0]);
  finish(s, out[1], req[1]);
  finish(vh, out[2], req[2]);
}

// Reduced SVD A = U S V^T (Townsend, "Differentiating the singular value decomposition"):
// grad_A = U [(F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V))] V^T
//          + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T),  F_ij = 1 / (s_j^2 - s_i^2).
void svd_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const std::string& name = op_name(attrs);
  const auto& p = attrs.get<SVDParam>();
  const Shape& us = in[3].shape;
  const Shape& vs = in[5].shape;
  const int64_t m = us[us.ndim() - 2], k = in[4].shape[in[4].ndim() - 1], n = vs[vs.ndim() - 1];
  if (!p.compute_uv) not_implemented("[", name, "] no gradient for compute_uv=False");
  if (p.full_matrices && m != n)
    not_implemented("[", name,
                    "] the gradient of svd needs full_matrices=False for non-square "
                    "matrices");
  const int64_t count = out[0].size() / std::max<int64_t>(m * n, 1);
  NDArray result(out[0].shape, out[0].dtype);
  for (int64_t i = 0; i < count && m * n > 0; ++i) {
    const Mat gu = read_mat(in[0], i, m, k), gs = read_mat(in[1], i, 1, k);
    const Mat gv = transpose(read_mat(in[2], i, k, n));
    const Mat u = read_mat(in[3], i, m, k), s = read_mat(in[4], i, 1, k);
    const Mat v = transpose(read_mat(in[5], i, k, n));
    const Mat utgu = mm(u, gu, true, false), vtgv = mm(v, gv, true, false);
    Mat core(k, k);
    for (int64_t a = 0; a < k; ++a)
      for (int64_t c = 0; c < k; ++c) {
        if (a == c) {
          core(a, c) = gs(0, a);
          continue;
        }
        const double f = 1.0 / (s(0, c) * s(0, c) - s(0, a) * s(0, a));
        core(a, c) =
            f * (utgu(a, c) - utgu(c, a)) * s(0, c) + s(0, a) * f * (vtgv(a, c) - vtgv(c, a));
      }
    Mat g = mm(mm(u, core), v, false, true);
    if (m > k) {  // (I - U U^T) gU S^-1 V^T
      Mat proj = mm(u, mm(u, gu, true, false));
      for (size_t j = 0; j < proj.v.size(); ++j) proj.v[j] = gu.v[j] - proj.v[j];
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < k; ++c) proj(r, c) /= s(0, c);
      const Mat extra = mm(proj, v, false, true);
      for (size_t j = 0; j < g.v.size(); ++j) g.v[j] += extra.v[j];
    }
    if (n > k) {  // U S^-1 gV^T (I - V V^T)
      Mat proj = mm(v, mm(v, gv, true, false));
      for (size_t j = 0; j < proj.v.size(); ++j) proj.v[j] = gv.v[j] - proj.v[j];
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < k; ++c) proj(r, c) /= s(0, c);
      const Mat extra = mm(u, proj, false, true);
      for (size_t j = 0; j < g.v.size(); ++j) g.v[j] += extra.v[j];
    }
    write_mat(g, result, i);
  }
  finish(result, out[0], req[0]);
}

// ============================== lstsq ==============================
struct LstsqParam {
  double rcond = -1;
  static void declare(ParamDecl<LstsqParam>& d) {
    d.field("rcond", &LstsqParam::rcond)
        .set_default(-1.0)
        .describe("Singular values below rcond * the largest count as zero (< 0: machine eps).");
  }
};

// a (M, N), b (M, K) -> x (N, K), rank (), s (min(M, N)).
bool lstsq_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const std::string& name = op_name(attrs);
  const Shape& a = (*in)[0];
  const Shape& b = (*in)[1];
  if (a.ndim() != 2 || b.ndim() != 2 || b[0] != a[0])
    linalg_error(
        name, "a must be (M, N) and b (M, K) with the same M; got " + a.str() + " and " + b.str());
  batch_of(name, a, false);
  (*out)[0] = Shape{a[1], b[1]};
  (*out)[1] = Shape{};
  (*out)[2] = Shape{std::min(a[0], a[1])};
  return true;
}

void lstsq_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const int m = static_cast<int>(in[0].shape[0]), n = static_cast<int>(in[0].shape[1]);
  const int nrhs = static_cast<int>(in[1].shape[1]), k = std::min(m, n);
  const double rcond = attrs.get<LstsqParam>().rcond;
  NDArray x(out[0].shape, in[0].dtype), s(out[2].shape, real_dtype(in[0].dtype));
  NDArray rank(Shape{}, DType::kInt64);
  rank.data<int64_t>()[0] = 0;
  lapack_switch(in[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    const int ldb = std::max({m, n, 1});
    std::vector<T> a(static_cast<size_t>(m) * n), b(static_cast<size_t>(ldb) * nrhs);
    to_col_major(in[0].ptr<T>(), m, n, a.data());
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < nrhs; ++c)
        b[static_cast<size_t>(c) * ldb + r] = in[1].ptr<T>()[r * nrhs + c];
    if (!all_finite(a.data(), int64_t{m} * n) || !all_finite(b.data(), int64_t{ldb} * nrhs))
      linalg_error(op_name(attrs), "SVD did not converge in Linear Least Squares");
    if (k == 0 || nrhs == 0) {
      kernel::fill(kernel::to_blob(x), 0.0);
      return;
    }
    int info = 0, r = 0, iquery = 0;
    T query{};
    using R = real_of<T>;
    // (np.linalg.lstsq passes NumPy's default, eps * max(M, N), for rcond=None.)
    const R rc = rcond < 0 ? std::numeric_limits<R>::epsilon() : static_cast<R>(rcond);
    lapack::gelsd(m, n, nrhs, a.data(), b.data(), ldb, s.data<R>(), rc, &r, &query, -1, &iquery,
                  &info);
    std::vector<T> work(lapack::query_size(query));
    std::vector<int> iwork(std::max(iquery, 1) + 64 * std::max(k, 1));
    lapack::gelsd(m, n, nrhs, a.data(), b.data(), ldb, s.data<R>(), rc, &r, work.data(),
                  static_cast<int>(work.size()), iwork.data(), &info);
    if (info > 0) linalg_error(op_name(attrs), "SVD did not converge in Linear Least Squares");
    rank.data<int64_t>()[0] = r;
    for (int row = 0; row < n; ++row)
      for (int c = 0; c < nrhs; ++c)
        x.data<T>()[row * nrhs + c] = b[static_cast<size_t>(c) * ldb + row];
  });
  finish(x, out[0], req[0]);
  finish(rank, out[1], req[1]);
  finish(s, out[2], req[2]);
}

// ============================== registration ==============================
// The ops whose gradient ndx does not provide yet, and what to do instead.
constexpr const char* kNoLinalgGradient =
    "eig: not implemented; lstsq: np.linalg.lstsq differentiates through svd while recording";

// LAPACK threads inside OpenBLAS (ndx's GEMMs run it single-threaded; see parallel.h).
FCompute with_blas_threads(FCompute f) {
  return
      [f = std::move(f)](const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
        kernel::sync_blas_threads();
        f(attrs, ctx, in, req, out);
      };
}

Op& register_linalg(const char* name, const char* doc, uint32_t n_in, uint32_t n_out, FCompute f,
                    std::vector<Out> out_types = {}) {
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_inputs(n_in)
      .set_num_outputs(n_out)
      .set_attr<FInferType>("FInferType", linalg_types(std::move(out_types)))
      .set_attr<FCompute>("FCompute<cpu>", with_blas_threads(std::move(f)));
}

Op& register_backward(const char* name, uint32_t n_in, FInferShape shape, FCompute f) {
  return OpRegistry::global()
      .register_op(name)
      .describe("Backward of a linalg op: (output grads..., outputs...) -> grad of the input.")
      .set_num_inputs(n_in)
      .set_num_outputs(1)
      .set_attr<FInferShape>("FInferShape", std::move(shape))
      .set_attr<FInferType>("FInferType",
                            [n_in](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              const DType t = (*in)[n_in - 1];
                              if (is_complex(t))
                                not_implemented("[", op_name(attrs),
                                                "] the gradient for complex input is not "
                                                "implemented yet (inv, det, slogdet and solve "
                                                "have complex gradients)");
                              (*out)[0] = t;
                              return true;
                            })
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", with_blas_threads(std::move(f)));
}

// The input's shape from the forward outputs among a backward op's inputs: `full` is an output
// of the input's shape, or (rows_from, cols_from) give (..., M, *) and (..., *, N).
FInferShape input_shape_from(int full, int rows_from = -1, int cols_from = -1) {
  return [=](const NodeAttrs&, ShapeVector* in, ShapeVector* out) {
    if (full >= 0) {
      (*out)[0] = (*in)[full];
      return true;
    }
    const Shape& r = (*in)[rows_from];
    const Shape& c = (*in)[cols_from];
    (*out)[0] = with(leading(r, 1), {c[c.ndim() - 1]});
    return true;
  };
}

[[maybe_unused]] const bool registered = [] {
  register_linalg("_npi_inv", "The inverse of each square matrix (numpy.linalg.inv).", 1, 1,
                  inv_compute)
      .add_argument("a", "NDArray", "Square matrices (..., M, M).")
      .set_attr<FInferShape>("FInferShape", square_shape)
      .set_attr<FGradient>("FGradient", inv_grad);
  register_linalg("_npi_det", "The determinant of each square matrix (numpy.linalg.det).", 1, 1,
                  det_compute)
      .add_argument("a", "NDArray", "Square matrices (..., M, M).")
      .set_attr<FInferShape>("FInferShape", batch_scalar_shape)
      .set_attr<FGradient>("FGradient", det_grad);
  register_linalg("_npi_slogdet",
                  "Sign and log |determinant| of each square matrix (numpy.linalg.slogdet).", 1, 2,
                  slogdet_compute, {Out::kSame, Out::kReal})
      .add_argument("a", "NDArray", "Square matrices (..., M, M).")
      .set_attr<FInferShape>("FInferShape", batch_scalar_shape)
      .set_attr<FGradient>("FGradient", slogdet_grad);
  register_linalg("_npi_solve", "x with a @ x = b for each square a (numpy.linalg.solve).", 2, 1,
                  solve_compute)
      .add_argument("a", "NDArray", "Square matrices (..., M, M).")
      .add_argument("b", "NDArray", "Right-hand sides (..., M, K).")
      .set_attr<FInferShape>("FInferShape", solve_shape)
      .set_attr<FGradient>("FGradient", solve_grad);
  register_linalg("_npi_cholesky",
                  "The Cholesky factor of each symmetric positive-definite matrix.", 1, 1,
                  cholesky_compute)
      .add_argument("a", "NDArray", "Symmetric positive-definite matrices (..., M, M).")
      .set_params<CholeskyParam>()
      .set_attr<FInferShape>("FInferShape", square_shape)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseOut{"_backward_npi_cholesky"});
  register_backward("_backward_npi_cholesky", 2, input_shape_from(1), cholesky_backward)
      .set_params<CholeskyParam>();
  register_linalg("_npi_qr", "The QR factorization of each matrix (numpy.linalg.qr).", 1, 2,
                  qr_compute)
      .add_argument("a", "NDArray", "Matrices (..., M, N).")
      .set_params<QRParam>()
      .set_attr<FInferShape>("FInferShape", qr_shape)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseOut{"_backward_npi_qr"});
  register_backward("_backward_npi_qr", 4, input_shape_from(-1, 2, 3), qr_backward)
      .set_params<QRParam>();
  register_linalg("_npi_eigh",
                  "Eigenvalues (ascending) and eigenvectors of each symmetric matrix "
                  "(numpy.linalg.eigh).",
                  1, 2, eigh_compute, {Out::kReal, Out::kSame})
      .add_argument("a", "NDArray", "Symmetric matrices (..., M, M).")
      .set_params<EighParam>()
      .set_attr<FInferShape>("FInferShape", eig_shape)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseOut{"_backward_npi_eigh"});
  register_backward("_backward_npi_eigh", 4, input_shape_from(3), eigh_backward)
      .set_params<EighParam>();
  register_linalg("_npi_eig",
                  "Eigenvalues and right eigenvectors of each square matrix, complex "
                  "(numpy.linalg.eig makes them real when all eigenvalues are).",
                  1, 2, eig_compute, {Out::kComplex, Out::kComplex})
      .add_argument("a", "NDArray", "Square matrices (..., M, M).")
      .set_attr<FInferShape>("FInferShape", eig_shape)
      .set_attr<FGradient>("FGradient", nn_check::no_gradient_yet("eig", kNoLinalgGradient));
  OpRegistry::global()
      .register_op("_npi_svd")
      .describe("The singular value decomposition of each matrix (numpy.linalg.svd).")
      .set_num_inputs(1)
      .set_num_outputs([](const NodeAttrs& attrs) -> uint32_t {
        return attrs.get<SVDParam>().compute_uv ? 3 : 1;
      })
      .add_argument("a", "NDArray", "Matrices (..., M, N).")
      .set_params<SVDParam>()
      .set_attr<FInferShape>("FInferShape", svd_shape)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              const DType t = linalg_input_type(attrs, *in);
                              if (out->size() == 1) return ((*out)[0] = real_dtype(t)), true;
                              (*out)[0] = (*out)[2] = t;
                              (*out)[1] = real_dtype(t);
                              return true;
                            })
      .set_attr<FCompute>("FCompute<cpu>", with_blas_threads(svd_compute))
      .set_attr<FGradient>("FGradient", ElemwiseGradUseOut{"_backward_npi_svd"});
  register_backward("_backward_npi_svd", 6, input_shape_from(-1, 3, 5), svd_backward)
      .set_params<SVDParam>();
  register_linalg("_npi_lstsq", "Least-squares solution of a @ x = b (numpy.linalg.lstsq).", 2, 3,
                  lstsq_compute, {Out::kSame, Out::kInt64, Out::kReal})
      .add_argument("a", "NDArray", "Coefficient matrix (M, N).")
      .add_argument("b", "NDArray", "Right-hand sides (M, K).")
      .set_params<LstsqParam>()
      .set_attr<FInferShape>("FInferShape", lstsq_shape)
      .set_attr<FGradient>("FGradient", nn_check::no_gradient_yet("lstsq", kNoLinalgGradient));
  return true;
}();

}  // namespace
}  // namespace ndx
