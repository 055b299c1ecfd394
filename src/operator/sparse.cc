// Compressed sparse row (CSR) kernels behind MXNet's sparse storage (python/ndx/nd/sparse.py
// keeps a CSR matrix as three dense arrays: data (nnz), indices (nnz, the column of each
// value) and indptr (rows + 1, where each row's run starts)). The ops take those arrays as
// inputs, so autograd, graphs and the registry see ordinary ops:
//   _sparse_csr_dot       A @ rhs or A.T @ rhs, dense result (rhs 1-D or 2-D)
//   _sparse_csr_todense   the dense matrix (duplicate entries summed, as SciPy's todense)
//   _sparse_csr_gather    the values of a dense matrix at A's positions (A's pattern)
// and _backward_sparse_csr_dot_data, the gradient of the dot with respect to A's values.
// The work is proportional to nnz times rhs's columns; rows (or column blocks, for A.T) run on
// the thread pool. A malformed matrix (indptr not starting at 0, decreasing, not ending at
// nnz, a column out of range) is a ValueError before anything is written.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/csr.h"
#include "kernel/functor_traits.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

struct CsrDotParam {
  int64_t num_cols = 0;
  bool transpose_a = false;
  static void declare(ParamDecl<CsrDotParam>& d) {
    d.field("num_cols", &CsrDotParam::num_cols)
        .set_lower_bound(0)
        .describe("Number of columns of the CSR matrix.");
    d.field("transpose_a", &CsrDotParam::transpose_a)
        .set_default(false)
        .describe("Multiply by the transpose of the CSR matrix.");
  }
};

struct CsrShapeParam {
  int64_t num_cols = 0;
  static void declare(ParamDecl<CsrShapeParam>& d) {
    d.field("num_cols", &CsrShapeParam::num_cols)
        .set_lower_bound(0)
        .describe("Number of columns of the CSR matrix.");
  }
};

// The CSR arrays, cast to int64 / the compute type and contiguous.
struct Csr {
  int64_t rows = 0, cols = 0, nnz = 0;
  const int64_t* indices = nullptr;
  const int64_t* indptr = nullptr;
};

TBlob contiguous_as(const TBlob& x, DType t, std::vector<NDArray>* keep) {
  if (x.is_contiguous() && x.dtype == t) return x;
  keep->emplace_back(x.shape, t, x.device);
  kernel::copy(x, kernel::to_blob(keep->back()), kWriteTo);
  return kernel::to_blob(keep->back());
}

// Checks the structure a kernel relies on (every read stays in bounds) and returns it.
Csr checked_csr(const NodeAttrs& attrs, const TBlob& indices, const TBlob& indptr, int64_t cols,
                std::vector<NDArray>* keep) {
  Csr a;
  a.rows = indptr.size() - 1;
  a.cols = cols;
  a.nnz = indices.size();
  a.indices = contiguous_as(indices, DType::kInt64, keep).ptr<int64_t>();
  a.indptr = contiguous_as(indptr, DType::kInt64, keep).ptr<int64_t>();
  const char* op = op_name(attrs).c_str();
  if (a.indptr[0] != 0) value_error("[", op, "] indptr must start at 0, got ", a.indptr[0]);
  for (int64_t i = 0; i < a.rows; ++i)
    if (a.indptr[i + 1] < a.indptr[i])
      value_error("[", op, "] indptr must not decrease; indptr[", i + 1, "] = ", a.indptr[i + 1],
                  " < indptr[", i, "] = ", a.indptr[i]);
  if (a.indptr[a.rows] != a.nnz)
    value_error("[", op, "] indptr must end at the number of stored values (", a.nnz, "), got ",
                a.indptr[a.rows]);
  const int64_t bad = kernel::first_index_outside(a.indices, a.nnz, cols);
  if (bad < a.nnz)
    index_error("[", op, "] column index ", a.indices[bad], " at position ", bad,
                " is out of range for ", cols, " columns");
  return a;
}

