// Matrix products: _np_matmul (NumPy matmul: 1-d promotion, broadcast batch dims) and _np_dot
// (numpy.dot), with their backward ops. float32/float64 go through OpenBLAS gemm; the 16-bit
// floats compute in float32; integers wrap and bool is the logical or of ands, as NumPy does.
#include <cblas.h>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <string>

#include "gpu/runtime.h"
#include "kernel/iterator.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "operator/gemm.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

using kernel::as_array;
using kernel::to_blob;
using kernel::write_req;

// NumPy's spelling of a shape in dot's messages: (2,3), (4,), ().
std::string np_shape(const Shape& s) {
  std::ostringstream os;
  os << '(';
  for (int i = 0; i < s.ndim(); ++i) os << (i ? "," : "") << s[i];
  if (s.ndim() == 1) os << ',';
  os << ')';
  return os.str();
}

Shape sub_shape(const Shape& s, int begin, int end) {
  return Shape(s.begin() + begin, s.begin() + end);
}

// C[i] = A[a_off[i]] (n x k) @ B[b_off[i]] (k x m), all row-major and contiguous, of type T;
// C (req) with req kWriteTo or kAddTo.
// ta / tb: that operand is stored transposed (k x n, m x k), which BLAS reads as it is (float
// and double only).
template <typename T>
void gemm_batched(const T* A, const T* B, T* C, const std::vector<int64_t>& a_off,
                  const std::vector<int64_t>& b_off, int64_t n, int64_t k, int64_t m, bool add,
                  bool ta = false, bool tb = false) {
  const int64_t nm = n * m;
  if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) {
    if (nm == 0) return;
    if (k == 0) {  // BLAS may leave C untouched when k is 0
      if (!add) std::fill(C, C + static_cast<int64_t>(a_off.size()) * nm, T(0));
      return;
    }
    const T beta = add ? T(1) : T(0);
    const int64_t lda = ta ? n : k, ldb = tb ? k : m;
    const auto batches = static_cast<int64_t>(a_off.size());
    const double work = static_cast<double>(nm) * static_cast<double>(k);
    if (batches > 1 &&
        work * num_threads() < kernel::kGemmPanelWork * static_cast<double>(batches)) {
      // small products: whole ones per thread
      kernel::blas_single_thread();
      kernel::parallel_for(batches, 1, [&](int64_t first, int64_t last) {
        for (int64_t bi = first; bi < last; ++bi)
          kernel::blas_gemm(ta, tb, n, m, k, A + a_off[static_cast<size_t>(bi)], lda,
                            B + b_off[static_cast<size_t>(bi)], ldb, beta, C + bi * nm, m);
      });
    } else {
      for (int64_t bi = 0; bi < batches; ++bi)
        kernel::gemm_panels(ta, tb, n, m, k, A + a_off[static_cast<size_t>(bi)], lda,
                            B + b_off[static_cast<size_t>(bi)], ldb, beta, C + bi * nm, m);
    }
    return;
  }
  for (size_t bi = 0; bi < a_off.size(); ++bi) {
    const T* a = A + a_off[bi];
    const T* b = B + b_off[bi];
    T* c = C + static_cast<int64_t>(bi) * nm;
    if (nm == 0) continue;
    if constexpr (std::is_same_v<T, bool>) {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
          bool acc = add && c[i * m + j];
          for (int64_t p = 0; p < k && !acc; ++p) acc = a[i * k + p] && b[p * m + j];
          c[i * m + j] = acc;
        }
    } else {  // integers: wrap around as NumPy does
      for (int64_t i = 0; i < n; ++i) {
        T* row = c + i * m;
        if (!add) std::fill(row, row + m, T(0));
        for (int64_t p = 0; p < k; ++p) {
          const T av = a[i * k + p];
          const T* brow = b + p * m;
          for (int64_t j = 0; j < m; ++j)
            row[j] = kernel::wrap_add(row[j], kernel::wrap_mul(av, brow[j]));
        }
      }
    }
  }
}

