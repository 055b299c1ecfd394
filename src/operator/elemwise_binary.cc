// Elementwise binary ops with NumPy broadcasting and promotion (_np_add, _np_less, ...) and
// their backward ops. Each op is one row: name, type rule, functor (operator/math/binary-inl.h)
// and gradient. The engine casts the inputs to the promoted compute dtype a block at a time,
// so kernels are instantiated per dtype, not per dtype pair; this file is compiled once per
// SIMD target for them.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "operator/elemwise_binary.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include "kernel/elementwise-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
#include "operator/math/binary-inl.h"
// SquaredDiff, shared with batch_norm's statistics (nn-inl.h's row ops name the reducers).
#include "kernel/math/reducers-inl.h"
#include "operator/math/nn-inl.h"
}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/dispatch.h"
#include "kernel/gpu.h"
#include "kernel/pointwise.h"
#include "kernel/reduce.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

enum class BinaryType {
  kPromote,        // promoted dtype; bool stays bool (add = or, multiply = and)
  kPromoteNoBool,  // promoted dtype; bool with bool is a TypeError (subtract)
  kBoolToInt8,     // promoted dtype; bool with bool computes in int8 (floor_divide, mod, power)
  kFloat,          // the promoted dtype made float (true_divide)
  kCompare,        // computes in the promoted dtype, output bool
  kIntegral,       // promoted dtype of integers or bool; floats are a TypeError (bitwise_and)
  kIntegerOnly,    // promoted dtype of integers; bool and floats are TypeErrors (gcd)
  kShift,          // as kIntegral, bool with bool computes in int8 (left_shift)
  kFloat64,        // float64, or complex128 for complex input (float_power)
  kLdexp,          // x1's dtype made float; x2 must be an integer (ldexp)
};

DType compute_type(const std::string& op, BinaryType rule, DType a, DType b) {
  DType t = promote_types(a, b);
  switch (rule) {
    case BinaryType::kPromoteNoBool:
      if (t == DType::kBool)
        type_error("[", op, "] numpy boolean subtract is not supported; use logical_xor instead");
      return t;
    case BinaryType::kBoolToInt8:
      return t == DType::kBool ? DType::kInt8 : t;
    case BinaryType::kFloat:
      return float_result_type(t);
    case BinaryType::kIntegral:
    case BinaryType::kShift:
    case BinaryType::kIntegerOnly:
      if (is_float(t) || (rule == BinaryType::kIntegerOnly && t == DType::kBool))
        type_error("[", op, "] takes ",
                   rule == BinaryType::kIntegerOnly ? "integer" : "integer and boolean",
                   " arrays, got ", a, " and ", b);
      return rule == BinaryType::kShift && t == DType::kBool ? DType::kInt8 : t;
    case BinaryType::kFloat64:  // NumPy's loops are d and D: complex stays complex
      return is_complex(t) ? DType::kComplex128 : DType::kFloat64;
    case BinaryType::kLdexp:
      if (is_float(b) || is_complex(b))
        type_error("[", op, "] the exponent x2 must be an integer array, got ", b);
      if (b == DType::kUInt64)  // NumPy's loops take int32 / int64 exponents: no safe cast
        type_error("[", op, "] the exponent x2 cannot be uint64 (no safe cast to int64)");
      return float_result_type(a);
    default:
      return t;
  }
}

template <BinaryType rule>
DType binary_compute_type(const NodeAttrs& attrs, const std::vector<TBlob>& in, const TBlob&) {
  return compute_type(op_name(attrs), rule, in[0].dtype, in[1].dtype);
}

// Whether b is one host element equal to 2 (2 + 0j for a complex one).
bool is_host_scalar_two(const TBlob& b) {
  if (b.size() != 1 || b.device.is_gpu()) return false;
  std::complex<double> v;
  kernel::convert(&v, DType::kComplex128, 1, b.dptr, b.dtype, 1, 1);
  return v == std::complex<double>(2.0, 0.0);
}

// Integer powers reject negative exponents (NumPy: ValueError) before anything is computed.
// x ** 2 runs as x * x in the compute type, as NumPy's does: the same value as pow's (pow is
// a scalar libm call per element, 50x slower for float32).
FCompute power_compute(FCompute run, kernel::ElementwiseFn multiply) {
  return [run, multiply](const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    DType t = compute_type(op_name(attrs), BinaryType::kBoolToInt8, in[0].dtype, in[1].dtype);
    if (is_host_scalar_two(in[1]) && !out[0].device.is_gpu() && req[0] != kNullOp) {
      kernel::apply(multiply, {in[0], in[0]}, out[0], req[0], t);
      return;
    }
    if (is_integer(t) && !is_unsigned(t) && in[1].size() > 0 && kernel::min_value(in[1]) < 0)
      value_error("[power] Integers to negative integer powers are not allowed.");
    run(attrs, ctx, in, req, out);
  };
}

bool binary_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape &a = (*in)[0], &b = (*in)[1];
  if (!a.is_known() || !b.is_known()) return false;
  assign_shape(attrs, &(*out)[0], a == b ? a : broadcast_shapes(a, b, op_name(attrs).c_str()),
               "output", 0);
  return true;
}

