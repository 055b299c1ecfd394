// Elementwise binary ops with NumPy broadcasting and promotion (_np_add, _np_less, ...) and
// their backward ops. Inputs are cast to one computation dtype first, so kernels are
// instantiated per dtype, not per dtype pair.
#include "ndx/graph.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

using kernel::map2;

enum class BinaryType {
  kPromote,        // promoted dtype; bool stays bool (add = or, multiply = and)
  kPromoteNoBool,  // promoted dtype; bool with bool is a TypeError (subtract)
  kBoolToInt8,     // promoted dtype; bool with bool computes in int8 (floor_divide, mod, power)
  kFloat,          // the promoted dtype made float (true_divide)
  kCompare,        // computes in the promoted dtype, output bool
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
    default:
      return t;
  }
}

// ---- the math on compute types; integer paths never invoke C++ undefined behaviour ----
struct Add {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a || b;
    else
      return kernel::wrap_add(a, b);
  }
};
struct Subtract {
  template <typename T>
  static T apply(T a, T b) {
    return kernel::wrap_sub(a, b);
  }
};
struct Multiply {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a && b;
    else
      return kernel::wrap_mul(a, b);
  }
};
struct TrueDivide {
  template <typename T>
  static T apply(T a, T b) {
    return a / b;
  }
};
struct FloorDivide {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      // NumPy's npy_divmod: floor of the exact quotient, consistent with mod.
      if (b == 0) return a / b;
      T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
      if (div == 0) return std::copysign(T(0), a / b);
      T floordiv = std::floor(div);
      if (div - floordiv > T(0.5)) floordiv += T(1);
      return floordiv;
    } else {
      if (b == 0) return T(0);  // NumPy returns 0 (with a warning)
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return kernel::wrap_neg(a);  // INT_MIN / -1 wraps as in NumPy
        T q = static_cast<T>(a / b);
        if ((a % b != 0) && ((a < 0) != (b < 0))) q = static_cast<T>(q - 1);
        return q;
      } else {
        return static_cast<T>(a / b);
      }
    }
  }
};
struct Mod {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (b == 0) return std::fmod(a, b);  // nan
      T mod = std::fmod(a, b);
      if (mod != 0) {
        if ((b < 0) != (mod < 0)) mod += b;
      } else {
        mod = std::copysign(T(0), b);
      }
      return mod;
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
        T r = static_cast<T>(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
      } else {
        return static_cast<T>(a % b);
      }
    }
  }
};
struct Power {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) value_error("[power] Integers to negative integer powers are not allowed.");
      }
      T result = 1, base = a;
      for (auto e = b; e > 0; e = static_cast<T>(e >> 1)) {  // exponentiation by squaring, wrapping
        if (e & 1) result = kernel::wrap_mul(result, base);
        base = kernel::wrap_mul(base, base);
      }
      return result;
    }
  }
};
struct Maximum {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    }
    return a < b ? b : a;
  }
};
struct Minimum {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    }
    return b < a ? b : a;
  }
};
#define NDX_COMPARE(Name, expr)   \
  struct Name {                   \
    template <typename T>         \
    static bool apply(T a, T b) { \
      return expr;                \
    }                             \
  };
NDX_COMPARE(Equal, a == b)
NDX_COMPARE(NotEqual, a != b)
NDX_COMPARE(Less, a < b)
NDX_COMPARE(LessEqual, a <= b)
NDX_COMPARE(Greater, a > b)
NDX_COMPARE(GreaterEqual, a >= b)
#undef NDX_COMPARE

template <typename F, BinaryType rule>
void binary_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  DType t = compute_type(op_name(attrs), rule, in[0].dtype, in[1].dtype);
  std::vector<NDArray> keep;
  TBlob a = kernel::cast_blob(in[0], t, &keep), b = kernel::cast_blob(in[1], t, &keep);
  NDX_DTYPE_SWITCH(t, T, {
    using C = compute_t<T>;
    if constexpr (rule == BinaryType::kCompare) {
      map2<bool, T>(a, b, out[0], req[0], [](C x, C y) { return F::apply(x, y); });
    } else if constexpr (std::is_same_v<T, bool>) {
      if constexpr (std::is_same_v<F, Add> || std::is_same_v<F, Multiply> ||
                    std::is_same_v<F, Maximum> || std::is_same_v<F, Minimum>) {
        map2<bool, bool>(a, b, out[0], req[0], [](bool x, bool y) { return F::apply(x, y); });
      } else {
        type_error("[", op_name(attrs), "] is not defined for bool");
      }
    } else {
      map2<T, T>(a, b, out[0], req[0], [](C x, C y) { return F::apply(x, y); });
    }
  });
}