// The batched product on a GPU through cuBLAS: one strided-batched call when the matrices'
// offsets step evenly (no broadcasting, or one operand repeated), else one call per matrix.
void gpu_gemm_batched(const NDArray& A, const NDArray& B, const NDArray& C,
                      const std::vector<int64_t>& a_off, const std::vector<int64_t>& b_off,
                      int64_t n, int64_t k, int64_t m, bool add) {
  const int64_t nb = static_cast<int64_t>(a_off.size());
  if (nb == 0 || n == 0 || m == 0) return;
  cuda::GemmArgs g;
  g.dtype = A.dtype();
  g.rows = n;
  g.cols = m;
  g.inner = k;
  g.lda = k;
  g.ldb = m;
  g.ldc = m;
  g.beta = add ? 1.0 : 0.0;
  g.stride_c = n * m;
  const int64_t sa = nb > 1 ? a_off[1] - a_off[0] : 0, sb = nb > 1 ? b_off[1] - b_off[0] : 0;
  bool even = true;
  for (int64_t i = 0; i < nb && even; ++i) even = a_off[i] == i * sa && b_off[i] == i * sb;
  const auto* a = static_cast<const char*>(A.raw_data());
  const auto* b = static_cast<const char*>(B.raw_data());
  auto* c = static_cast<char*>(C.raw_data());
  const int64_t size = A.itemsize();
  if (even) {
    g.a = a, g.b = b, g.c = c;
    g.batch = nb;
    g.stride_a = sa;
    g.stride_b = sb;
    cuda::gemm(g, C.device().id);
    return;
  }
  for (int64_t i = 0; i < nb; ++i) {
    g.a = a + a_off[i] * size;
    g.b = b + b_off[i] * size;
    g.c = c + i * n * m * size;
    cuda::gemm(g, C.device().id);
  }
}

std::vector<int64_t> last_two_swapped(int ndim) {
  std::vector<int64_t> perm(static_cast<size_t>(ndim));
  std::iota(perm.begin(), perm.end(), 0);
  if (ndim >= 2)
    std::swap(perm[static_cast<size_t>(ndim - 2)], perm[static_cast<size_t>(ndim - 1)]);
  return perm;
}

// Whether x with its last two axes swapped back is C-contiguous (x is such an array's mT).
bool swapped_contiguous(const NDArray& x) {
  return x.ndim() >= 2 && x.transpose(last_two_swapped(x.ndim())).is_contiguous();
}

