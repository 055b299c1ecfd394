// Elementwise unary ops (_np_negative, _np_sqrt, ...) and their backward ops. Each op is one
// row: name, how its output dtype follows the input, the math, and its gradient.
#include "ndx/graph.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

using kernel::map1;

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

// ---- gradients, composed of registered forward ops so they are differentiable again ----
NodeEntry op1(const char* op, NodeEntry a) { return make_node(op, {std::move(a)}); }
NodeEntry op2(const char* op, NodeEntry a, NodeEntry b) {
  return make_node(op, {std::move(a), std::move(b)});
}

// FGradient from a formula in (ograd, x, y).
FGradient composed(NodeEntry (*formula)(NodeEntry g, NodeEntry x, NodeEntry y)) {
  return [formula](const NodePtr& n, const std::vector<NodeEntry>& og) {
    return std::vector<NodeEntry>{formula(og[0], n->inputs[0], NodeEntry{n, 0, 0})};
  };
}

#define NDX_UNARY(name, F, rule, doc) \
  register_unary(name, doc, UnaryType::rule, unary_compute<F, UnaryType::rule>)

[[maybe_unused]] const bool registered = [] {
  NDX_UNARY("_np_negative", Negative, kSameNoBool, "Numerical negative, elementwise.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseNone{"_np_negative"});
  NDX_UNARY("_np_absolute", Abs, kSame, "Absolute value, elementwise.")
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
  register_unary("_np_logical_not", "Logical NOT, elementwise; the output is bool.",
                 UnaryType::kBool, unary_compute<Negative, UnaryType::kBool>)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  return true;
}();

}  // namespace
}  // namespace ndx
