// The registry: completeness of every registered op, param declaration and parsing (typed
// and string), introspection, and invoke's request types and validation.
#include <set>

#include "ndx/op_util.h"
#include "ndx/runtime.h"
#include "test_util.h"

namespace ndx {
namespace {
using test::expect_error;

TEST(Registry, EveryOpIsComplete) {
  const auto& shape = Op::attr<FInferShape>("FInferShape");
  const auto& type = Op::attr<FInferType>("FInferType");
  const auto& cpu_kernel = Op::attr<FCompute>("FCompute<cpu>");
  const auto& grad = Op::attr<FGradient>("FGradient");
  const auto& backward = Op::attr<TIsBackward>("TIsBackward");
  auto names = Op::list_names();
  ASSERT_GT(names.size(), 60u);
  for (const auto& name : names) {
    if (name.rfind("_test_", 0) == 0) continue;  // ops this test binary registers itself
    const Op* op = Op::get(name);
    EXPECT_TRUE(shape.count(op)) << name << " lacks FInferShape";
    EXPECT_TRUE(type.count(op)) << name << " lacks FInferType";
    EXPECT_TRUE(cpu_kernel.count(op)) << name << " lacks FCompute<cpu>";
    EXPECT_FALSE(op->description.empty()) << name << " lacks a description";
    bool has_inputs = op->get_num_inputs || op->num_inputs > 0;
    if (has_inputs && !backward.get(op, false))
      EXPECT_TRUE(grad.count(op)) << name << " is differentiable but lacks FGradient";
  }
}

TEST(Registry, CoreOpsAreRegistered) {
  for (const char* name :
       {"_np_negative",    "_np_absolute",     "_np_sign",         "_np_sqrt",
        "_np_square",      "_np_exp",          "_np_log",          "_np_sin",
        "_np_cos",         "_np_tanh",         "_np_floor",        "_np_ceil",
        "_np_logical_not", "_np_add",          "_np_subtract",     "_np_multiply",
        "_np_true_divide", "_np_floor_divide", "_np_mod",          "_np_power",
        "_np_maximum",     "_np_minimum",      "_np_equal",        "_np_not_equal",
        "_np_less",        "_np_less_equal",   "_np_greater",      "_np_greater_equal",
        "_np_sum",         "_np_mean",         "_np_prod",         "_np_max",
        "_np_min",         "_np_argmax",       "_np_argmin",       "_npi_zeros",
        "_npi_ones",       "_npi_full",        "_npi_empty",       "_npi_arange",
        "_npi_linspace",   "_npi_eye",         "_np_reshape",      "_np_transpose",
        "_np_expand_dims", "_np_squeeze",      "_npi_concatenate", "_npi_stack",
        "_npi_split",      "_np_broadcast_to", "_np_swapaxes",     "_np_matmul",
        "_np_dot"})
    EXPECT_NE(Op::find(name), nullptr) << name;
  EXPECT_EQ(Op::get("_np_abs"), Op::get("_np_absolute"));  // alias
  expect_error(
      ErrorKind::kValueError, [] { Op::get("_np_no_such_op"); }, "_np_no_such_op");
}

// A Param struct exercising every field kind, and an op that uses it.
struct TestParam {
  int64_t count = 0;
  double scale = 1;
  bool flag = false;
  std::string mode;
  DType dtype = DType::kFloat32;
  Shape axes;
  std::optional<int64_t> maybe;
  static void declare(ParamDecl<TestParam>& d) {
    d.field("count", &TestParam::count).set_range(0, 10).describe("How many.");
    d.field("scale", &TestParam::scale).set_default(1.0).describe("Multiplier.");
    d.field("flag", &TestParam::flag).set_default(false).describe("A switch.");
    d.field("mode", &TestParam::mode)
        .set_default(std::string("fast"))
        .set_enum({"fast", "exact"})
        .describe("Mode.");
    d.field("dtype", &TestParam::dtype).set_default(DType::kFloat32).describe("Type.");
    d.field("axes", &TestParam::axes).set_default(Shape{}).describe("Axes.");
    d.field("maybe", &TestParam::maybe).set_default(std::nullopt).describe("Optional int.");
  }
};

NDX_REGISTER_OP(_test_params)
    .describe("Test op")
    .set_num_inputs(1)
    .set_params<TestParam>()
    .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
    .set_attr<FInferType>("FInferType", ElemwiseType<1, 1>)
    .set_attr<FCompute>("FCompute<cpu>",
                        [](const NodeAttrs& attrs, const OpContext& ctx,
                           const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                           const std::vector<TBlob>& out) {
                          // out = in * scale + (request marker), checks that req and resources
                          // arrive.
                          const auto& p = attrs.get<TestParam>();
                          float* y = out[0].ptr<float>();
                          const float* x = in[0].ptr<float>();
                          float* scratch =
                              static_cast<float*>(ctx.requested.at(0).get_space(sizeof(float) * 4));
                          scratch[0] = 1;
                          for (int64_t i = 0; i < out[0].size(); ++i) {
                            float v = x[i] * static_cast<float>(p.scale) * scratch[0];
                            if (req[0] == kAddTo)
                              y[i] += v;
                            else if (req[0] != kNullOp)
                              y[i] = v;
                          }
                        })
    .set_attr<FResourceRequest>("FResourceRequest",
                                [](const NodeAttrs&) {
                                  return std::vector<ResourceRequest>{
                                      {ResourceRequest::kTempSpace}};
                                })
    .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity());

TEST(Params, StringDictParsesAndPrintsBack) {
  const Op* op = Op::get("_test_params");
  NodeAttrs a = op->make_attrs({{"count", "3"},
                                {"scale", "2.5"},
                                {"flag", "True"},
                                {"mode", "exact"},
                                {"dtype", "int8"},
                                {"axes", "(1, -2)"},
                                {"maybe", "None"}});
  const auto& p = a.get<TestParam>();
  EXPECT_EQ(p.count, 3);
  EXPECT_EQ(p.scale, 2.5);
  EXPECT_TRUE(p.flag);
  EXPECT_EQ(p.mode, "exact");
  EXPECT_EQ(p.dtype, DType::kInt8);
  EXPECT_EQ(p.axes, (Shape{1, -2}));
  EXPECT_FALSE(p.maybe.has_value());
  auto dict = op->params->to_dict(a.parsed);
  EXPECT_EQ(dict["axes"], "(1, -2)");
  EXPECT_EQ(dict["flag"], "True");
  EXPECT_EQ(dict["dtype"], "int8");
  EXPECT_EQ(dict["maybe"], "None");
  // Round trip: printing then parsing gives the same values.
  NodeAttrs b = op->make_attrs(dict);
  EXPECT_EQ(b.get<TestParam>().axes, p.axes);
  EXPECT_EQ(b.get<TestParam>().scale, 2.5);
}

TEST(Params, TypedValuesParseWithoutStrings) {
  const Op* op = Op::get("_test_params");
  NodeAttrs a = op->make_attrs(
      std::vector<std::pair<std::string_view, Value>>{{"count", Value(int64_t{4})},
                                                      {"scale", Value(3)},
                                                      {"axes", Value(Shape{0, 2})},
                                                      {"maybe", Value(int64_t{7})},
                                                      {"dtype", Value(DType::kFloat64)}});
  const auto& p = a.get<TestParam>();
  EXPECT_EQ(p.count, 4);
  EXPECT_EQ(p.scale, 3.0);  // int accepted for float
  EXPECT_EQ(p.axes, (Shape{0, 2}));
  EXPECT_EQ(p.maybe, 7);
  EXPECT_EQ(p.dtype, DType::kFloat64);
  EXPECT_EQ(p.mode, "fast");  // default
}

TEST(Params, TuplesOfFloatsParseFromTextAndInts) {
  const FieldContext ctx{"op", "field"};
  using Floats = FieldTraits<std::vector<double>>;
  EXPECT_EQ(Floats::from_string("(0.1, 2, -3e5)", ctx), (std::vector<double>{0.1, 2, -3e5}));
  EXPECT_EQ(Floats::from_string("[1.5]", ctx), (std::vector<double>{1.5}));
  EXPECT_EQ(Floats::from_string("()", ctx), std::vector<double>{});
  EXPECT_EQ(Floats::from_value(Value(Shape{1, 2}), ctx), (std::vector<double>{1, 2}));
  EXPECT_EQ(Floats::from_value(Value(0.25), ctx), (std::vector<double>{0.25}));
  const std::vector<double> v{0.1, -2.5};
  EXPECT_EQ(Floats::from_string(Floats::to_string(v), ctx), v);  // prints back exactly
  EXPECT_EQ(Floats::to_string({1.0}), "(1,)");
  expect_error(
      ErrorKind::kValueError, [&] { Floats::from_string("(0.1, x)", ctx); }, "field");
  expect_error(
      ErrorKind::kValueError, [&] { Floats::from_string("(0.1", ctx); }, "field");
  expect_error(
      ErrorKind::kTypeError, [&] { Floats::from_value(Value(true), ctx); }, "field");
}

TEST(Params, BadValuesRaiseTypedErrors) {
  const Op* op = Op::get("_test_params");
  using Kw = std::vector<std::pair<std::string_view, Value>>;
  expect_error(
      ErrorKind::kValueError,
      [&] {
        op->make_attrs({{"count", "three"}});
      },
      "'count'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        op->make_attrs({{"count", "1"}, {"bogus", "1"}});
      },
      "unknown parameter 'bogus'");
  expect_error(
      ErrorKind::kValueError, [&] { op->make_attrs(std::map<std::string, std::string>{}); },
      "required parameter 'count'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        op->make_attrs({{"count", "11"}});
      },
      "<= 10");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        op->make_attrs({{"count", "-1"}});
      },
      ">= 0");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        op->make_attrs({{"count", "1"}, {"mode", "slow"}});
      },
      "must be one of {'fast', 'exact'}");
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        op->make_attrs({{"count", "1"}, {"dtype", "float7"}});
      },
      "float7");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        op->make_attrs({{"count", "1"}, {"flag", "maybe"}});
      },
      "boolean");
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        op->make_attrs(Kw{{"count", Value(1.5)}});
      },
      "expected an int, got float");
  expect_error(ErrorKind::kTypeError, [&] {
    op->make_attrs(Kw{{"count", Value(1)}, {"axes", Value(2.0)}});
  });
  expect_error(ErrorKind::kTypeError, [&] {
    op->make_attrs(Kw{{"count", Value(1)}, {"mode", Value(3)}});
  });
  expect_error(
      ErrorKind::kValueError,
      [&] {
        Op::get("_np_add")->make_attrs({{"axis", "1"}});
      },
      "takes no parameters");
}