// out (req) a @ b for a of shape batch_a + (n, k) and b of shape batch_b + (k, m), the batch
// dims broadcasting to out's batch + (n, m). Any strides and dtypes: the product is computed in
// compute_dtype(t) and cast into out.
void matmul_arrays(const NDArray& a, const NDArray& b, const NDArray& out, DType t, OpReqType req) {
  if (req == kNullOp || out.size() == 0) return;
  // cuBLAS takes the 16-bit floats as they are (accumulating in float32); OpenBLAS does not.
  const DType ct = out.device().is_gpu() && is_float(t) ? t : compute_dtype(t);
  if (out.device().is_gpu() && !is_float(ct)) {  // integer and bool products: on host copies
    NDArray host = req == kAddTo ? out.to(cpu()) : NDArray(out.shape(), out.dtype(), cpu());
    matmul_arrays(a.to(cpu()), b.to(cpu()), host, t, req == kWriteInplace ? kWriteTo : req);
    out.assign(host);
    return;
  }
  const int nd = out.ndim();
  const int64_t n = out.shape()[nd - 2], m = out.shape()[nd - 1], k = a.shape()[a.ndim() - 1];
  const Shape batch = sub_shape(out.shape(), 0, nd - 2);
  const Shape batch_a = sub_shape(a.shape(), 0, a.ndim() - 2),
              batch_b = sub_shape(b.shape(), 0, b.ndim() - 2);
  // Matrix offsets per output batch, broadcasting the inputs' batch dims.
  Shape sa = broadcast_strides(batch_a, contiguous_strides(batch_a), batch);
  Shape sb = broadcast_strides(batch_b, contiguous_strides(batch_b), batch);
  const int64_t nb = batch.size();
  std::vector<int64_t> a_off(nb), b_off(nb);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t rem = bi, oa = 0, ob = 0;
    for (int d = batch.ndim() - 1; d >= 0; --d) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    a_off[bi] = oa * n * k;
    b_off[bi] = ob * k * m;
  }
  // A float operand that is a contiguous array with its last two axes swapped (x.mT, einsum's
  // and attention's k^T) goes to BLAS transposed rather than copied.
  const bool blas = !out.device().is_gpu() && (ct == DType::kFloat32 || ct == DType::kFloat64);
  const bool ta = blas && a.dtype() == ct && !a.is_contiguous() && swapped_contiguous(a);
  const bool tb = blas && b.dtype() == ct && !b.is_contiguous() && swapped_contiguous(b);
  NDArray A = ta                                     ? a.transpose(last_two_swapped(a.ndim()))
              : a.dtype() == ct && a.is_contiguous() ? a
                                                     : a.astype(ct);
  NDArray B = tb                                     ? b.transpose(last_two_swapped(b.ndim()))
              : b.dtype() == ct && b.is_contiguous() ? b
                                                     : b.astype(ct);
  const bool direct = out.dtype() == ct && out.is_contiguous() && req != kWriteInplace;
  NDArray C = direct ? out : NDArray(out.shape(), ct, out.device());
  const bool add = direct && req == kAddTo;
  if (out.device().is_gpu()) {
    gpu_gemm_batched(A, B, C, a_off, b_off, n, k, m, add);
  } else {
    NDX_DTYPE_SWITCH_COMPLEX(ct, T, {
      if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        unsupported_dtype("matmul", ct);
      } else {
        gemm_batched<T>(static_cast<const T*>(A.raw_data()), static_cast<const T*>(B.raw_data()),
                        static_cast<T*>(C.raw_data()), a_off, b_off, n, k, m, add, ta, tb);
      }
    });
  }
  if (!direct) write_req(C, out, req);
}

// `full` (dtype t) summed down to dst's shape (undoing broadcasting), written into dst (req).
void reduce_into(const NDArray& full, const NDArray& dst, OpReqType req) {
  if (req == kNullOp) return;
  if (full.shape() == dst.shape()) {
    write_req(full, dst, req);
    return;
  }
  if (full.dtype() == dst.dtype()) {
    kernel::sum_to_shape(to_blob(full), to_blob(dst), req);
    return;
  }
  NDArray tmp(dst.shape(), full.dtype(), dst.device());
  kernel::sum_to_shape(to_blob(full), to_blob(tmp), kWriteTo);
  write_req(tmp, dst, req);
}

// A view of an output blob in another shape of the same size (outputs are contiguous).
NDArray out_view(const TBlob& b, const Shape& shape) {
  NDArray a = as_array(b);
  if (!a.is_contiguous()) raise(ErrorKind::kRuntimeError, "[matmul] expected a contiguous output");
  return a.reshape(shape);
}

DType promote_type_of(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown) return DType::kUnknown;
  return promote_types((*in)[0], (*in)[1]);
}

bool PromoteType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  DType t = promote_type_of(attrs, in, out);
  if (t == DType::kUnknown) return false;
  assign_type(attrs, &(*out)[0], t, "output", 0);
  return true;
}

// ============================== matmul ==============================
// a and b with 1-d operands promoted: a (k,) -> (1, k), b (k,) -> (k, 1).
Shape promote_a(const Shape& a) { return a.ndim() == 1 ? Shape{1, a[0]} : a; }