// Rows of at least this many stored values times columns go to one thread chunk.
int64_t row_grain(const Csr& a, int64_t width) {
  const int64_t per_row = std::max<int64_t>(1, a.nnz / std::max<int64_t>(1, a.rows)) * width;
  return std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(1, per_row));
}

// out (rows x n) = A @ rhs (cols x n).
template <class C>
void csr_times(const Csr& a, const C* val, const C* rhs, int64_t n, C* out) {
  kernel::parallel_for(a.rows, row_grain(a, n), [&](int64_t begin, int64_t end) {
    kernel::csr_times_dense(a.indptr, a.indices, val, rhs, n, out, begin, end);
  });
}

// out (cols x n) = A.T @ rhs (rows x n). Each thread takes a block of the n columns and
// scatters every stored value into it, so no two threads write the same element.
template <class C>
void csr_transpose_times(const Csr& a, const C* val, const C* rhs, int64_t n, C* out) {
  std::fill(out, out + a.cols * n, C(0));
  const int64_t grain = std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(1, a.nnz));
  kernel::parallel_for(n, grain, [&](int64_t c0, int64_t c1) {
    kernel::csr_transpose_add(a.indptr, a.indices, val, rhs, n, c0, c1, out, 0, a.rows);
  });
}

// g[j] = <left row of j, right row of j>: for A @ rhs, left = ograd[i], right = rhs[col j];
// for A.T @ rhs, left = ograd[col j], right = rhs[i] (i is j's row).
template <class C>
void csr_sampled_products(const Csr& a, const C* ograd, const C* rhs, int64_t n, bool transpose,
                          C* g) {
  kernel::parallel_for(a.rows, row_grain(a, n), [&](int64_t begin, int64_t end) {
    kernel::csr_sampled_dot(a.indptr, a.indices, ograd, rhs, n, transpose, g, begin, end);
  });
}

// Runs body(C, result) with C the float compute type of t: result is out itself when it has
// that type and is written whole, else a scratch array then stored into out as req says.
template <class Body>
void float_kernel(const NodeAttrs& attrs, DType t, const TBlob& out, OpReqType req, Body body) {
  if (req == kNullOp) return;
  const DType acc = compute_dtype(t);
  const bool direct = out.dtype == acc && out.is_contiguous() && req != kAddTo;
  NDArray scratch;
  if (!direct) scratch = NDArray(out.shape, acc, out.device);
  kernel::with_compute_type(acc, op_name(attrs).c_str(), [&](auto c) {
    using C = decltype(c);
    if constexpr (std::is_floating_point_v<C>) body(C{}, direct ? out.ptr<C>() : scratch.data<C>());
  });
  if (!direct) kernel::copy(kernel::to_blob(scratch), out, req);
}

int64_t width_of(const TBlob& b) { return b.ndim() == 2 ? b.shape[1] : 1; }

void csr_dot_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<CsrDotParam>();
  std::vector<NDArray> keep;
  const Csr a = checked_csr(attrs, in[1], in[2], p.num_cols, &keep);
  const DType acc = compute_dtype(out[0].dtype);
  const TBlob val = contiguous_as(in[0], acc, &keep), rhs = contiguous_as(in[3], acc, &keep);
  float_kernel(attrs, out[0].dtype, out[0], req[0], [&](auto c, auto* result) {
    using C = decltype(c);
    if (p.transpose_a)
      csr_transpose_times<C>(a, val.ptr<C>(), rhs.ptr<C>(), width_of(rhs), result);
    else
      csr_times<C>(a, val.ptr<C>(), rhs.ptr<C>(), width_of(rhs), result);
  });
}