TEST(Params, IntrospectionListsFieldsWithTypesDefaultsDocs) {
  const Op* op = Op::get("_test_params");
  ASSERT_NE(op->params, nullptr);
  const ParamField* mode = op->params->find("mode");
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ(mode->type_name, "{'fast', 'exact'}");
  EXPECT_EQ(*mode->default_str, "fast");
  EXPECT_FALSE(op->params->find("count")->default_str.has_value());
  std::string doc = op->params->doc();
  EXPECT_NE(doc.find("count : int, required\n    How many."), std::string::npos) << doc;
  EXPECT_NE(doc.find("maybe : int or None, optional, default=None"), std::string::npos) << doc;
  const Op* sum = Op::get("_np_sum");
  ASSERT_NE(sum->params, nullptr);
  EXPECT_NE(sum->params->find("keepdims"), nullptr);
  EXPECT_EQ(sum->params->find("keepdims")->type_name, "boolean");
  // Arguments list NDArray inputs and params; input names come from them.
  EXPECT_EQ(Op::get("_np_add")->input_names(Op::get("_np_add")->make_attrs()),
            (std::vector<std::string>{"x1", "x2"}));
  auto keys = Op::get("_np_exp")->attr_keys();
  EXPECT_TRUE(std::find(keys.begin(), keys.end(), "FGradient") != keys.end());
}