bool binary_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known() || !(*in)[1].is_known()) return false;
  assign_shape(attrs, &(*out)[0], broadcast_shapes((*in)[0], (*in)[1], op_name(attrs).c_str()),
               "output", 0);
  return true;
}

Op& register_binary(const char* name, const char* doc, BinaryType rule, FCompute compute) {
  std::string op_name = name;
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_inputs(2)
      .add_argument("x1", "NDArray", "First input array.")
      .add_argument("x2", "NDArray", "Second input array (broadcast against x1).")
      .set_attr<FInferShape>("FInferShape", binary_shape)
      .set_attr<FInferType>("FInferType",
                            [rule, op_name](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                              if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown)
                                return false;
                              DType t = compute_type(op_name, rule, (*in)[0], (*in)[1]);
                              (*out)[0] = rule == BinaryType::kCompare ? DType::kBool : t;
                              return true;
                            })
      .set_attr<FInplaceOption>("FInplaceOption",
                                [](const NodeAttrs&) {
                                  return std::vector<std::pair<int, int>>{{0, 0}, {1, 0}};
                                })
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", compute);
}

// ---- backward: (ograd, a, b) -> (grad_a, grad_b), each summed back to its input's shape ----
struct ModGrad {
  template <typename T>
  static T da(T g, T, T) {
    return g;
  }
  template <typename T>
  static T db(T g, T a, T b) {
    return -g * FloorDivide::apply(a, b);
  }
};
struct PowerGrad {
  template <typename T>
  static T da(T g, T a, T b) {
    return g * b * std::pow(a, b - T(1));
  }
  template <typename T>
  static T db(T g, T a, T b) {
    return a == T(0) ? T(0) : g * std::pow(a, b) * std::log(a);
  }
};
struct MaximumGrad {
  template <typename T>
  static T da(T g, T a, T b) {
    return a >= b ? g : T(0);
  }
  template <typename T>
  static T db(T g, T a, T b) {
    return a >= b ? T(0) : g;
  }
};
struct MinimumGrad {
  template <typename T>
  static T da(T g, T a, T b) {
    return a <= b ? g : T(0);
  }
  template <typename T>
  static T db(T g, T a, T b) {
    return a <= b ? T(0) : g;
  }
};

template <typename G>
void binary_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  DType t = in[0].dtype;
  if (!is_float(t)) type_error("[", op_name(attrs), "] gradients need a float dtype, got ", t);
  std::vector<NDArray> keep;
  TBlob g = in[0], a = kernel::cast_blob(in[1], t, &keep), b = kernel::cast_blob(in[2], t, &keep);
  NDArray ga(g.shape, t), gb(g.shape, t);
  Shape as = broadcast_strides(a.shape, a.strides, g.shape);
  Shape bs = broadcast_strides(b.shape, b.strides, g.shape);
  Shape cs = contiguous_strides(g.shape);
  NDX_FLOAT_SWITCH(t, T, {
    using C = compute_t<T>;
    const T *gp = g.ptr<T>(), *ap = a.ptr<T>(), *bp = b.ptr<T>();
    T *gap = ga.data<T>(), *gbp = gb.data<T>();
    for_each_run<4>(g.shape, {&cs, &g.strides, &as, &bs}, [&](const StridedRun<4>& r) {
      for (int64_t i = 0; i < r.length; ++i) {
        C gv = gp[r.offset[1] + i * r.stride[1]], av = ap[r.offset[2] + i * r.stride[2]],
          bv = bp[r.offset[3] + i * r.stride[3]];
        gap[r.offset[0] + i * r.stride[0]] = static_cast<T>(G::da(gv, av, bv));
        gbp[r.offset[0] + i * r.stride[0]] = static_cast<T>(G::db(gv, av, bv));
      }
    });
  });
  kernel::sum_to_shape(kernel::to_blob(ga), out[0], req[0]);
  kernel::sum_to_shape(kernel::to_blob(gb), out[1], req[1]);
}