// `types`: the functor's dtype categories (complex input without the complex category is a
// TypeError at type inference).
Op& register_binary(const char* name, const char* doc, BinaryType rule, FCompute compute,
                    bool on_gpu, unsigned types = kernel::kAllTypes) {
  std::string op_name = name;
  Op& op = OpRegistry::global()
               .register_op(name)
               .describe(doc)
               .set_num_inputs(2)
               .add_argument("x1", "NDArray", "First input array.")
               .add_argument("x2", "NDArray", "Second input array (broadcast against x1).")
               .set_attr<FInferShape>("FInferShape", binary_shape)
               .set_attr<FInferType>(
                   "FInferType",
                   [rule, op_name, types](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                     if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown) return false;
                     if ((is_complex((*in)[0]) || is_complex((*in)[1])) &&
                         !(types & kernel::kComplexTypes))
                       type_error("[", op_name, "] does not take complex input; got ", (*in)[0],
                                  " and ", (*in)[1]);
                     DType t = compute_type(op_name, rule, (*in)[0], (*in)[1]);
                     (*out)[0] = rule == BinaryType::kCompare ? DType::kBool : t;
                     return true;
                   })
               .set_attr<FInplaceOption>("FInplaceOption",
                                         [](const NodeAttrs&) {
                                           return std::vector<std::pair<int, int>>{{0, 0}, {1, 0}};
                                         })
               .set_attr<TStridedInputs>("TStridedInputs", true)
               .set_attr<bool>("TElementwise", true)
               .set_attr<bool>("TIsUfunc", true)  // dtype= / casting= / where=
               .set_attr<FCompute>("FCompute<cpu>", compute);
  if (on_gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
  // NumPy computes these in a float (or compares), so a Python int outside an integer
  // array's range is not an OverflowError (python/src/module.cc reads this).
  if (rule == BinaryType::kFloat || rule == BinaryType::kFloat64 || rule == BinaryType::kCompare)
    op.set_attr<bool>("TWidensPythonInts", true);
  // Python floats reach a float64 loop as float64, not rounded to the default float first
  // (python/src/convert.cc).
  if (rule == BinaryType::kFloat64) op.set_attr<bool>("TFloat64Loop", true);
  return op;
}

// ---- backward: (ograd, a, b) -> (grad_a, grad_b), each summed back to its input's shape ----
// grad (req) G(ograd, a, b) collapsed to grad's shape.
void binary_grad(kernel::ElementwiseFn g_fn, const std::vector<TBlob>& in, const TBlob& grad,
                 OpReqType req) {
  if (req == kNullOp) return;
  const TBlob& g = in[0];
  if (grad.shape == g.shape) {
    kernel::apply(g_fn, in, grad, req, g.dtype);
    return;
  }
  NDArray full(g.shape, g.dtype, grad.device);
  kernel::apply(g_fn, in, kernel::to_blob(full), kWriteTo, g.dtype);
  kernel::sum_to_shape(kernel::to_blob(full), grad, req);
}

FCompute binary_backward(kernel::ElementwiseFn da, kernel::ElementwiseFn db) {
  return [da, db](const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    if (!is_float(in[0].dtype))
      type_error("[", op_name(attrs), "] gradients need a float dtype, got ", in[0].dtype);
    binary_grad(da, in, out[0], req[0]);
    binary_grad(db, in, out[1], req[1]);
  };
}

Op& register_binary_backward(const char* name, FCompute compute, bool on_gpu) {
  Op& op = OpRegistry::global()
               .register_op(name)
               .describe(
                   "Backward of the binary op of the same stem: (ograd, x1, x2) -> (grad1, grad2).")
               .set_num_inputs(3)
               .set_num_outputs(2)
               .add_argument("ograd", "NDArray", "Gradient of the output.")
               .add_argument("x1", "NDArray", "Forward input 1.")
               .add_argument("x2", "NDArray", "Forward input 2.")
               .set_attr<FInferShape>(
                   "FInferShape",
                   [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                     const Shape &g = (*in)[0], &a = (*in)[1], &b = (*in)[2];
                     if (!g.is_known() || !a.is_known() || !b.is_known()) return false;
                     const Shape full = broadcast_shapes(a, b, op_name(attrs).c_str());
                     if (g != full)
                       value_error("[", op_name(attrs), "] ograd has shape ", g.str(),
                                   ", expected the broadcast shape of the inputs ", full.str());
                     assign_shape(attrs, &(*out)[0], a, "output", 0);
                     assign_shape(attrs, &(*out)[1], b, "output", 1);
                     return true;
                   })
               .set_attr<FInferType>("FInferType",
                                     [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                                       (*out)[0] = (*out)[1] = (*in)[0];
                                       return (*in)[0] != DType::kUnknown;
                                     })
               .set_attr<TIsBackward>("TIsBackward", true)
               .set_attr<TStridedInputs>("TStridedInputs", true)
               .set_attr<FCompute>("FCompute<cpu>", compute);
  if (on_gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
  return op;
}

// ---- collapse_sum_like / broadcast_like: undoing and redoing broadcasting, each the other's
// gradient, so gradients through broadcasting ops are differentiable to any order ----
NodeEntry collapse_like(NodeEntry g, NodeEntry like) {
  return make_node("_npi_collapse_sum_like", {std::move(g), std::move(like)});
}
NodeEntry op2(const char* op, NodeEntry a, NodeEntry b) {
  return make_node(op, {std::move(a), std::move(b)});
}

// An operand's gradient takes the operand's dtype, as PyTorch's: float32 x * float64 w sends a
// float64 gradient back, which the ops before x (a softmax's backward, whose output and ograd
// must agree) receive as float32. The gradient reaching a real operand of a complex product is
// complex; the operand's gradient is its real part. Integer operands keep the gradient's
// (real) dtype.
bool collapse_type(const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
  const DType g = (*in)[0], like = (*in)[1];
  if (g == DType::kUnknown || like == DType::kUnknown) return false;
  if (!is_complex(like) && is_inexact(like))
    (*out)[0] = like;
  else
    (*out)[0] = is_complex(g) && !is_complex(like) ? real_dtype(g) : g;
  return true;
}

void collapse_compute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (in[0].dtype == out[0].dtype) return kernel::sum_to_shape(in[0], out[0], req[0]);
  if (!is_complex(in[0].dtype)) {  // (summed in the gradient's precision, then cast)
    NDArray sum(out[0].shape, in[0].dtype, in[0].device);
    kernel::sum_to_shape(in[0], kernel::to_blob(sum), kWriteTo);
    return kernel::write_req(sum, kernel::as_array(out[0]), req[0]);
  }
  static const Op* real_op = Op::get("_np_real");
  static const FCompute& real = Op::attr<FCompute>("FCompute<cpu>")[real_op];
  if (in[0].device.is_gpu())
    not_implemented("[collapse_sum_like] complex gradients on a GPU are not implemented yet");
  NDArray part(in[0].shape, real_dtype(in[0].dtype), in[0].device);
  real(real_op->make_attrs(), OpContext{}, {in[0]}, {kWriteTo}, {kernel::to_blob(part)});
  if (part.dtype() != out[0].dtype) part = part.astype(out[0].dtype);
  kernel::sum_to_shape(kernel::to_blob(part), out[0], req[0]);
}