TEST(Invoke, RequestTypesAreHonoured) {
  const Op* op = Op::get("_test_params");
  NodeAttrs attrs = op->make_attrs({{"count", "1"}, {"scale", "2"}});
  NDArray x = NDArray::from_vector<float>({1, 2, 3}, {3});
  EXPECT_EQ(invoke(attrs, {x})[0].to_vector<float>(), (std::vector<float>{2, 4, 6}));
  NDArray out = NDArray::from_vector<float>({10, 10, 10}, {3});
  std::vector<NDArray> outs{out};
  std::vector<OpReqType> add{kAddTo}, null{kNullOp};
  InvokeOptions o;
  o.outputs = &outs;
  o.req = &add;
  invoke(attrs, {x}, o);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{12, 14, 16}));
  o.req = &null;
  invoke(attrs, {x}, o);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{12, 14, 16}));
  // In place: the output is the input itself.
  std::vector<NDArray> self{x};
  InvokeOptions inplace;
  inplace.outputs = &self;
  invoke(attrs, {x}, inplace);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 4, 6}));
  // kAddTo through a real op, into a non-contiguous view.
  NDArray base = np::zeros({2, 2});
  NDArray colview = base.transpose()[0];  // column 0, strided
  std::vector<NDArray> colv{colview};
  InvokeOptions addo;
  addo.outputs = &colv;
  addo.req = &add;
  invoke("_np_add", {np::ones({2}), np::ones({2})}, {}, addo);
  invoke("_np_add", {np::ones({2}), np::ones({2})}, {}, addo);
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{4, 0, 4, 0}));
}