// (ograd, indices, indptr, rhs) -> the gradient of the values.
void csr_dot_data_grad_compute(const NodeAttrs& attrs, const OpContext&,
                               const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                               const std::vector<TBlob>& out) {
  const auto& p = attrs.get<CsrDotParam>();
  std::vector<NDArray> keep;
  const Csr a = checked_csr(attrs, in[1], in[2], p.num_cols, &keep);
  const DType acc = compute_dtype(out[0].dtype);
  const TBlob g = contiguous_as(in[0], acc, &keep), rhs = contiguous_as(in[3], acc, &keep);
  float_kernel(attrs, out[0].dtype, out[0], req[0], [&](auto c, auto* result) {
    using C = decltype(c);
    csr_sampled_products<C>(a, g.ptr<C>(), rhs.ptr<C>(), width_of(rhs), p.transpose_a, result);
  });
}

void csr_todense_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  std::vector<NDArray> keep;
  const Csr a = checked_csr(attrs, in[1], in[2], attrs.get<CsrShapeParam>().num_cols, &keep);
  const DType acc = compute_dtype(out[0].dtype);
  const TBlob val = contiguous_as(in[0], acc, &keep);
  float_kernel(attrs, out[0].dtype, out[0], req[0], [&](auto c, auto* result) {
    using C = decltype(c);
    const C* v = val.ptr<C>();
    kernel::parallel_for(a.rows, row_grain(a, 1), [&](int64_t begin, int64_t end) {
      std::fill(result + begin * a.cols, result + end * a.cols, C(0));
      for (int64_t i = begin; i < end; ++i)
        for (int64_t j = a.indptr[i]; j < a.indptr[i + 1]; ++j)
          result[i * a.cols + a.indices[j]] += v[j];
    });
  });
}

void csr_gather_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  std::vector<NDArray> keep;
  const Csr a = checked_csr(attrs, in[1], in[2], attrs.get<CsrShapeParam>().num_cols, &keep);
  const DType acc = compute_dtype(out[0].dtype);
  const TBlob dense = contiguous_as(in[0], acc, &keep);
  float_kernel(attrs, out[0].dtype, out[0], req[0], [&](auto c, auto* result) {
    using C = decltype(c);
    const C* d = dense.ptr<C>();
    kernel::parallel_for(a.rows, row_grain(a, 1), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        for (int64_t j = a.indptr[i]; j < a.indptr[i + 1]; ++j)
          result[j] = d[i * a.cols + a.indices[j]];
    });
  });
}

// ---- shapes and types ----

// indices (nnz) and indptr (rows + 1) of input positions k and k + 1; returns rows.
int64_t csr_rows(const NodeAttrs& attrs, const ShapeVector& in, int k, int64_t nnz) {
  const Shape &indices = in[k], &indptr = in[k + 1];
  const char* op = op_name(attrs).c_str();
  if (indices.ndim() != 1 || indptr.ndim() != 1 || indptr[0] < 1)
    value_error("[", op, "] indices must be 1-D and indptr 1-D with at least one element; got ",
                indices.str(), " and ", indptr.str());
  if (nnz >= 0 && indices[0] != nnz)
    value_error("[", op, "] the values and the indices must have the same length; got ", nnz,
                " and ", indices[0]);
  return indptr[0] - 1;
}

bool known(const ShapeVector& in) {
  return std::all_of(in.begin(), in.end(), [](const Shape& s) { return s.is_known(); });
}

void require_vector(const NodeAttrs& attrs, const Shape& s, const char* what) {
  if (s.ndim() != 1)
    value_error("[", op_name(attrs), "] ", what, " must be 1-D, got shape ", s.str());
}

bool csr_dot_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!known(*in)) return false;
  const auto& p = attrs.get<CsrDotParam>();
  require_vector(attrs, (*in)[0], "data");
  const int64_t rows = csr_rows(attrs, *in, 1, (*in)[0][0]);
  const Shape& rhs = (*in)[3];
  const int64_t inner = p.transpose_a ? rows : p.num_cols;
  const int64_t outer = p.transpose_a ? p.num_cols : rows;
  if (rhs.ndim() < 1 || rhs.ndim() > 2 || rhs[0] != inner)
    value_error("[", op_name(attrs), "] the dense operand must be 1-D or 2-D with ", inner,
                " rows (the CSR matrix is ", rows, " x ", p.num_cols,
                p.transpose_a ? ", transposed" : "", "); got shape ", rhs.str());
  assign_shape(attrs, &(*out)[0], rhs.ndim() == 2 ? Shape{outer, rhs[1]} : Shape{outer}, "output",
               0);
  return true;
}