void register_like_ops() {
  auto second_shape = [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
    if (!(*in)[1].is_known()) return false;
    assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
    return true;
  };
  OpRegistry::global()
      .register_op("_npi_collapse_sum_like")
      .describe("x summed over the axes along which `like`'s shape broadcasts to x's.")
      .set_num_inputs(2)
      .add_argument("x", "NDArray", "The array to sum.")
      .add_argument("like", "NDArray", "The array whose shape the result takes.")
      .set_attr<FInferShape>(
          "FInferShape",
          [second_shape](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
            if ((*in)[0].is_known() && (*in)[1].is_known() &&
                broadcast_shapes((*in)[1], (*in)[0], "collapse_sum_like") != (*in)[0])
              value_error("[collapse_sum_like] cannot sum ", (*in)[0].str(), " to ", (*in)[1].str(),
                          ": ", (*in)[1].str(), " does not broadcast to ", (*in)[0].str());
            return second_shape(attrs, in, out);
          })
      .set_attr<FInferType>("FInferType", collapse_type)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", collapse_compute)
      .set_attr<FCompute>("FCompute<gpu>", collapse_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{op2("_npi_broadcast_like", og[0], n->inputs[0]),
                                      make_node("_np_zeros_like", {n->inputs[1]})};
      });
  OpRegistry::global()
      .register_op("_npi_broadcast_like")
      .describe("x broadcast to the shape of `like`.")
      .set_num_inputs(2)
      .add_argument("x", "NDArray", "The array to broadcast.")
      .add_argument("like", "NDArray", "The array whose shape the result takes.")
      .set_attr<FInferShape>(
          "FInferShape",
          [second_shape](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
            if ((*in)[0].is_known() && (*in)[1].is_known() &&
                broadcast_shapes((*in)[0], (*in)[1], "broadcast_like") != (*in)[1])
              value_error("[broadcast_like] cannot broadcast ", (*in)[0].str(), " to ",
                          (*in)[1].str());
            return second_shape(attrs, in, out);
          })
      .set_attr<FInferType>("FInferType", FirstInputType)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>",
                          [](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
                            kernel::copy(in[0], out[0], req[0]);
                          })
      .set_attr<FCompute>("FCompute<gpu>",
                          [](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
                            kernel::copy(in[0], out[0], req[0]);
                          })
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{collapse_like(og[0], n->inputs[0]),
                                      make_node("_np_zeros_like", {n->inputs[1]})};
      });
}

// FGradient from formulas for (grad_a, grad_b) before collapsing them to the inputs' shapes.
using BinaryFormula = std::pair<NodeEntry, NodeEntry> (*)(NodeEntry g, NodeEntry a, NodeEntry b,
                                                          NodeEntry y);
FGradient composed(BinaryFormula formula) {
  return [formula](const NodePtr& n, const std::vector<NodeEntry>& og) {
    auto [ga, gb] = formula(og[0], n->inputs[0], n->inputs[1], NodeEntry{n, 0, 0});
    return std::vector<NodeEntry>{collapse_like(ga, n->inputs[0]), collapse_like(gb, n->inputs[1])};
  };
}

// ---- gradients of the binary backward ops (second and higher order) ----
// Each backward op B(g, a, b) = (collapse_a(g P(a, b)), collapse_b(g Q(a, b))) is linear in
// g. With the output gradients oa, ob (of a's and b's shapes) its gradient is
//   d/dg = oa P + ob Q (broadcast to g's shape),
//   d/da = g (oa dP/da + ob dQ/da),  d/db = g (oa dP/db + ob dQ/db)  (collapsed to a, b),
// written with forward ops, which are differentiable themselves: every order works.
using E = NodeEntry;
E mul(E x, E y) { return op2("_np_multiply", std::move(x), std::move(y)); }
E add(E x, E y) { return op2("_np_add", std::move(x), std::move(y)); }
E zeros(E like) { return make_node("_np_zeros_like", {std::move(like)}); }
E where(E c, E x, E y) {
  return make_node("_np_where", {std::move(c), std::move(x), std::move(y)});
}
E is_zero(E x) { return op2("_np_equal", x, zeros(x)); }