void register_binary_backward(const char* name, FCompute compute) {
  OpRegistry::global()
      .register_op(name)
      .describe("Backward of the binary op of the same stem: (ograd, x1, x2) -> (grad1, grad2).")
      .set_num_inputs(3)
      .set_num_outputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("x1", "NDArray", "Forward input 1.")
      .add_argument("x2", "NDArray", "Forward input 2.")
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
                               assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
                               return (*out)[0].is_known() && (*out)[1].is_known();
                             })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                              (*out)[0] = (*out)[1] = (*in)[0];
                              return (*in)[0] != DType::kUnknown;
                            })
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", compute);
}

// ---- collapse_sum_like / broadcast_like: undoing and redoing broadcasting, each the other's
// gradient, so gradients through broadcasting ops are differentiable to any order ----
NodeEntry collapse_like(NodeEntry g, NodeEntry like) {
  return make_node("_npi_collapse_sum_like", {std::move(g), std::move(like)});
}
NodeEntry op2(const char* op, NodeEntry a, NodeEntry b) {
  return make_node(op, {std::move(a), std::move(b)});
}

void register_like_ops() {
  auto second_shape = [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
    if (!(*in)[1].is_known()) return false;
    assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
    return true;
  };
  auto first_type = [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
    (*out)[0] = (*in)[0];
    return (*in)[0] != DType::kUnknown;
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
            if ((*in)[0].is_known() && (*in)[1].is_known())
              broadcast_shapes((*in)[1], (*in)[0], "collapse_sum_like");
            return second_shape(attrs, in, out);
          })
      .set_attr<FInferType>("FInferType", first_type)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>",
                          [](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
                            kernel::sum_to_shape(in[0], out[0], req[0]);
                          })
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
      .set_attr<FInferType>("FInferType", first_type)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>",
                          [](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
                            kernel::write_req(kernel::as_array(in[0]), kernel::as_array(out[0]),
                                              req[0]);
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

#define NDX_BINARY(name, F, rule, doc) \
  register_binary(name, doc, BinaryType::rule, binary_compute<F, BinaryType::rule>)

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
  NDX_BINARY("_np_multiply", Multiply, kPromote, "x1 * x2, elementwise with broadcasting.")
      .set_attr<FGradient>("FGradient", composed([](E g, E a, E b, E) {
                             return std::pair{op2("_np_multiply", g, b), op2("_np_multiply", g, a)};
                           }));
  NDX_BINARY("_np_true_divide", TrueDivide, kFloat,
             "x1 / x2, elementwise; integer inputs give the default float dtype.")
      .add_alias("_np_divide")
      .set_attr<FGradient>(
          "FGradient", composed([](E g, E, E b, E y) {
            // d/da = g / b ; d/db = -g * a / b^2 = -(g * y) / b
            return std::pair{
                op2("_np_true_divide", g, b),
                make_node("_np_negative", {op2("_np_true_divide", op2("_np_multiply", g, y), b)})};
          }));
  NDX_BINARY("_np_floor_divide", FloorDivide, kBoolToInt8,
             "x1 // x2, the floor of the quotient; integer division by zero gives 0.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_BINARY("_np_mod", Mod, kBoolToInt8, "x1 % x2 with the sign of x2, as Python's %.")
      .add_alias("_np_remainder")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_mod"});
  NDX_BINARY("_np_power", Power, kBoolToInt8, "x1 ** x2, elementwise with broadcasting.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_power"});
  NDX_BINARY("_np_maximum", Maximum, kPromote, "Elementwise maximum; nan propagates.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_maximum"});
  NDX_BINARY("_np_minimum", Minimum, kPromote, "Elementwise minimum; nan propagates.")
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_minimum"});
  NDX_BINARY("_np_equal", Equal, kCompare, "x1 == x2, elementwise; the output is bool.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_BINARY("_np_not_equal", NotEqual, kCompare, "x1 != x2, elementwise; the output is bool.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_BINARY("_np_less", Less, kCompare, "x1 < x2, elementwise; the output is bool.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_BINARY("_np_less_equal", LessEqual, kCompare, "x1 <= x2, elementwise; the output is bool.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_BINARY("_np_greater", Greater, kCompare, "x1 > x2, elementwise; the output is bool.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  NDX_BINARY("_np_greater_equal", GreaterEqual, kCompare,
             "x1 >= x2, elementwise; the output is bool.")
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);

  register_binary_backward("_backward_mod", binary_backward<ModGrad>);
  register_binary_backward("_backward_power", binary_backward<PowerGrad>);
  register_binary_backward("_backward_maximum", binary_backward<MaximumGrad>);
  register_binary_backward("_backward_minimum", binary_backward<MinimumGrad>);
  return true;
}();

}  // namespace
}  // namespace ndx