// ograd has the forward result's shape: (rows or num_cols) x the dense operand's columns.
bool csr_dot_data_grad_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!known(*in)) return false;
  const auto& p = attrs.get<CsrDotParam>();
  const int64_t rows = csr_rows(attrs, *in, 1, -1);
  const Shape &ograd = (*in)[0], &rhs = (*in)[3];
  const int64_t rhs_rows = p.transpose_a ? rows : p.num_cols;
  const int64_t ograd_rows = p.transpose_a ? p.num_cols : rows;
  const bool fits = rhs.ndim() >= 1 && rhs.ndim() <= 2 && ograd.ndim() == rhs.ndim() &&
                    rhs[0] == rhs_rows && ograd[0] == ograd_rows &&
                    (rhs.ndim() == 1 || ograd[1] == rhs[1]);
  if (!fits)
    value_error("[", op_name(attrs), "] expected a dense operand with ", rhs_rows,
                " rows and an output gradient with ", ograd_rows,
                " rows and the same number of columns; got ", rhs.str(), " and ", ograd.str());
  assign_shape(attrs, &(*out)[0], Shape{(*in)[1][0]}, "output", 0);
  return true;
}

bool csr_todense_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!known(*in)) return false;
  require_vector(attrs, (*in)[0], "data");
  const int64_t rows = csr_rows(attrs, *in, 1, (*in)[0][0]);
  assign_shape(attrs, &(*out)[0], Shape{rows, attrs.get<CsrShapeParam>().num_cols}, "output", 0);
  return true;
}

bool csr_gather_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!known(*in)) return false;
  const int64_t rows = csr_rows(attrs, *in, 1, -1);
  const Shape expect{rows, attrs.get<CsrShapeParam>().num_cols};
  if ((*in)[0] != expect)
    value_error("[", op_name(attrs), "] the dense matrix must have shape ", expect.str(), ", got ",
                (*in)[0].str());
  assign_shape(attrs, &(*out)[0], Shape{(*in)[1][0]}, "output", 0);
  return true;
}

void require_index_types(const NodeAttrs& attrs, const DTypeVector& in, int k) {
  for (int i = k; i < k + 2; ++i)
    if (in[i] != DType::kUnknown && !is_integer(in[i]))
      type_error("[", op_name(attrs), "] ", i == k ? "indices" : "indptr",
                 " must have an integer dtype, got ", in[i]);
}

// Values (input 0) and the dense operand (input 3, if any) share one float dtype.
bool csr_value_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  require_index_types(attrs, *in, 1);
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return false;
  if (!is_float(t))
    type_error("[", op_name(attrs), "] the values must have a float dtype, got ", t);
  if (in->size() > 3 && (*in)[3] != DType::kUnknown && (*in)[3] != t)
    type_error("[", op_name(attrs),
               "] the CSR values and the dense operand must have the same "
               "dtype; got ",
               t, " and ", (*in)[3]);
  assign_type(attrs, &(*out)[0], t, "output", 0);
  return true;
}

// ---- gradients ----

NodeEntry zeros_like(const NodeEntry& e) { return make_node("_np_zeros_like", {e}); }

std::map<std::string, std::string> dot_params(const NodePtr& n, bool flip) {
  const auto& p = n->attrs.get<CsrDotParam>();
  return {{"num_cols", std::to_string(p.num_cols)},
          {"transpose_a", (p.transpose_a != flip) ? "True" : "False"}};
}

std::map<std::string, std::string> shape_params(const NodePtr& n) {
  return {{"num_cols", std::to_string(n->attrs.get<CsrShapeParam>().num_cols)}};
}