// maximum / minimum: P and Q pick g by a comparison, whose derivative is 0.
FGradient pick_backward_gradient(const char* picks_a) {
  return [picks_a](const NodePtr& n, const std::vector<NodeEntry>& og) {
    const E &a = n->inputs[1], &b = n->inputs[2];
    return std::vector<E>{where(op2(picks_a, a, b), og[0], og[1]), zeros(a), zeros(b)};
  };
}

// mod: P = 1, Q = -floor(a / b), both piecewise constant.
std::vector<E> mod_backward_gradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const E &a = n->inputs[1], &b = n->inputs[2];
  E dg = op2("_np_subtract", og[0], mul(og[1], op2("_np_floor_divide", a, b)));
  return {op2("_npi_broadcast_like", dg, n->inputs[0]), zeros(a), zeros(b)};
}

// power: P = b a^(b-1) (0 where b == 0), Q = a^b log a (0 where a == 0); with log a taken as
// 0 at a == 0, dP/db = dQ/da = R = a^(b-1) (1 + b log a), dQ/db = Q log a, and
// dP/da = b (b-1) a^(b-2) (0 where b (b-1) == 0), as PowerGradA / PowerGradB mask them.
std::vector<E> power_backward_gradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const E &g = n->inputs[0], &a = n->inputs[1], &b = n->inputs[2];
  const E oa = op2("_npi_broadcast_like", og[0], g), ob = op2("_npi_broadcast_like", og[1], g);
  const E one = make_node("_np_ones_like", {b});
  const E bm1 = op2("_np_subtract", b, one);
  // log a, taken as 0 where a == 0 or where the output gradient multiplying it is 0: the
  // exponent's terms are NaN at a negative base, and a NaN even in an unused branch would
  // reach the next order's gradient (0 * NaN); log's input is 1 there, so no branch has one.
  const auto log_unless = [&](const E& unused) {
    const E off = op2("_np_logical_or", is_zero(a), unused);
    return where(off, zeros(g),
                 make_node("_np_log", {where(off, make_node("_np_ones_like", {a}), a)}));
  };
  const E log_oa = log_unless(is_zero(oa)), log_ob = log_unless(is_zero(ob));
  const E a_bm1 = op2("_np_power", a, bm1);
  const E p = where(is_zero(b), zeros(g), mul(b, a_bm1));
  const auto r = [&](const E& log_a) {
    return mul(a_bm1, add(make_node("_np_ones_like", {log_a}), mul(b, log_a)));
  };
  const E q = mul(op2("_np_power", a, b), log_ob);
  const E c = mul(b, bm1);
  const E dp_da =
      where(is_zero(c), zeros(g), mul(c, op2("_np_power", a, op2("_np_subtract", bm1, one))));
  // An output gradient of 0 contributes 0 (the factor is masked, not the product, so the
  // next order, d/do = factor, stays finite too).
  const auto times = [&](const E& o, const E& x) { return mul(o, where(is_zero(o), zeros(g), x)); };
  const E dg = add(times(oa, p), times(ob, q));
  const E da = mul(g, add(times(oa, dp_da), times(ob, r(log_ob))));
  const E db = mul(g, add(times(oa, r(log_oa)), times(ob, mul(q, log_ob))));
  return {dg, collapse_like(da, a), collapse_like(db, b)};
}

#define NDX_KERNEL(F) NDX_ELEMENTWISE(F)
#define NDX_BINARY(name, F, rule, doc)                                                          \
  register_binary(name, doc, BinaryType::rule,                                                  \
                  kernel::elementwise_fn(NDX_KERNEL(F), binary_compute_type<BinaryType::rule>), \
                  NDX_KERNEL(F).gpu != nullptr, NDX_KERNEL(F).types)                            \
      .set_attr<kernel::PointwiseKernel>(                                                       \
          "FPointwiseKernel",                                                                   \
          kernel::PointwiseKernel{NDX_KERNEL(F), binary_compute_type<BinaryType::rule>})

// A comparison of a signed integer with a uint64 exactly, as NumPy 2's: promotion would
// compare in float64, which rounds both past 2**53 (2**63 - 1 < 2**63 came out false). The
// signed side's negatives decide alone (`negative_left` / `negative_right`: the result when
// the negative operand is x1 / x2); the rest compare as uint64. Other dtypes, and GPU arrays,
// take `plain`.
FCompute signed_unsigned_exact(kernel::ElementwiseFn compare, bool negative_left,
                               bool negative_right) {
  const FCompute plain = kernel::elementwise_fn(compare, binary_compute_type<BinaryType::kCompare>);
  return [=](const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    const auto is_signed_int = [](DType t) { return is_integer(t) && !is_unsigned(t); };
    int s = -1;  // the signed operand
    if (is_signed_int(in[0].dtype) && in[1].dtype == DType::kUInt64) s = 0;
    if (in[0].dtype == DType::kUInt64 && is_signed_int(in[1].dtype)) s = 1;
    if (s < 0 || out[0].device.is_gpu() || req[0] == kNullOp)
      return plain(attrs, ctx, in, req, out);
    NDArray as_unsigned(in[s].shape, DType::kUInt64);
    kernel::copy(in[s], kernel::to_blob(as_unsigned));
    std::vector<TBlob> operands = in;
    operands[s] = kernel::to_blob(as_unsigned);
    NDArray unsigned_result(out[0].shape, DType::kBool);
    kernel::apply(compare, operands, kernel::to_blob(unsigned_result), kWriteTo, DType::kUInt64);
    const NDArray zero = NDArray::scalar(0, in[s].dtype);
    NDArray negative(in[s].shape, DType::kBool);
    kernel::apply(NDX_KERNEL(Less), {in[s], kernel::to_blob(zero)}, kernel::to_blob(negative),
                  kWriteTo, in[s].dtype);
    const NDArray decided = NDArray::scalar(s == 0 ? negative_left : negative_right, DType::kBool);
    kernel::apply(
        NDX_KERNEL(Where),
        {kernel::to_blob(negative), kernel::to_blob(decided), kernel::to_blob(unsigned_result)},
        out[0], req[0], DType::kBool);
  };
}