// x in shape s, a view of x itself when s is its shape: reshape copies any non-contiguous
// array, which would undo the transposed-operand path of matmul_arrays.
NDArray in_shape(const NDArray& x, const Shape& s) { return x.shape() == s ? x : x.reshape(s); }
Shape promote_b(const Shape& b) { return b.ndim() == 1 ? Shape{b[0], 1} : b; }

Shape matmul_shape(const Shape& a, const Shape& b) {
  for (int i = 0; i < 2; ++i) {
    const Shape& s = i == 0 ? a : b;
    if (s.ndim() == 0)
      value_error("[matmul] matmul: Input operand ", i,
                  " does not have enough dimensions (has 0, gufunc core ",
                  "with signature (n?,k),(k,m?)->(n?,m?) requires 1); operand shapes are ", a.str(),
                  " and ", b.str());
  }
  const Shape pa = promote_a(a), pb = promote_b(b);
  const int64_t ka = pa[pa.ndim() - 1], kb = pb[pb.ndim() - 2];
  if (ka != kb)
    value_error(
        "[matmul] matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
        "signature ",
        "(n?,k),(k,m?)->(n?,m?) (size ", kb, " is different from ", ka, "); operand shapes are ",
        a.str(), " and ", b.str());
  Shape batch =
      broadcast_shapes(sub_shape(pa, 0, pa.ndim() - 2), sub_shape(pb, 0, pb.ndim() - 2), "matmul");
  if (a.ndim() >= 2) batch.push_back(pa[pa.ndim() - 2]);
  if (b.ndim() >= 2) batch.push_back(pb[pb.ndim() - 1]);
  return batch;
}

// The output shape with both core dims kept: batch + (n, m).
Shape matmul_full_shape(const Shape& a, const Shape& b) {
  const Shape pa = promote_a(a), pb = promote_b(b);
  Shape batch =
      broadcast_shapes(sub_shape(pa, 0, pa.ndim() - 2), sub_shape(pb, 0, pb.ndim() - 2), "matmul");
  batch.push_back(pa[pa.ndim() - 2]);
  batch.push_back(pb[pb.ndim() - 1]);
  return batch;
}

bool MatmulShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known() || !(*in)[1].is_known()) return false;
  assign_shape(attrs, &(*out)[0], matmul_shape((*in)[0], (*in)[1]), "output", 0);
  return true;
}

void MatmulCompute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  NDArray a = as_array(in[0]), b = as_array(in[1]);
  a = in_shape(a, promote_a(a.shape()));
  b = in_shape(b, promote_b(b.shape()));
  matmul_arrays(a, b, out_view(out[0], matmul_full_shape(in[0].shape, in[1].shape)), out[0].dtype,
                req[0]);
}

// _backward_matmul: (ograd, a, b) -> (grad_a, grad_b).
bool BackwardMatmulShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const Shape& s : *in)
    if (!s.is_known()) return false;
  Shape expect = matmul_shape((*in)[1], (*in)[2]);
  if ((*in)[0] != expect)
    value_error("[backward_matmul] ograd has shape ", (*in)[0].str(), ", expected ", expect.str());
  assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
  assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
  return true;
}

bool BackwardProductType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  for (DType t : *in)
    if (t == DType::kUnknown) return false;
  for (int i = 0; i < 2; ++i) {
    if ((*in)[i + 1] == DType::kBool)
      type_error("[", op_name(attrs), "] gradients of boolean arrays are not defined; input ", i,
                 " is bool");
    assign_type(attrs, &(*out)[i], (*in)[i + 1], "output", i);
  }
  return true;
}

