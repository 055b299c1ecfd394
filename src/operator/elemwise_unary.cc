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
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "kernel/dispatch.h"
#include "kernel/gpu.h"
#include "kernel/pointwise.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"

namespace ndx {
namespace {
enum class UnaryType {
  kSame,         // output dtype = input dtype
  kSameNoBool,   // as kSame, bool input is a TypeError (negative, sign)
  kBoolToInt8,   // as kSame, bool -> int8 (square)
  kFloat,        // ints and bool -> the default float dtype (sqrt, exp, ...)
  kBool,         // output is bool (logical_not)
  kIntegral,     // as kSame for integers and bool; floats are a TypeError (bitwise_not)
  kBoolToFloat,  // as kSame, bool -> the default float dtype (round)
  kReal,         // as kSame for real dtypes, complex -> its float (absolute, real, imag, angle)
  kCount,        // integers and bool -> uint8, floats are a TypeError (bitwise_count)
};

DType unary_out_type(const std::string& op, UnaryType rule, DType in) {
  switch (rule) {
    case UnaryType::kSame:
      return in;
    case UnaryType::kSameNoBool:
      if (in == DType::kBool) type_error("[", op, "] does not take boolean input");
      return in;
    case UnaryType::kBoolToInt8:
      return in == DType::kBool ? DType::kInt8 : in;
    case UnaryType::kFloat:
      return float_result_type(in);
    case UnaryType::kBool:
      return DType::kBool;
    case UnaryType::kBoolToFloat:
      return in == DType::kBool ? default_float_dtype() : in;
    case UnaryType::kIntegral:
      if (is_inexact(in)) type_error("[", op, "] takes integer and boolean arrays, got ", in);
      return in;
    case UnaryType::kReal:
      return real_dtype(in);
    case UnaryType::kCount:
      if (is_inexact(in)) type_error("[", op, "] takes integer and boolean arrays, got ", in);
      return DType::kUInt8;
  }
  return in;
}

// `types`: the functor's dtype categories; complex input to a functor without the complex
// category is a TypeError here, before anything is allocated.
Op& register_unary(const char* name, const char* doc, UnaryType rule, FCompute compute, bool on_gpu,
                   unsigned types = kernel::kAllTypes) {
  Op& op = OpRegistry::global().register_op(name);
  std::string op_name = name;
  op.describe(doc)
      .set_num_inputs(1)
      .add_argument("x", "NDArray", "Input array.")
      .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
      .set_attr<FInferType>(
          "FInferType",
          [rule, op_name, types](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
            if ((*in)[0] == DType::kUnknown) return false;
            if (is_complex((*in)[0]) && !(types & kernel::kComplexTypes))
              type_error("[", op_name, "] does not take complex input; got ", (*in)[0]);
            (*out)[0] = unary_out_type(op_name, rule, (*in)[0]);
            return true;
          })
      .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<bool>("TElementwise", true)
      .set_attr<FCompute>("FCompute<cpu>", compute);
  if (on_gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
  op.set_attr<bool>("TIsUfunc", true);  // dtype= / casting= / where= (python/src/op_function.cc)
  return op;
}
Op& register_unary(const char* name, const char* doc, UnaryType rule, kernel::ElementwiseFn fn) {
  return register_unary(name, doc, rule, kernel::elementwise_fn(fn), fn.gpu != nullptr, fn.types)
      .set_attr<kernel::PointwiseKernel>("FPointwiseKernel", {fn});
}

// An FCompute running fn with functor arguments made from the op's params.
template <class Param>
FCompute with_args(kernel::ElementwiseFn fn,
                   kernel::FunctorArgs (*args_of)(const Param&, DType out)) {
  return [fn, args_of](const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    kernel::apply(fn, in, out[0], req[0], out[0].dtype, args_of(attrs.get<Param>(), out[0].dtype));
  };
}
// The same with fixed arguments.
FCompute with_args(kernel::ElementwiseFn fn, kernel::FunctorArgs args) {
  return [fn, args](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    kernel::apply(fn, in, out[0], req[0], out[0].dtype, args);
  };
}

struct RoundParam {
  int64_t decimals = 0;
  static void declare(ParamDecl<RoundParam>& d) {
    d.field("decimals", &RoundParam::decimals)
        .set_default(int64_t{0})
        .describe("Decimal places to round to; negative rounds to tens, hundreds, ...");
  }
};
kernel::FunctorArgs round_args(const RoundParam& p, DType) {
  const int64_t d = p.decimals < -400 ? -400 : p.decimals > 400 ? 400 : p.decimals;
  return {static_cast<double>(d), std::pow(10.0, static_cast<double>(d < 0 ? -d : d))};
}

struct NanToNumParam {
  double nan = 0;
  std::optional<double> posinf, neginf;
  static void declare(ParamDecl<NanToNumParam>& d) {
    d.field("nan", &NanToNumParam::nan).set_default(0.0).describe("The value NaN becomes.");
    d.field("posinf", &NanToNumParam::posinf)
        .set_default(std::nullopt)
        .describe("The value +inf becomes; None: the dtype's largest finite value.");
    d.field("neginf", &NanToNumParam::neginf)
        .set_default(std::nullopt)
        .describe("The value -inf becomes; None: the dtype's most negative finite value.");
  }
};
double largest_finite(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 65504.0;
    case DType::kBFloat16:
      return 3.3895313892515355e38;
    case DType::kFloat32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}
// The defaults are the output dtype's largest finite values (float16 computes in float).
kernel::FunctorArgs nan_to_num_args(const NanToNumParam& p, DType t) {
  const double big = largest_finite(t);
  return {p.nan, p.posinf.value_or(big), p.neginf.value_or(-big)};
}

// A backward op (ograd, x) -> grad computed by one elementwise functor of both (first-order
// only: it has no gradient of its own).
void register_backward2(const char* name, const char* doc, kernel::ElementwiseFn fn) {
  const FCompute compute = kernel::elementwise_fn(fn);
  Op& op = OpRegistry::global()
               .register_op(name)
               .describe(doc)
               .set_num_inputs(2)
               .add_argument("ograd", "NDArray", "Gradient of the output.")
               .add_argument("x", "NDArray", "Forward input.")
               .set_attr<FInferShape>("FInferShape", ElemwiseShape<2, 1>)
               .set_attr<FInferType>("FInferType", FirstInputType)
               .set_attr<TIsBackward>("TIsBackward", true)
               .set_attr<TStridedInputs>("TStridedInputs", true)
               .set_attr<bool>("TElementwise", true)
               .set_attr<kernel::PointwiseKernel>("FPointwiseKernel", {fn})
               .set_attr<FCompute>("FCompute<cpu>", compute);
  if (fn.gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
}

// An op of one input and two outputs, each its own functor computing in the input's float
// dtype (frexp, modf).
Op& register_unary2(const char* name, const char* doc, kernel::ElementwiseFn f0,
                    kernel::ElementwiseFn f1, DType out1_type) {
  auto compute = [f0, f1](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    kernel::apply(f0, in, out[0], req[0], out[0].dtype);
    kernel::apply(f1, in, out[1], req[1], out[0].dtype);
  };
  Op& op =
      OpRegistry::global()
          .register_op(name)
          .describe(doc)
          .set_num_inputs(1)
          .set_num_outputs(2)
          .add_argument("x", "NDArray", "Input array.")
          .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 2>)
          .set_attr<FInferType>("FInferType",
                                [out1_type](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                                  if ((*in)[0] == DType::kUnknown) return false;
                                  (*out)[0] = float_result_type((*in)[0]);
                                  (*out)[1] = out1_type == DType::kUnknown ? (*out)[0] : out1_type;
                                  return true;
                                })
          .set_attr<TStridedInputs>("TStridedInputs", true)
          .set_attr<bool>("TIsUfunc", true)
          .set_attr<FCompute>("FCompute<cpu>", compute);
  if (f0.gpu && f1.gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
  return op;
}

// ---- gradients, composed of registered forward ops so they are differentiable again ----
// They follow the conjugate Wirtinger convention (PyTorch's) for complex inputs: the gradient
// of a holomorphic f is g * conj(f'(z)), so the formulas multiply and divide by the
// derivative with _npi_multiply_conj / _npi_divide_conj (plain * and / for real dtypes).
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

// g / sqrt(s), g / s for a node s.
NodeEntry over_sqrt(NodeEntry g, NodeEntry s) {
  return op2("_npi_divide_conj", g, op1("_np_sqrt", s));
}
NodeEntry one_like(NodeEntry x) { return op1("_np_ones_like", x); }

#define NDX_UNARY(name, F, rule, doc) register_unary(name, doc, UnaryType::rule, NDX_ELEMENTWISE(F))
#define NDX_GRAD(formula)                                                               \
  set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry y) { \
                        (void)x;                                                        \
                        (void)y;                                                        \
                        return formula;                                                 \
                      }))

// i * g in like's dtype (0 for a real `like`): the gradient of imag and angle.
void register_imag_unit_times() {
  const kernel::ElementwiseFn fn = NDX_ELEMENTWISE(TimesI);
  FCompute compute = [fn](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    kernel::apply(fn, {in[0]}, out[0], req[0], out[0].dtype);
  };
  Op& op = OpRegistry::global()
               .register_op("_npi_imag_unit_times")
               .describe("i * g with the dtype of `like` (0 where `like` is real).")
               .set_num_inputs(2)
               .add_argument("g", "NDArray", "The values to multiply by i.")
               .add_argument("like", "NDArray", "The array whose dtype the result takes.")
               .set_attr<FInferShape>("FInferShape", ElemwiseShape<2, 1>)
               .set_attr<FInferType>("FInferType",
                                     [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                                       if ((*in)[1] == DType::kUnknown) return false;
                                       if (!is_inexact((*in)[1]))
                                         type_error("[imag_unit_times] `like` must be a float ",
                                                    "or complex array, got ", (*in)[1]);
                                       (*out)[0] = (*in)[1];
                                       return true;
                                     })
               .set_attr<TStridedInputs>("TStridedInputs", true)
               .set_attr<FGradient>("FGradient", MakeZeroGradNodes)
               .set_attr<FCompute>("FCompute<cpu>", compute);
  if (fn.gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
}

// The unary ops of NumPy's ufunc set beyond the ones above: rows only.
void register_more_unary() {
  NDX_UNARY("_np_tan", Tan, kFloat, "Tangent, elementwise (radians).")
      .NDX_GRAD(op2("_npi_multiply_conj", g, op2("_np_add", one_like(y), op1("_np_square", y))));
  NDX_UNARY("_np_sinh", Sinh, kFloat, "Hyperbolic sine, elementwise.")
      .NDX_GRAD(op2("_npi_multiply_conj", g, op1("_np_cosh", x)));
  NDX_UNARY("_np_cosh", Cosh, kFloat, "Hyperbolic cosine, elementwise.")
      .NDX_GRAD(op2("_npi_multiply_conj", g, op1("_np_sinh", x)));
  NDX_UNARY("_np_arcsin", Arcsin, kFloat, "Inverse sine, elementwise; NaN outside [-1, 1].")
      .add_alias("_np_asin")
      .NDX_GRAD(over_sqrt(g, op2("_np_subtract", one_like(x), op1("_np_square", x))));
  NDX_UNARY("_np_arccos", Arccos, kFloat, "Inverse cosine, elementwise; NaN outside [-1, 1].")
      .add_alias("_np_acos")
      .NDX_GRAD(op1("_np_negative",
                    over_sqrt(g, op2("_np_subtract", one_like(x), op1("_np_square", x)))));
  NDX_UNARY("_np_arctan", Arctan, kFloat, "Inverse tangent, elementwise.")
      .add_alias("_np_atan")
      .NDX_GRAD(op2("_npi_divide_conj", g, op2("_np_add", one_like(x), op1("_np_square", x))));
  NDX_UNARY("_np_arcsinh", Arcsinh, kFloat, "Inverse hyperbolic sine, elementwise.")
      .add_alias("_np_asinh")
      .NDX_GRAD(over_sqrt(g, op2("_np_add", op1("_np_square", x), one_like(x))));
  NDX_UNARY("_np_arccosh", Arccosh, kFloat, "Inverse hyperbolic cosine; NaN below 1.")
      .add_alias("_np_acosh")
      .NDX_GRAD(over_sqrt(g, op2("_np_subtract", op1("_np_square", x), one_like(x))));
  NDX_UNARY("_np_arctanh", Arctanh, kFloat, "Inverse hyperbolic tangent; NaN outside [-1, 1].")
      .add_alias("_np_atanh")
      .NDX_GRAD(op2("_npi_divide_conj", g, op2("_np_subtract", one_like(x), op1("_np_square", x))));
  NDX_UNARY("_np_exp2", Exp2, kFloat, "2 ** x, elementwise.")
      .NDX_GRAD(op2("_npi_multiply_conj", g, scaled(y, "0.69314718055994531")));
  NDX_UNARY("_np_cbrt", Cbrt, kFloat, "Cube root, elementwise (negative for negative x).")
      .NDX_GRAD(op2("_npi_divide_conj", g, scaled(op1("_np_square", y), "3")));
  NDX_UNARY("_np_sinc", Sinc, kFloat, "sin(pi x) / (pi x), elementwise; 1 at 0.")
      // (cos(pi x) - sinc(x)) / x, 0 at x = 0 (the denominator there is 1).
      .NDX_GRAD(op2("_npi_multiply_conj", g,
                    op2("_np_true_divide",
                        op2("_np_subtract", op1("_np_cos", scaled(x, "3.1415926535897932")), y),
                        op2("_np_add", x, op2("_np_equal", x, op1("_np_zeros_like", x))))));
  // Complex parts. Gradients (conjugate Wirtinger): real -> g, imag -> i g, conj -> conj(g),
  // angle -> i g z / |z|^2; each in the input's dtype.
  NDX_UNARY("_np_real", RealPart, kReal, "The real part, elementwise (x itself for real x).")
      .NDX_GRAD(op2("_np_add", g, op1("_np_zeros_like", x)));
  NDX_UNARY("_np_imag", ImagPart, kReal, "The imaginary part, elementwise (0 for real x).")
      .NDX_GRAD(op2("_npi_imag_unit_times", g, x));
  NDX_UNARY("_np_conjugate", Conjugate, kSame, "The complex conjugate, elementwise.")
      .add_alias("_np_conj")
      .NDX_GRAD(op1("_np_conjugate", g));
  NDX_UNARY("_np_angle", Angle, kReal, "The argument of z in radians (0 or pi for real x).")
      .NDX_GRAD(op2("_npi_imag_unit_times",
                    op2("_np_true_divide", op2("_np_multiply", g, x),
                        op1("_np_square", op1("_np_absolute", x))),
                    x));
  register_imag_unit_times();
  NDX_UNARY("_np_positive", Positive, kSameNoBool, "+x: a copy of x, elementwise.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseNone{"_np_positive"});
  NDX_UNARY("_npx_stop_gradient", Positive, kSameNoBool,
            "x unchanged, with a zero gradient (MXNet's stop_gradient, BlockGrad).")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_UNARY("_np_reciprocal", Reciprocal, kBoolToInt8,
            "1 / x, elementwise; integers divide as integers (1 / 0 gives 0).")
      .NDX_GRAD(op1("_np_negative", op2("_npi_multiply_conj", g, op1("_np_square", y))));
  NDX_UNARY("_np_fabs", Absolute, kFloat, "Absolute value as a float, elementwise.")
      .NDX_GRAD(op2("_np_multiply", g, op1("_np_sign", x)));
  NDX_UNARY("_np_rint", Rint, kFloat, "Round to the nearest integer, halves to even.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_UNARY("_np_trunc", Trunc, kSame, "Round towards zero; integers are returned unchanged.")
      .add_alias("_np_fix")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  const double kPi = 3.14159265358979323846;
  register_unary("_np_deg2rad", "Degrees to radians, elementwise.", UnaryType::kFloat,
                 with_args(NDX_ELEMENTWISE(Scale), {kPi / 180}), NDX_ELEMENTWISE(Scale).gpu)
      .add_alias("_np_radians")
      .NDX_GRAD(scaled(g, "0.017453292519943295"));
  register_unary("_np_rad2deg", "Radians to degrees, elementwise.", UnaryType::kFloat,
                 with_args(NDX_ELEMENTWISE(Scale), {180 / kPi}), NDX_ELEMENTWISE(Scale).gpu)
      .add_alias("_np_degrees")
      .NDX_GRAD(scaled(g, "57.295779513082321"));
  register_unary("_np_round", "Round to the given number of decimals, halves to even.",
                 UnaryType::kBoolToFloat, with_args<RoundParam>(NDX_ELEMENTWISE(Round), round_args),
                 NDX_ELEMENTWISE(Round).gpu, NDX_ELEMENTWISE(Round).types)
      .set_params<RoundParam>()
      .add_alias("_np_around")
      .add_alias("_np_round_")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  register_unary("_npi_nan_to_num", "NaN and infinities replaced by finite numbers.",
                 UnaryType::kSame,
                 with_args<NanToNumParam>(NDX_ELEMENTWISE(NanToNum), nan_to_num_args),
                 NDX_ELEMENTWISE(NanToNum).gpu)
      .set_params<NanToNumParam>()
      .NDX_GRAD(op2("_npi_multiply_conj", g, op1("_np_isfinite", x)));
  for (auto [name, fn, doc] :
       {std::tuple{"_np_isnan", NDX_ELEMENTWISE(IsNan), "Whether x is NaN, elementwise."},
        std::tuple{"_np_isinf", NDX_ELEMENTWISE(IsInf), "Whether x is +inf or -inf."},
        std::tuple{"_np_isfinite", NDX_ELEMENTWISE(IsFinite), "Whether x is finite."},
        std::tuple{"_np_isposinf", NDX_ELEMENTWISE(IsPosInf), "Whether x is +inf."},
        std::tuple{"_np_isneginf", NDX_ELEMENTWISE(IsNegInf), "Whether x is -inf."},
        std::tuple{"_np_signbit", NDX_ELEMENTWISE(Signbit),
                   "Whether the sign bit is set (true for -0.0 and negative numbers)."}})
    register_unary(name, doc, UnaryType::kBool, fn)
        .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  {  // computed in the input's dtype, written as uint8 (not fused: a fused chain computes in
     // its output's dtype)
    const kernel::ElementwiseFn count = NDX_ELEMENTWISE(BitwiseCount);
    register_unary("_np_bitwise_count", "The number of 1 bits of |x| (uint8), elementwise.",
                   UnaryType::kCount,
                   kernel::elementwise_fn(count, [](const NodeAttrs&, const std::vector<TBlob>& in,
                                                    const TBlob&) { return in[0].dtype; }),
                   count.gpu != nullptr, count.types)
        .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  }
  NDX_UNARY("_np_bitwise_not", BitwiseNot, kIntegral, "~x for integers; logical not for bool.")
      .add_alias("_np_invert")
      .add_alias("_np_bitwise_invert")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  // npx: activations and special functions
  NDX_UNARY("_npx_relu6", Relu6, kSameNoBool, "min(max(x, 0), 6), elementwise.")
      .NDX_GRAD(op2("_npi_multiply_conj", g,
                    op2("_np_logical_and", op2("_np_greater", x, op1("_np_zeros_like", x)),
                        op2("_np_less", x, scaled(one_like(x), "6")))));
  NDX_UNARY("_npx_softsign", Softsign, kFloat, "x / (1 + |x|), elementwise.")
      .NDX_GRAD(op2("_npi_divide_conj", g,
                    op1("_np_square", op2("_np_add", one_like(x), op1("_np_absolute", x)))));
  NDX_UNARY("_npx_silu", Silu, kFloat, "x * sigmoid(x) (swish), elementwise.").NDX_GRAD([&] {
    NodeEntry s = op1("_npx_sigmoid", x);  // s + x s (1 - s)
    return op2(
        "_np_multiply", g,
        op2("_np_add", s,
            op2("_np_multiply", op2("_np_multiply", x, s), op2("_np_subtract", one_like(s), s))));
  }());
  NDX_UNARY("_npx_gelu", Gelu, kFloat, "x * Phi(x) with Phi the normal CDF (exact GELU).")
      .NDX_GRAD([&] {
        // Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
        NodeEntry cdf = scaled(
            op2("_np_add", one_like(x), op1("_npx_erf", scaled(x, "0.70710678118654752"))), "0.5");
        NodeEntry pdf =
            scaled(op1("_np_exp", scaled(op1("_np_square", x), "-0.5")), "0.39894228040143268");
        return op2("_npi_multiply_conj", g, op2("_np_add", cdf, op2("_np_multiply", x, pdf)));
      }());
  NDX_UNARY("_npx_mish", Mish, kFloat, "x * tanh(softplus(x)), elementwise.").NDX_GRAD([&] {
    // tanh(sp) + x (1 - tanh(sp)^2) sigmoid(x), sp = log(1 + e^x)
    NodeEntry t = op1("_np_tanh", op2("_np_logaddexp", x, op1("_np_zeros_like", x)));
    NodeEntry sech2 = op2("_np_subtract", one_like(t), op1("_np_square", t));
    return op2("_npi_multiply_conj", g,
               op2("_np_add", t,
                   op2("_np_multiply", op2("_np_multiply", x, sech2), op1("_npx_sigmoid", x))));
  }());
  NDX_UNARY("_npx_gammaln", Gammaln, kFloat, "log|gamma(x)|, elementwise.")
      .NDX_GRAD(op2("_npi_multiply_conj", g, op1("_npx_digamma", x)));
  NDX_UNARY("_npx_gamma", Gamma, kFloat, "The gamma function, elementwise.")
      .NDX_GRAD(op2("_npi_multiply_conj", g, op2("_np_multiply", y, op1("_npx_digamma", x))));
  NDX_UNARY("_npx_digamma", Digamma, kFloat, "The digamma function (gammaln's derivative).")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_digamma"});
  register_backward2("_backward_digamma", "Backward of digamma: (ograd, x) -> ograd * trigamma(x).",
                     NDX_ELEMENTWISE(DigammaGrad));
  NDX_UNARY("_npx_erfinv", Erfinv, kFloat, "The inverse of erf on [-1, 1], elementwise.")
      .NDX_GRAD(op2("_npi_multiply_conj", g,
                    scaled(op1("_np_exp", op1("_np_square", y)), "0.88622692545275801")));
  register_unary2("_np_frexp", "Mantissa in [0.5, 1) and the exponent of 2: x = m * 2 ** e.",
                  NDX_ELEMENTWISE(FrexpMantissa), NDX_ELEMENTWISE(FrexpExponent), DType::kInt32)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        // dm/dx = 2 ** -e
        NodeEntry e{n, 1, 0};
        return std::vector<NodeEntry>{
            op2("_np_multiply", og[0], op1("_np_exp2", op1("_np_negative", e)))};
      });
  register_unary2("_np_modf", "Fractional and integral parts, both with the sign of x.",
                  NDX_ELEMENTWISE(ModfFraction), NDX_ELEMENTWISE(Trunc), DType::kUnknown)
      .set_attr<FGradient>("FGradient", [](const NodePtr&, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{og[0]};
      });
}

[[maybe_unused]] const bool registered = [] {
  NDX_UNARY("_np_negative", Negative, kSameNoBool, "Numerical negative, elementwise.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseNone{"_np_negative"});
  NDX_UNARY("_np_absolute", ComplexAbsolute, kReal,
            "Absolute value, elementwise; |z| (a float) for complex z.")
      .add_alias("_np_abs")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_np_multiply", g, op1("_np_sign", x));
                           }));
  NDX_UNARY("_np_sign", Sign, kSameNoBool, "Sign (-1, 0 or 1; nan for nan), elementwise.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_UNARY("_np_sqrt", Sqrt, kFloat, "Non-negative square root, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry, NodeEntry y) {
                             return op2("_npi_divide_conj", g, op2("_np_add", y, y));  // g / 2y
                           }));
  NDX_UNARY("_np_square", Square, kBoolToInt8, "Square, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_npi_multiply_conj", g, op2("_np_add", x, x));  // g * 2x
                           }));
  NDX_UNARY("_np_exp", Exp, kFloat, "Exponential, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry, NodeEntry y) {
                             return op2("_npi_multiply_conj", g, y);
                           }));
  NDX_UNARY("_np_log", Log, kFloat, "Natural logarithm, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_npi_divide_conj", g, x);
                           }));
  NDX_UNARY("_np_expm1", Expm1, kFloat, "exp(x) - 1, accurate near 0, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_npi_multiply_conj", g, op1("_np_exp", x));
                           }));
  NDX_UNARY("_np_log1p", Log1p, kFloat, "log(1 + x), accurate near 0, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_npi_divide_conj", g,
                                        op2("_np_add", op1("_np_ones_like", x), x));
                           }));
  NDX_UNARY("_np_log2", Log2, kFloat, "Base-2 logarithm, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_npi_divide_conj", g, scaled(x, "0.69314718055994531"));
                           }));
  NDX_UNARY("_np_log10", Log10, kFloat, "Base-10 logarithm, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_npi_divide_conj", g, scaled(x, "2.3025850929940459"));
                           }));
  NDX_UNARY("_np_sin", Sin, kFloat, "Sine, elementwise (radians).")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op2("_npi_multiply_conj", g, op1("_np_cos", x));
                           }));
  NDX_UNARY("_np_cos", Cos, kFloat, "Cosine, elementwise (radians).")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry x, NodeEntry) {
                             return op1("_np_negative",
                                        op2("_npi_multiply_conj", g, op1("_np_sin", x)));
                           }));
  NDX_UNARY("_np_tanh", Tanh, kFloat, "Hyperbolic tangent, elementwise.")
      .set_attr<FGradient>("FGradient", composed([](NodeEntry g, NodeEntry, NodeEntry y) {
                             NodeEntry one_minus_y2 =
                                 op2("_np_subtract", op1("_np_ones_like", y), op1("_np_square", y));
                             return op2("_npi_multiply_conj", g, one_minus_y2);
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
            return op2("_npi_multiply_conj", g, op2("_np_multiply", two_over_sqrt_pi, e));
          }));
  register_more_unary();
  return true;
}();

}  // namespace
}  // namespace ndx
#endif  // HWY_ONCE