kernel::ComputeTypeFn compute_of(BinaryType rule) {
  switch (rule) {
    case BinaryType::kCompare:
      return binary_compute_type<BinaryType::kCompare>;
    case BinaryType::kIntegral:
      return binary_compute_type<BinaryType::kIntegral>;
    case BinaryType::kShift:
      return binary_compute_type<BinaryType::kShift>;
    case BinaryType::kIntegerOnly:
      return binary_compute_type<BinaryType::kIntegerOnly>;
    default:
      return binary_compute_type<BinaryType::kPromote>;
  }
}

// divmod: floor_divide and mod of the same operands, two outputs.
void register_divmod() {
  const kernel::ElementwiseFn quotient = NDX_KERNEL(FloorDivide), remainder = NDX_KERNEL(Mod);
  auto compute = [quotient, remainder](
                     const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    kernel::apply(quotient, in, out[0], req[0], out[0].dtype);
    kernel::apply(remainder, in, out[1], req[1], out[0].dtype);
  };
  Op& op =
      OpRegistry::global()
          .register_op("_np_divmod")
          .describe("(x1 // x2, x1 % x2), elementwise with broadcasting.")
          .set_num_inputs(2)
          .set_num_outputs(2)
          .add_argument("x1", "NDArray", "Dividend.")
          .add_argument("x2", "NDArray", "Divisor (broadcast against x1).")
          .set_attr<FInferShape>("FInferShape",
                                 [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                                   const Shape &a = (*in)[0], &b = (*in)[1];
                                   if (!a.is_known() || !b.is_known()) return false;
                                   const Shape s = a == b ? a : broadcast_shapes(a, b, "divmod");
                                   assign_shape(attrs, &(*out)[0], s, "output", 0);
                                   assign_shape(attrs, &(*out)[1], s, "output", 1);
                                   return true;
                                 })
          .set_attr<FInferType>("FInferType",
                                [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                                  if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown)
                                    return false;
                                  (*out)[0] = (*out)[1] = compute_type(
                                      "divmod", BinaryType::kBoolToInt8, (*in)[0], (*in)[1]);
                                  return true;
                                })
          .set_attr<TStridedInputs>("TStridedInputs", true)
          .set_attr<bool>("TIsUfunc", true)
          .set_attr<FCompute>("FCompute<cpu>", compute)
          .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
            // The quotient is piecewise constant; the remainder a - q b.
            NodeEntry q{n, 0, 0};
            return std::vector<NodeEntry>{
                collapse_like(og[1], n->inputs[0]),
                collapse_like(make_node("_np_negative", {op2("_np_multiply", og[1], q)}),
                              n->inputs[1])};
          });
  if (quotient.gpu && remainder.gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
}

// The output shape of a ternary elementwise op: its three inputs broadcast together.
bool ternary_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out, const char* name) {
  for (const Shape& s : *in)
    if (!s.is_known()) return false;
  const Shape s = broadcast_shapes(broadcast_shapes((*in)[0], (*in)[1], name), (*in)[2], name);
  assign_shape(attrs, &(*out)[0], s, "output", 0);
  return true;
}

// where(condition, x, y): a ternary elementwise op. The condition is read as bool (a non-bool
// condition is converted first, so int8 2 and float 0.5 both count as true).
void register_where() {
  const kernel::ElementwiseFn fn = NDX_KERNEL(Where);
  auto compute = [fn](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    NDArray as_bool;
    TBlob c = in[0];
    if (c.dtype != DType::kBool) {
      as_bool = NDArray(c.shape, DType::kBool, out[0].device);
      kernel::copy(c, kernel::to_blob(as_bool), kWriteTo);
      c = kernel::to_blob(as_bool);
    }
    kernel::apply(fn, {c, in[1], in[2]}, out[0], req[0], out[0].dtype);
  };
  Op& op =
      OpRegistry::global()
          .register_op("_np_where")
          .describe("x where condition is true, else y, with broadcasting.")
          .set_num_inputs(3)
          .add_argument("condition", "NDArray", "Where to take x.")
          .add_argument("x", "NDArray", "Values where condition is true.")
          .add_argument("y", "NDArray", "Values where condition is false.")
          .set_attr<FInferShape>("FInferShape",
                                 [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                                   return ternary_shape(attrs, in, out, "where");
                                 })
          .set_attr<FInferType>("FInferType",
                                [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                                  if ((*in)[1] == DType::kUnknown || (*in)[2] == DType::kUnknown)
                                    return false;
                                  (*out)[0] = promote_types((*in)[1], (*in)[2]);
                                  return true;
                                })
          .set_attr<TStridedInputs>("TStridedInputs", true)
          .set_attr<FCompute>("FCompute<cpu>", compute)
          .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
            const NodeEntry& c = n->inputs[0];
            NodeEntry zero = make_node("_np_zeros_like", {og[0]});
            return std::vector<NodeEntry>{
                make_node("_np_zeros_like", {c}),
                collapse_like(make_node("_np_where", {c, og[0], zero}), n->inputs[1]),
                collapse_like(make_node("_np_where", {c, zero, og[0]}), n->inputs[2])};
          });
  if (fn.gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
}