// conj(x) for complex x (the gradients of products take the conjugate of the other operand,
// the conjugate Wirtinger convention); x itself otherwise.
NDArray conj_if_complex(const NDArray& x) {
  if (!is_complex(x.dtype())) return x;
  static const Op* op = Op::get("_np_conjugate");
  static const NodeAttrs attrs = op->make_attrs();
  static const FCompute& f = Op::attr<FCompute>("FCompute<cpu>")[op];
  if (x.device().is_gpu())
    not_implemented("[backward_matmul] complex gradients on a GPU are not implemented yet");
  NDArray y(x.shape(), x.dtype(), x.device());
  f(attrs, OpContext{}, {to_blob(x)}, {kWriteTo}, {to_blob(y)});
  return y;
}

void BackwardMatmulCompute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const DType t = in[0].dtype;
  const Shape full = matmul_full_shape(in[1].shape, in[2].shape);
  const int nd = full.ndim();
  NDArray g = as_array(in[0]).reshape(full);
  NDArray a = as_array(in[1]).reshape(promote_a(in[1].shape));
  NDArray b = as_array(in[2]).reshape(promote_b(in[2].shape));
  if (req[0] != kNullOp) {  // grad_a = g @ b^H, summed over broadcast batch dims
    b = conj_if_complex(b);
    Shape sa = sub_shape(full, 0, nd - 1);
    sa.push_back(a.shape()[a.ndim() - 1]);
    NDArray ga(sa, t, g.device());
    matmul_arrays(g, b.swapaxes(-1, -2), ga, t, kWriteTo);
    reduce_into(ga, out_view(out[0], a.shape()), req[0]);
  }
  if (req[1] != kNullOp) {  // grad_b = a^H @ g
    a = conj_if_complex(a);
    Shape sb = sub_shape(full, 0, nd - 2);
    sb.push_back(b.shape()[b.ndim() - 2]);
    sb.push_back(full[nd - 1]);
    NDArray gb(sb, t, g.device());
    matmul_arrays(a.swapaxes(-1, -2), g, gb, t, kWriteTo);
    reduce_into(gb, out_view(out[1], b.shape()), req[1]);
  }
}

// ============================== dot ==============================
Shape dot_shape(const Shape& a, const Shape& b) {
  if (a.ndim() == 0 || b.ndim() == 0) return broadcast_shapes(a, b, "dot");
  const int ia = a.ndim() - 1, ib = b.ndim() == 1 ? 0 : b.ndim() - 2;
  if (a[ia] != b[ib])
    value_error("[dot] shapes ", np_shape(a), " and ", np_shape(b), " not aligned: ", a[ia],
                " (dim ", ia, ") != ", b[ib], " (dim ", ib, ")");
  Shape o = sub_shape(a, 0, ia);
  for (int i = 0; i < b.ndim(); ++i)
    if (i != ib) o.push_back(b[i]);
  return o;
}

bool DotShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known() || !(*in)[1].is_known()) return false;
  assign_shape(attrs, &(*out)[0], dot_shape((*in)[0], (*in)[1]), "output", 0);
  return true;
}

// For a and b of ndim >= 1: A is a as (P, K), Bt b's permutation to (K, rest...) whose reshape to
// (K, N) gives the right-hand matrix; the product (P, N) is the output in row-major order.
struct DotLayout {
  int64_t P, K, N;
  std::vector<int64_t> b_perm;  // b.transpose(b_perm) has shape (K, rest...)
};

DotLayout dot_layout(const Shape& a, const Shape& b) {
  DotLayout l;
  l.K = a[a.ndim() - 1];
  l.P = sub_shape(a, 0, a.ndim() - 1).size();
  const int ib = b.ndim() == 1 ? 0 : b.ndim() - 2;
  l.b_perm.push_back(ib);
  l.N = 1;
  for (int i = 0; i < b.ndim(); ++i)
    if (i != ib) l.b_perm.push_back(i), l.N *= b[i];
  return l;
}

// The permuted view of b as a (K, N) matrix: a copy only where the reshape needs one.
NDArray dot_rhs(const NDArray& b, const DotLayout& l) {
  return in_shape(b.transpose(l.b_perm), Shape{l.K, l.N});
}