TEST(Invoke, ValidatesBeforeAllocating) {
  auto before = cpu_pool_stats().bytes_in_use;
  NDArray a = np::ones({2, 3}), b = np::ones({4});
  auto with_inputs = cpu_pool_stats().bytes_in_use;
  EXPECT_GT(with_inputs, before);
  expect_error(
      ErrorKind::kValueError, [&] { np::add(a, b); }, "could not be broadcast");
  EXPECT_EQ(cpu_pool_stats().bytes_in_use, with_inputs);  // nothing allocated or leaked
  expect_error(
      ErrorKind::kValueError, [&] { invoke("_np_add", {a}); }, "expected 2 inputs, got 1");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        invoke("_np_add", {a, NDArray()});
      },
      "undefined");
  std::vector<NDArray> wrong{np::zeros({3})};
  InvokeOptions o;
  o.outputs = &wrong;
  expect_error(
      ErrorKind::kValueError,
      [&] {
        invoke("_np_add", {a, a}, {}, o);
      },
      "output 0 has shape (3,)");
  std::vector<NDArray> wrong_type{np::zeros({2, 3}, DType::kInt32)};
  o.outputs = &wrong_type;
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        invoke("_np_add", {a, a}, {}, o);
      },
      "dtype");
  if (num_gpus() == 0) {  // no GPU: NotImplementedError without CUDA, else ValueError
    InvokeOptions g;
    g.device = gpu(0);
    expect_error(
        gpu_unavailable_reason() == "ndx was built without CUDA" ? ErrorKind::kNotImplementedError
                                                                 : ErrorKind::kValueError,
        [&] {
          invoke("_npi_zeros", {}, {{"shape", "(2,)"}}, g);
        },
        "gpu");
  }
}

}  // namespace
}  // namespace ndx