// clip(x, lo, hi): minimum(maximum(x, lo), hi) in one pass (np.clip with both bounds; the
// Python wrapper composes the one-bound forms from maximum / minimum). Its gradient is the
// composition's, so ties and lo > hi send the gradient where the two ops would.
void register_clip() {
  const kernel::ElementwiseFn fn = NDX_KERNEL(Clip);
  auto compute = [fn](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    kernel::apply(fn, in, out[0], req[0], out[0].dtype);
  };
  Op& op =
      OpRegistry::global()
          .register_op("_npi_clip")
          .describe(
              "x limited to [lo, hi] elementwise, with broadcasting: minimum(maximum(x, lo), "
              "hi), so NaN propagates and lo > hi gives hi.")
          .set_num_inputs(3)
          .add_argument("x", "NDArray", "The values.")
          .add_argument("lo", "NDArray", "The lower bound (broadcast against x).")
          .add_argument("hi", "NDArray", "The upper bound (broadcast against x).")
          .set_attr<FInferShape>("FInferShape",
                                 [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                                   return ternary_shape(attrs, in, out, "clip");
                                 })
          .set_attr<FInferType>("FInferType",
                                [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                                  for (DType d : *in)
                                    if (d == DType::kUnknown) return false;
                                  const DType t =
                                      promote_types(promote_types((*in)[0], (*in)[1]), (*in)[2]);
                                  (*out)[0] = t;
                                  return true;
                                })
          .set_attr<TStridedInputs>("TStridedInputs", true)
          .set_attr<FCompute>("FCompute<cpu>", compute)
          .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
            const NodeEntry &x = n->inputs[0], &lo = n->inputs[1], &hi = n->inputs[2];
            const NodeEntry m = op2("_np_maximum", x, lo);
            const NodeEntry outer = make_node("_backward_minimum", {og[0], m, hi});
            const NodeEntry inner = make_node("_backward_maximum", {outer, x, lo});
            return std::vector<NodeEntry>{inner, NodeEntry{inner.node, 1, 0},
                                          NodeEntry{outer.node, 1, 0}};
          });
  if (fn.gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
}