// out (req) a * b with broadcasting: a dot with a 0-d operand is the multiply op's kernel.
void multiply(const TBlob& a, const TBlob& b, const TBlob& out, OpReqType req) {
  static const Op* op = Op::get("_np_multiply");
  static const NodeAttrs attrs = op->make_attrs();
  static const FCompute& f = Op::attr<FCompute>("FCompute<cpu>")[op];
  f(attrs, OpContext{}, {a, b}, {req}, {out});
}

void DotCompute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const DType t = out[0].dtype;
  if (in[0].ndim() == 0 || in[1].ndim() == 0) {
    std::vector<NDArray> keep;
    multiply(kernel::cast_blob(in[0], t, &keep), kernel::cast_blob(in[1], t, &keep), out[0],
             req[0]);
    return;
  }
  DotLayout l = dot_layout(in[0].shape, in[1].shape);
  NDArray A = in_shape(as_array(in[0]), Shape{l.P, l.K});
  NDArray B = dot_rhs(as_array(in[1]), l);
  matmul_arrays(A, B, out_view(out[0], Shape{l.P, l.N}), t, req[0]);
}

bool BackwardDotShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const Shape& s : *in)
    if (!s.is_known()) return false;
  Shape expect = dot_shape((*in)[1], (*in)[2]);
  if ((*in)[0] != expect)
    value_error("[backward_dot] ograd has shape ", (*in)[0].str(), ", expected ", expect.str());
  assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
  assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
  return true;
}

void BackwardDotCompute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const DType t = in[0].dtype;
  NDArray g = as_array(in[0]);
  if (in[1].ndim() == 0 || in[2].ndim() == 0) {  // out = a * b, broadcast
    for (int i = 0; i < 2; ++i) {
      if (req[i] == kNullOp) continue;
      std::vector<NDArray> keep;
      keep.push_back(conj_if_complex(as_array(in[2 - i])));
      TBlob other = kernel::cast_blob(to_blob(keep.back()), t, &keep);
      NDArray full(g.shape(), t, g.device());
      multiply(in[0], other, to_blob(full), kWriteTo);
      reduce_into(full, as_array(out[i]), req[i]);
    }
    return;
  }
  DotLayout l = dot_layout(in[1].shape, in[2].shape);
  NDArray G = g.reshape(Shape{l.P, l.N});
  if (req[0] != kNullOp) {  // grad_A (P, K) = G @ B^H
    NDArray B = dot_rhs(conj_if_complex(as_array(in[2])), l);
    matmul_arrays(G, B.swapaxes(0, 1), out_view(out[0], Shape{l.P, l.K}), t, req[0]);
  }
  if (req[1] != kNullOp) {  // grad_B (K, N) = A^H @ G, then back to b's axis order
    NDArray A = conj_if_complex(as_array(in[1])).reshape(Shape{l.P, l.K});
    NDArray gb(Shape{l.K, l.N}, t, g.device());
    matmul_arrays(A.swapaxes(0, 1), G, gb, t, kWriteTo);
    Shape permuted;
    for (int64_t ax : l.b_perm) permuted.push_back(in[2].shape[static_cast<int>(ax)]);
    write_req(gb.reshape(permuted), as_array(out[1]).transpose(l.b_perm), req[1]);
  }
}

