// Elementwise unary ops (_np_negative, _np_sqrt, ...) and their backward ops. Each op is one
// row: name, how its output dtype follows the input, the math, and its gradient.
#include "ndx/graph.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

using kernel::map1;
using kernel::map2;

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

// ---- the math, on compute types ----
struct Negative {
  template <typename T>
  static T apply(T x) {
    return kernel::wrap_neg(x);
  }
};
struct Abs {
  template <typename T>
  static T apply(T x) {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else if constexpr (std::is_floating_point_v<T>)
      return std::fabs(x);
    else
      return x < 0 ? kernel::wrap_neg(x) : x;
  }
};
struct Sign {
  template <typename T>
  static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x)) return x;
    }
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};
struct Square {
  template <typename T>
  static T apply(T x) {
    return kernel::wrap_mul(x, x);
  }
};
struct Floor {
  template <typename T>
  static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>)
      return std::floor(x);
    else
      return x;
  }
};
struct Ceil {
  template <typename T>
  static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>)
      return std::ceil(x);
    else
      return x;
  }
};
#define NDX_FLOAT_FN(Name, expr) \
  struct Name {                  \
    template <typename T>        \
    static T apply(T x) {        \
      return expr;               \
    }                            \
  };
NDX_FLOAT_FN(Sqrt, std::sqrt(x))
NDX_FLOAT_FN(Exp, std::exp(x))
NDX_FLOAT_FN(Log, std::log(x))
NDX_FLOAT_FN(Sin, std::sin(x))
NDX_FLOAT_FN(Cos, std::cos(x))
NDX_FLOAT_FN(Tanh, std::tanh(x))
#undef NDX_FLOAT_FN

template <typename F, UnaryType rule>
void unary_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if constexpr (rule == UnaryType::kBool) {
    NDX_DTYPE_SWITCH(in[0].dtype, T, {
      map1<bool, T>(in[0], out[0], req[0], [](compute_t<T> x) { return !(x != compute_t<T>(0)); });
    });
  } else {
    // Float-result ops on ints and square on bool compute in the output dtype.
    std::vector<NDArray> keep;
    TBlob x = kernel::cast_blob(in[0], out[0].dtype, &keep);
    if constexpr (rule == UnaryType::kFloat) {
      NDX_FLOAT_SWITCH(out[0].dtype, T, {
        map1<T, T>(x, out[0], req[0], [](compute_t<T> v) { return F::apply(v); });
      });
    } else {
      NDX_DTYPE_SWITCH(out[0].dtype, T, {
        if constexpr (std::is_same_v<T, bool>) {
          // abs, floor, ceil of bool are the identity.
          map1<bool, bool>(x, out[0], req[0], [](bool v) { return v; });
        } else {
          map1<T, T>(x, out[0], req[0], [](compute_t<T> v) { return F::apply(v); });
        }
      });
    }
  }
}

Op& register_unary(const char* name, const char* doc, UnaryType rule, FCompute compute) {
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
  return op;
}

// ---- backward: grad_x = ograd * d(x or y) ----
struct AbsGrad {
  template <typename T>
  static T apply(T g, T x) {
    return g * Sign::apply(x);
  }
};
struct SqrtGrad {  // uses y = sqrt(x)
  template <typename T>
  static T apply(T g, T y) {
    return g / (T(2) * y);
  }
};
struct SquareGrad {
  template <typename T>
  static T apply(T g, T x) {
    return g * T(2) * x;
  }
};
struct ExpGrad {  // uses y
  template <typename T>
  static T apply(T g, T y) {
    return g * y;
  }
};
struct LogGrad {
  template <typename T>
  static T apply(T g, T x) {
    return g / x;
  }
};
struct SinGrad {
  template <typename T>
  static T apply(T g, T x) {
    return g * std::cos(x);
  }
};
struct CosGrad {
  template <typename T>
  static T apply(T g, T x) {
    return -g * std::sin(x);
  }
};
struct TanhGrad {  // uses y
  template <typename T>
  static T apply(T g, T y) {
    return g * (T(1) - y * y);
  }
};

template <typename G>
void backward_compute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  std::vector<NDArray> keep;
  TBlob g = kernel::cast_blob(in[0], out[0].dtype, &keep);
  TBlob x = kernel::cast_blob(in[1], out[0].dtype, &keep);
  NDX_DTYPE_SWITCH(out[0].dtype, T, {
    if constexpr (std::is_same_v<T, bool>) {
      type_error("[backward] gradients of boolean arrays are not defined");
    } else {
      map2<T, T>(g, x, out[0], req[0],
                 [](compute_t<T> a, compute_t<T> b) { return G::apply(a, b); });
    }
  });
}

void register_backward(const char* name, FCompute compute) {
  OpRegistry::global()
      .register_op(name)
      .describe("Backward of the unary op of the same stem: (ograd, x or y) -> grad.")
      .set_num_inputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("data", "NDArray", "Forward input or output.")
      .set_attr<FInferShape>("FInferShape", ElemwiseShape<2, 1>)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                              if ((*in)[0] == DType::kUnknown) return false;
                              (*out)[0] = (*in)[0];
                              return true;
                            })
      .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", compute);
}

#define NDX_UNARY(name, F, rule, doc) \
  register_unary(name, doc, UnaryType::rule, unary_compute<F, UnaryType::rule>)

[[maybe_unused]] const bool registered = [] {
  NDX_UNARY("_np_negative", Negative, kSameNoBool, "Numerical negative, elementwise.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseNone{"_np_negative"});
  NDX_UNARY("_np_absolute", Abs, kSame, "Absolute value, elementwise.")
      .add_alias("_np_abs")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_absolute"});
  NDX_UNARY("_np_sign", Sign, kSameNoBool, "Sign (-1, 0 or 1; nan for nan), elementwise.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_UNARY("_np_sqrt", Sqrt, kFloat, "Non-negative square root, elementwise.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseOut{"_backward_sqrt"});
  NDX_UNARY("_np_square", Square, kBoolToInt8, "Square, elementwise.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_square"});
  NDX_UNARY("_np_exp", Exp, kFloat, "Exponential, elementwise.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseOut{"_backward_exp"});
  NDX_UNARY("_np_log", Log, kFloat, "Natural logarithm, elementwise.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_log"});
  NDX_UNARY("_np_sin", Sin, kFloat, "Sine, elementwise (radians).")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_sin"});
  NDX_UNARY("_np_cos", Cos, kFloat, "Cosine, elementwise (radians).")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_cos"});
  NDX_UNARY("_np_tanh", Tanh, kFloat, "Hyperbolic tangent, elementwise.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseOut{"_backward_tanh"});
  NDX_UNARY("_np_floor", Floor, kSame, "Floor, elementwise; integers are returned unchanged.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_UNARY("_np_ceil", Ceil, kSame, "Ceiling, elementwise; integers are returned unchanged.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  register_unary("_np_logical_not", "Logical NOT, elementwise; the output is bool.",
                 UnaryType::kBool, unary_compute<Negative, UnaryType::kBool>)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);

  register_backward("_backward_absolute", backward_compute<AbsGrad>);
  register_backward("_backward_sqrt", backward_compute<SqrtGrad>);
  register_backward("_backward_square", backward_compute<SquareGrad>);
  register_backward("_backward_exp", backward_compute<ExpGrad>);
  register_backward("_backward_log", backward_compute<LogGrad>);
  register_backward("_backward_sin", backward_compute<SinGrad>);
  register_backward("_backward_cos", backward_compute<CosGrad>);
  register_backward("_backward_tanh", backward_compute<TanhGrad>);
  return true;
}();

}  // namespace
}  // namespace ndx