// The binary ops of NumPy's ufunc set beyond the arithmetic and comparisons: rows only.
void register_more_binary() {
  using E = NodeEntry;
  NDX_BINARY("_np_arctan2", Arctan2, kFloat, "The angle of (x2, x1) in radians, elementwise.")
      .add_alias("_np_atan2")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E) {
            E s = op2("_np_add", op2("_np_multiply", a, a), op2("_np_multiply", b, b));
            return std::pair{
                op2("_np_true_divide", op2("_np_multiply", g, b), s),
                make_node("_np_negative", {op2("_np_true_divide", op2("_np_multiply", g, a), s)})};
          }));
  NDX_BINARY("_np_hypot", Hypot, kFloat, "sqrt(x1 ** 2 + x2 ** 2) without overflow.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E y) {
            E gy = op2("_np_true_divide", g, y);
            return std::pair{op2("_np_multiply", gy, a), op2("_np_multiply", gy, b)};
          }));
  NDX_BINARY("_np_logaddexp", Logaddexp, kFloat, "log(exp(x1) + exp(x2)) without overflow.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E y) {
            return std::pair{
                op2("_np_multiply", g, make_node("_np_exp", {op2("_np_subtract", a, y)})),
                op2("_np_multiply", g, make_node("_np_exp", {op2("_np_subtract", b, y)}))};
          }));
  NDX_BINARY("_np_logaddexp2", Logaddexp2, kFloat, "log2(2 ** x1 + 2 ** x2) without overflow.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E y) {
            return std::pair{
                op2("_np_multiply", g, make_node("_np_exp2", {op2("_np_subtract", a, y)})),
                op2("_np_multiply", g, make_node("_np_exp2", {op2("_np_subtract", b, y)}))};
          }));
  NDX_BINARY("_np_copysign", Copysign, kFloat, "|x1| with the sign of x2, elementwise.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E y) {
            E s = op2("_np_multiply", make_node("_np_sign", {a}), make_node("_np_sign", {y}));
            return std::pair{op2("_np_multiply", g, s), make_node("_np_zeros_like", {b})};
          }));
  // float16 / bfloat16 step in their own spacing (the engine computes them in float).
  const FCompute next_wide =
      kernel::elementwise_fn(NDX_KERNEL(Nextafter), binary_compute_type<BinaryType::kFloat>);
  const kernel::ElementwiseFn narrow = NDX_KERNEL(NextafterNarrow);
  const FCompute nextafter = [next_wide, narrow](const NodeAttrs& attrs, const OpContext& ctx,
                                                 const std::vector<TBlob>& in,
                                                 const std::vector<OpReqType>& req,
                                                 const std::vector<TBlob>& out) {
    const DType t = out[0].dtype;
    if (t == DType::kFloat16)
      kernel::apply(narrow, in, out[0], req[0], t, {10, -14, 65504.0});
    else if (t == DType::kBFloat16)
      kernel::apply(narrow, in, out[0], req[0], t, {7, -126, 3.3895313892515355e38});
    else
      next_wide(attrs, ctx, in, req, out);
  };
  register_binary("_np_nextafter", "The next float after x1 towards x2.", BinaryType::kFloat,
                  nextafter, narrow.gpu != nullptr)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_BINARY("_np_heaviside", Heaviside, kFloat, "0 for x1 < 0, 1 for x1 > 0, x2 where x1 is 0.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_BINARY("_np_ldexp", Ldexp, kLdexp, "x1 * 2 ** x2 for integer exponents x2.")
      .set_attr<FGradient>("FGradient", composed([](E g, E, E b, E) {
                             return std::pair{op2("_np_multiply", g, make_node("_np_exp2", {b})),
                                              make_node("_np_zeros_like", {b})};
                           }));
  NDX_BINARY("_np_fmax", Fmax, kPromote, "Elementwise maximum; a NaN on one side is ignored.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E) {
            E take_a =
                op2("_np_logical_or", op2("_np_greater_equal", a, b), make_node("_np_isnan", {b}));
            return std::pair{op2("_np_multiply", g, take_a),
                             op2("_np_multiply", g, make_node("_np_logical_not", {take_a}))};
          }));
  NDX_BINARY("_np_fmin", Fmin, kPromote, "Elementwise minimum; a NaN on one side is ignored.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E) {
            E take_a =
                op2("_np_logical_or", op2("_np_less_equal", a, b), make_node("_np_isnan", {b}));
            return std::pair{op2("_np_multiply", g, take_a),
                             op2("_np_multiply", g, make_node("_np_logical_not", {take_a}))};
          }));
  NDX_BINARY("_np_fmod", Fmod, kBoolToInt8, "C's remainder: the sign of x1; integer x % 0 is 0.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E) {
            E q = make_node("_np_trunc", {op2("_np_true_divide", a, b)});
            return std::pair{g, make_node("_np_negative", {op2("_np_multiply", g, q)})};
          }));
  NDX_BINARY("_np_float_power", Power, kFloat64, "x1 ** x2 computed in float64.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E y) {
            E bm1 = op2("_np_subtract", b, make_node("_np_ones_like", {b}));
            return std::pair{
                op2("_np_multiply", g, op2("_np_multiply", b, op2("_np_float_power", a, bm1))),
                op2("_np_multiply", g, op2("_np_multiply", y, make_node("_np_log", {a})))};
          }));
  struct Row {
    const char* name;
    kernel::ElementwiseFn fn;
    BinaryType rule;
    const char* doc;
    const char* alias;
  };
  for (const Row& r : {
           Row{"_np_logical_and", NDX_KERNEL(LogicalAnd), BinaryType::kCompare,
               "x1 and x2 as truth values, elementwise; the output is bool.", nullptr},
           Row{"_np_logical_or", NDX_KERNEL(LogicalOr), BinaryType::kCompare,
               "x1 or x2 as truth values, elementwise; the output is bool.", nullptr},
           Row{"_np_logical_xor", NDX_KERNEL(LogicalXor), BinaryType::kCompare,
               "x1 xor x2 as truth values, elementwise; the output is bool.", nullptr},
           Row{"_np_bitwise_and", NDX_KERNEL(BitwiseAnd), BinaryType::kIntegral,
               "x1 & x2 for integers and bool.", nullptr},
           Row{"_np_bitwise_or", NDX_KERNEL(BitwiseOr), BinaryType::kIntegral,
               "x1 | x2 for integers and bool.", nullptr},
           Row{"_np_bitwise_xor", NDX_KERNEL(BitwiseXor), BinaryType::kIntegral,
               "x1 ^ x2 for integers and bool.", nullptr},
           Row{"_np_left_shift", NDX_KERNEL(LeftShift), BinaryType::kShift,
               "x1 << x2 for integers; shifts past the width give 0.", "_np_bitwise_left_shift"},
           Row{"_np_right_shift", NDX_KERNEL(RightShift), BinaryType::kShift,
               "x1 >> x2 for integers (arithmetic for signed types).", "_np_bitwise_right_shift"},
           Row{"_np_gcd", NDX_KERNEL(Gcd), BinaryType::kIntegerOnly,
               "Greatest common divisor of |x1| and |x2|.", nullptr},
           Row{"_np_lcm", NDX_KERNEL(Lcm), BinaryType::kIntegerOnly,
               "Least common multiple of |x1| and |x2|.", nullptr},
       }) {
    Op& op =
        register_binary(r.name, r.doc, r.rule, kernel::elementwise_fn(r.fn, compute_of(r.rule)),
                        r.fn.gpu != nullptr, r.fn.types);
    op.set_attr<FGradient>("FGradient", MakeZeroGradNodes);
    if (r.alias) op.add_alias(r.alias);
  }
  // var / std's deviations squared in one pass (np.square(x - m) made two).
  NDX_BINARY("_npi_squared_difference", SquaredDiff, kFloat, "(x1 - x2) ** 2, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](E g, E a, E b, E) {
                             E t = op2("_np_multiply", g, op2("_np_subtract", a, b));
                             E ga = op2("_np_add", t, t);
                             return std::pair{ga, make_node("_np_negative", {ga})};
                           }));
  register_divmod();
  register_where();
  register_clip();
}