// The gradient of the backward op B(g, a, b) = (B_a, B_b) of a bilinear product F(a, b)
// (matmul, dot), for second and higher orders. B_a is linear in g and b and free of a (B_b
// likewise), so with output gradients oa, ob: <oa, B_a> + <ob, B_b> = <g, F(oa, b) + F(a, ob)>,
// whose gradients are d/dg = F(oa, b) + F(a, ob), d/da = B_a(g, a, ob), d/db = B_b(g, oa, b):
// the forward and backward ops again, differentiable to any order. (The same holds with the
// conjugate convention's real inner product for complex operands.)
FGradient bilinear_backward_gradient(const char* forward, const char* backward) {
  return [forward, backward](const NodePtr& n, const std::vector<NodeEntry>& og) {
    const NodeEntry &g = n->inputs[0], &a = n->inputs[1], &b = n->inputs[2];
    const NodeEntry dg =
        make_node("_np_add", {make_node(forward, {og[0], b}), make_node(forward, {a, og[1]})});
    const NodeEntry by_a = make_node(backward, {g, a, og[1]});
    const NodeEntry by_b = make_node(backward, {g, og[0], b});
    return std::vector<NodeEntry>{dg, NodeEntry{by_a.node, 0, 0}, NodeEntry{by_b.node, 1, 0}};
  };
}

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_np_matmul")
      .describe(
          "Matrix product of two arrays (numpy.matmul): batch dims broadcast, 1-d operands "
          "promoted.")
      .set_num_inputs(2)
      .add_argument("a", "NDArray", "First operand (ndim >= 1).")
      .add_argument("b", "NDArray", "Second operand (ndim >= 1).")
      .set_attr<FInferShape>("FInferShape", MatmulShape)
      .set_attr<FInferType>("FInferType", PromoteType)
      // NumPy's gufunc keywords: dtype= / casting= / order= / out= of another dtype; no where=
      .set_attr<bool>("TIsGufunc", true)
      .set_attr<FCompute>("FCompute<cpu>", MatmulCompute)
      .set_attr<FCompute>("FCompute<gpu>", MatmulCompute)
      // strided views come as they are: a transposed operand goes to BLAS transposed
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_matmul"});
  OpRegistry::global()
      .register_op("_np_dot")
      .describe("Dot product of two arrays (numpy.dot).")
      .set_num_inputs(2)
      .add_argument("a", "NDArray", "First operand.")
      .add_argument("b", "NDArray", "Second operand.")
      .set_attr<FInferShape>("FInferShape", DotShape)
      .set_attr<FInferType>("FInferType", PromoteType)
      .set_attr<FCompute>("FCompute<cpu>", DotCompute)
      .set_attr<FCompute>("FCompute<gpu>", DotCompute)
      .set_attr<bool>("TExactOut", true)  // NumPy's dot: out of the result's dtype and shape
      // strided views come as they are: a transposed operand goes to BLAS transposed
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_dot"});
  OpRegistry::global()
      .register_op("_backward_matmul")
      .describe("Backward of matmul: (ograd, a, b) -> (grad_a, grad_b).")
      .set_num_inputs(3)
      .set_num_outputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("a", "NDArray", "Forward first operand.")
      .add_argument("b", "NDArray", "Forward second operand.")
      .set_attr<FInferShape>("FInferShape", BackwardMatmulShape)
      .set_attr<FInferType>("FInferType", BackwardProductType)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", BackwardMatmulCompute)
      .set_attr<FCompute>("FCompute<gpu>", BackwardMatmulCompute)
      .set_attr<FGradient>("FGradient",
                           bilinear_backward_gradient("_np_matmul", "_backward_matmul"));
  OpRegistry::global()
      .register_op("_backward_dot")
      .describe("Backward of dot: (ograd, a, b) -> (grad_a, grad_b).")
      .set_num_inputs(3)
      .set_num_outputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("a", "NDArray", "Forward first operand.")
      .add_argument("b", "NDArray", "Forward second operand.")
      .set_attr<FInferShape>("FInferShape", BackwardDotShape)
      .set_attr<FInferType>("FInferType", BackwardProductType)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", BackwardDotCompute)
      .set_attr<FCompute>("FCompute<gpu>", BackwardDotCompute)
      .set_attr<FGradient>("FGradient", bilinear_backward_gradient("_np_dot", "_backward_dot"));
  return true;
}();

}  // namespace
}  // namespace ndx
