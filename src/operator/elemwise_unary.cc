// Elementwise unary ops (_np_negative, _np_sqrt, ...) and their backward ops. Each op is one
// row: name, how its output dtype follows the input, the functor (operator/math/unary-inl.h),
// and its gradient. The elementwise engine (kernel/elementwise-inl.h) runs the functors; this
// file is compiled once per SIMD target for them.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "operator/elemwise_unary.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include "kernel/elementwise-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
#include "operator/math/unary-inl.h"
}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernel/dispatch.h"
#include "kernel/gpu.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"

namespace ndx {
namespace {
enum class UnaryType {
  kSame,        // output dtype = input dtype
  kSameNoBool,  // as kSame, bool input is a TypeError (negative, sign)
  kBoolToInt8,  // as kSame, bool -> int8 (square)
  kFloat,       // ints and bool -> the default float dtype (sqrt, exp, ...)
  kBool,        // output is bool (logical_not)
};

DType unary_out_type(const std::string& op, UnaryType rule, DType in) {
  switch (rule) {
    case UnaryType::kSame:
      return in;
    case UnaryType::kSameNoBool:
      if (in == DType::kBool)
        type_error("[", op, "] is not supported for boolean input; use logical_not instead");
      return in;
    case UnaryType::kBoolToInt8:
      return in == DType::kBool ? DType::kInt8 : in;
    case UnaryType::kFloat:
      return float_result_type(in);
    case UnaryType::kBool:
      return DType::kBool;
  }
  return in;
}

Op& register_unary(const char* name, const char* doc, UnaryType rule, kernel::ElementwiseFn fn) {
  const FCompute compute = kernel::elementwise_fn(fn);
  Op& op = OpRegistry::global().register_op(name);
  std::string op_name = name;
  op.describe(doc)
      .set_num_inputs(1)
      .add_argument("x", "NDArray", "Input array.")
      .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
      .set_attr<FInferType>("FInferType",
                            [rule, op_name](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                              if ((*in)[0] == DType::kUnknown) return false;
                              (*out)[0] = unary_out_type(op_name, rule, (*in)[0]);
                              return true;
                            })
      .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", compute);
  if (fn.gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
  return op;
}

// ---- gradients, composed of registered forward ops so they are differentiable again ----
NodeEntry op1(const char* op, NodeEntry a) { return make_node(op, {std::move(a)}); }
NodeEntry op2(const char* op, NodeEntry a, NodeEntry b) {
  return make_node(op, {std::move(a), std::move(b)});
}

// x * c for a constant c (a decimal string), as graph nodes.
NodeEntry scaled(NodeEntry x, const char* c) {
  return op2("_np_multiply", x, make_node("_np_full_like", {x}, {{"fill_value", c}}));
}

// FGradient from a formula in (ograd, x, y).
FGradient composed(NodeEntry (*formula)(NodeEntry g, NodeEntry x, NodeEntry y)) {
  return [formula](const NodePtr& n, const std::vector<NodeEntry>& og) {
    return std::vector<NodeEntry>{formula(og[0], n->inputs[0], NodeEntry{n, 0, 0})};
  };
}

#define NDX_UNARY(name, F, rule, doc) register_unary(name, doc, UnaryType::rule, NDX_ELEMENTWISE(F))

[[maybe_unused]] const bool registered = [] {
  NDX_UNARY("_np_negative", Negative, kSameNoBool, "Numerical negative, elementwise.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseNone{"_np_negative"});
  NDX_UNARY("_np_absolute", Absolute, kSame, "Absolute value, elementwise.")
      .add_alias("_np_abs")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_np_multiply", g, op1("_np_sign", x));
                           }));
  NDX_UNARY("_np_sign", Sign, kSameNoBool, "Sign (-1, 0 or 1; nan for nan), elementwise.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_UNARY("_np_sqrt", Sqrt, kFloat, "Non-negative square root, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry, NodeEntry y) {
                             return op2("_np_true_divide", g, op2("_np_add", y, y));  // g / 2y
                           }));
  NDX_UNARY("_np_square", Square, kBoolToInt8, "Square, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_np_multiply", g, op2("_np_add", x, x));  // g * 2x
                           }));
  NDX_UNARY("_np_exp", Exp, kFloat, "Exponential, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry, NodeEntry y) {
                             return op2("_np_multiply", g, y);
                           }));
  NDX_UNARY("_np_log", Log, kFloat, "Natural logarithm, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_np_true_divide", g, x);
                           }));
  NDX_UNARY("_np_expm1", Expm1, kFloat, "exp(x) - 1, accurate near 0, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_np_multiply", g, op1("_np_exp", x));
                           }));
  NDX_UNARY("_np_log1p", Log1p, kFloat, "log(1 + x), accurate near 0, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_np_true_divide", g,
                                        op2("_np_add", op1("_np_ones_like", x), x));
                           }));
  NDX_UNARY("_np_log2", Log2, kFloat, "Base-2 logarithm, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_np_true_divide", g, scaled(x, "0.69314718055994531"));
                           }));
  NDX_UNARY("_np_log10", Log10, kFloat, "Base-10 logarithm, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_np_true_divide", g, scaled(x, "2.3025850929940459"));
                           }));
  NDX_UNARY("_np_sin", Sin, kFloat, "Sine, elementwise (radians).")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_np_multiply", g, op1("_np_cos", x));
                           }));
  NDX_UNARY("_np_cos", Cos, kFloat, "Cosine, elementwise (radians).")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op1("_np_negative", op2("_np_multiply", g, op1("_np_sin", x)));
                           }));
  NDX_UNARY("_np_tanh", Tanh, kFloat, "Hyperbolic tangent, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry, NodeEntry y) {
                             NodeEntry one_minus_y2 =
                                 op2("_np_subtract", op1("_np_ones_like", y), op1("_np_square", y));
                             return op2("_np_multiply", g, one_minus_y2);
                           }));
  NDX_UNARY("_np_floor", Floor, kSame, "Floor, elementwise; integers are returned unchanged.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_UNARY("_np_ceil", Ceil, kSame, "Ceiling, elementwise; integers are returned unchanged.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_UNARY("_np_logical_not", LogicalNot, kBool, "Logical NOT, elementwise; the output is bool.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_UNARY("_npx_erf", Erf, kFloat, "The Gauss error function, elementwise.")
      .set_attr<FGradient>(
          "FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
            // 2 / sqrt(pi) * exp(-x^2)
            NodeEntry e = op1("_np_exp", op1("_np_negative", op1("_np_square", x)));
            NodeEntry two_over_sqrt_pi =
                make_node("_np_full_like", {x}, {{"fill_value", "1.1283791670955126"}});
            return op2("_np_multiply", g, op2("_np_multiply", two_over_sqrt_pi, e));
          }));
  return true;
}();

}  // namespace
}  // namespace ndx
#endif  // HWY_ONCE