[[maybe_unused]] const bool registered = [] {
  register_like_ops();
  using E = NodeEntry;
  NDX_BINARY("_np_add", Add, kPromote, "x1 + x2, elementwise with broadcasting.")
      .set_attr<FGradient>("FGradient", composed([](E g, E, E, E) {
                             return std::pair{g, g};
                           }));
  NDX_BINARY("_np_subtract", Subtract, kPromoteNoBool, "x1 - x2, elementwise with broadcasting.")
      .set_attr<FGradient>("FGradient", composed([](E g, E, E, E) {
                             return std::pair{g, make_node("_np_negative", {g})};
                           }));
  // Gradients follow the conjugate Wirtinger convention (PyTorch's) for complex inputs:
  // d(a b) gives g conj(b) and g conj(a), through _npi_multiply_conj (a * b for real dtypes).
  NDX_BINARY("_np_multiply", Multiply, kPromote, "x1 * x2, elementwise with broadcasting.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E) {
            return std::pair{op2("_npi_multiply_conj", g, b), op2("_npi_multiply_conj", g, a)};
          }));
  NDX_BINARY("_npi_multiply_conj", MultiplyConj, kFloat,
             "x1 * conj(x2), elementwise (x1 * x2 for real dtypes): gradients' products.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E a, E b, E) {
            return std::pair{op2("_np_multiply", g, b), op2("_npi_multiply_conj", a, g)};
          }));
  NDX_BINARY("_npi_divide_conj", DivideConj, kFloat,
             "x1 / conj(x2), elementwise (x1 / x2 for real dtypes): gradients' quotients.")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E, E b, E y) {
            return std::pair{op2("_np_true_divide", g, b),
                             make_node("_np_negative", {op2("_npi_divide_conj",
                                                            op2("_npi_multiply_conj", y, g), b)})};
          }));
  NDX_BINARY("_np_true_divide", TrueDivide, kFloat,
             "x1 / x2, elementwise; integer inputs give the default float dtype.")
      .add_alias("_np_divide")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E, E b, E y) {
            // d/da = g / b ; d/db = -g * a / b^2 = -(g * y) / b (conjugated for complex)
            return std::pair{op2("_npi_divide_conj", g, b),
                             make_node("_np_negative", {op2("_npi_divide_conj",
                                                            op2("_npi_multiply_conj", g, y), b)})};
          }));
  NDX_BINARY("_np_floor_divide", FloorDivide, kBoolToInt8,
             "x1 // x2, the floor of the quotient; integer division by zero gives 0.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_BINARY("_np_mod", Mod, kBoolToInt8, "x1 % x2 with the sign of x2, as Python's %.")
      .add_alias("_np_remainder")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_mod"});
  const FCompute power = power_compute(
      kernel::elementwise_fn(NDX_KERNEL(Power), binary_compute_type<BinaryType::kBoolToInt8>),
      NDX_KERNEL(Multiply));
  NDX_BINARY("_np_power", Power, kBoolToInt8, "x1 ** x2, elementwise with broadcasting.")
      .add_alias("_np_pow")
      .set_attr<FCompute>("FCompute<cpu>", power, 11)
      .set_attr<FCompute>("FCompute<gpu>", power, 11)
      // Fused through its FCompute, which refuses negative integer exponents.
      .set_attr<kernel::PointwiseKernel>("FPointwiseKernel", kernel::PointwiseKernel{}, 11)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_power"});
  NDX_BINARY("_np_maximum", Maximum, kPromote, "Elementwise maximum; nan propagates.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_maximum"});
  NDX_BINARY("_np_minimum", Minimum, kPromote, "Elementwise minimum; nan propagates.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_minimum"});
  // (negative_left, negative_right): the result when x1 / x2 is a negative signed integer
  // and the other a uint64 (signed_unsigned_exact).
#define NDX_COMPARISON(name, F, doc, negative_left, negative_right)                                \
  NDX_BINARY(name, F, kCompare, doc)                                                               \
      .set_attr<FCompute>("FCompute<cpu>",                                                         \
                          signed_unsigned_exact(NDX_KERNEL(F), negative_left, negative_right), 11) \
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes)
  NDX_COMPARISON("_np_equal", Equal, "x1 == x2, elementwise; the output is bool.", false, false);
  NDX_COMPARISON("_np_not_equal", NotEqual, "x1 != x2, elementwise; the output is bool.", true,
                 true);
  NDX_COMPARISON("_np_less", Less, "x1 < x2, elementwise; the output is bool.", true, false);
  NDX_COMPARISON("_np_less_equal", LessEqual, "x1 <= x2, elementwise; the output is bool.", true,
                 false);
  NDX_COMPARISON("_np_greater", Greater, "x1 > x2, elementwise; the output is bool.", false, true);
  NDX_COMPARISON("_np_greater_equal", GreaterEqual, "x1 >= x2, elementwise; the output is bool.",
                 false, true);
#undef NDX_COMPARISON

  register_more_binary();
  const bool kOnGpu = NDX_KERNEL(PassGrad).gpu != nullptr;
  register_binary_backward("_backward_mod",
                           binary_backward(NDX_KERNEL(PassGrad), NDX_KERNEL(ModGradB)), kOnGpu)
      .set_attr<FGradient>("FGradient", mod_backward_gradient);
  register_binary_backward("_backward_power",
                           binary_backward(NDX_KERNEL(PowerGradA), NDX_KERNEL(PowerGradB)), kOnGpu)
      .set_attr<FGradient>("FGradient", power_backward_gradient);
  register_binary_backward("_backward_maximum",
                           binary_backward(NDX_KERNEL(MaximumGradA), NDX_KERNEL(MaximumGradB)),
                           kOnGpu)
      .set_attr<FGradient>("FGradient", pick_backward_gradient("_np_greater_equal"));
  register_binary_backward("_backward_minimum",
                           binary_backward(NDX_KERNEL(MinimumGradA), NDX_KERNEL(MinimumGradB)),
                           kOnGpu)
      .set_attr<FGradient>("FGradient", pick_backward_gradient("_np_less_equal"));
  return true;
}();

}  // namespace
}  // namespace ndx
#endif  // HWY_ONCE