// d(A @ rhs): the values get <ograd row, rhs row> at each stored position; rhs gets A.T @
// ograd (and for A.T @ rhs, A @ ograd).
std::vector<NodeEntry> csr_dot_gradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const auto& in = n->inputs;
  return {make_node("_backward_sparse_csr_dot_data", {og[0], in[1], in[2], in[3]},
                    dot_params(n, false)),
          zeros_like(in[1]), zeros_like(in[2]),
          make_node("_sparse_csr_dot", {in[0], in[1], in[2], og[0]}, dot_params(n, true))};
}

std::vector<NodeEntry> csr_todense_gradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const auto& in = n->inputs;
  return {make_node("_sparse_csr_gather", {og[0], in[1], in[2]}, shape_params(n)),
          zeros_like(in[1]), zeros_like(in[2])};
}

std::vector<NodeEntry> csr_gather_gradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const auto& in = n->inputs;
  return {make_node("_sparse_csr_todense", {og[0], in[1], in[2]}, shape_params(n)),
          zeros_like(in[1]), zeros_like(in[2])};
}

Op& register_csr_op(const char* name, const char* doc, const char* first, int num_inputs) {
  Op& op = OpRegistry::global().register_op(name).describe(doc).set_num_inputs(num_inputs);
  op.add_argument(first, "NDArray", "Values (or the dense operand, see the description).")
      .add_argument("indices", "NDArray", "Column of each stored value (integer, 1-D).")
      .add_argument("indptr", "NDArray", "Start of each row's values, then nnz (integer, 1-D).");
  return op;
}

[[maybe_unused]] const bool registered = [] {
  register_csr_op("_sparse_csr_dot",
                  "Product of a CSR matrix (data, indices, indptr; num_cols columns) or its "
                  "transpose with a dense 1-D or 2-D array; dense result.",
                  "data", 4)
      .add_argument("rhs", "NDArray", "Dense operand.")
      .set_params<CsrDotParam>()
      .set_attr<FInferShape>("FInferShape", csr_dot_shape)
      .set_attr<FInferType>("FInferType", csr_value_type)
      .set_attr<FCompute>("FCompute<cpu>", csr_dot_compute)
      .set_attr<FGradient>("FGradient", csr_dot_gradient);
  register_csr_op("_backward_sparse_csr_dot_data",
                  "Gradient of _sparse_csr_dot for the CSR values: (ograd, indices, indptr, rhs) "
                  "-> one value per stored position.",
                  "ograd", 4)
      .add_argument("rhs", "NDArray", "The forward dense operand.")
      .set_params<CsrDotParam>()
      .set_attr<FInferShape>("FInferShape", csr_dot_data_grad_shape)
      .set_attr<FInferType>("FInferType", csr_value_type)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", csr_dot_data_grad_compute);
  register_csr_op("_sparse_csr_todense",
                  "The dense matrix of a CSR matrix (data, indices, indptr; num_cols columns); "
                  "values stored twice at one position are summed.",
                  "data", 3)
      .set_params<CsrShapeParam>()
      .set_attr<FInferShape>("FInferShape", csr_todense_shape)
      .set_attr<FInferType>("FInferType", csr_value_type)
      .set_attr<FCompute>("FCompute<cpu>", csr_todense_compute)
      .set_attr<FGradient>("FGradient", csr_todense_gradient);
  register_csr_op("_sparse_csr_gather",
                  "The values of a dense (rows x num_cols) matrix at the stored positions of a "
                  "CSR pattern (indices, indptr): its first argument is the dense matrix.",
                  "dense", 3)
      .set_params<CsrShapeParam>()
      .set_attr<FInferShape>("FInferShape", csr_gather_shape)
      .set_attr<FInferType>("FInferType", csr_value_type)
      .set_attr<FCompute>("FCompute<cpu>", csr_gather_compute)
      .set_attr<FGradient>("FGradient", csr_gather_gradient);
  return true;
}();

}  // namespace
}  // namespace ndx
