// The C++ API (ndx::np and the operators) against hand-computed results, plus the registry
// attributes that no op family above exercises (visible outputs, output names, random state).
#include "ndx/op_util.h"
#include "test_util.h"

namespace ndx {
namespace {
using test::expect_error;

TEST(Api, CreationMatchesNumPy) {
  EXPECT_EQ(np::ones({2, 3}).dtype(), DType::kFloat32);
  EXPECT_EQ(np::ones({2, 3}).to_vector<float>(), std::vector<float>(6, 1.0f));
  EXPECT_EQ(np::zeros({}, DType::kInt8).shape(), Shape{});
  EXPECT_EQ(np::full({2}, 7.5).to_vector<float>(), (std::vector<float>{7.5f, 7.5f}));
  expect_error(
      ErrorKind::kOverflowError, [] { np::full({2}, 300, DType::kInt8); },
      "out of bounds for int8");
  EXPECT_EQ(np::full({2}, 2.5, DType::kInt8).to_vector<int>(),
            (std::vector<int>{2, 2}));  // floats truncate
  EXPECT_EQ(np::linspace(-3, 5, 7, true, DType::kInt8).to_vector<int>(),
            (std::vector<int>{-3, -2, -1, 1, 2, 3, 5}));
  EXPECT_EQ(np::arange(5).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(np::arange(2, 11, 3).to_vector<int64_t>(), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(np::arange(5, 0, -2).to_vector<int64_t>(), (std::vector<int64_t>{5, 3, 1}));
  EXPECT_EQ(np::arange(0.0, 1.0, 0.25).to_vector<float>(),
            (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(np::arange(0.0, 1.0, 0.1).dtype(), DType::kFloat32);
  EXPECT_EQ(np::arange(0.0, 1.0, 0.1).size(), 10);
  EXPECT_EQ(np::arange(3, 3).size(), 0);
  EXPECT_EQ(np::linspace(0, 1, 5).to_vector<float>(),
            (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1}));
  EXPECT_EQ(np::linspace(0, 1, 4, false).to_vector<float>(),
            (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(np::linspace(2, 3, 1).to_vector<float>(), (std::vector<float>{2}));
  EXPECT_EQ(np::linspace(2, 3, 0).size(), 0);
  EXPECT_EQ(np::eye(2, 3, 1).to_vector<float>(), (std::vector<float>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(np::eye(3, std::nullopt, -1, DType::kInt32).to_vector<int>(),
            (std::vector<int>{0, 0, 0, 1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(np::eye(0).shape(), (Shape{0, 0}));
  NDArray like = np::zeros_like(np::arange(3));
  EXPECT_EQ(like.dtype(), DType::kInt64);
  EXPECT_EQ(np::ones_like(np::zeros({2}, DType::kBool)).to_vector<int>(), (std::vector<int>{1, 1}));
  EXPECT_EQ(np::empty({3, 0}).shape(), (Shape{3, 0}));
  expect_error(
      ErrorKind::kValueError,
      [] {
        np::zeros({2, -3});
      },
      "negative dimensions");
  expect_error(
      ErrorKind::kZeroDivisionError, [] { np::arange(0.0, 1.0, 0.0); }, "'step'");
  expect_error(
      ErrorKind::kValueError, [] { np::linspace(0, 1, -1); }, "'num'");
  expect_error(
      ErrorKind::kValueError, [] { np::eye(-1); }, "'N'");
}

TEST(Api, OperatorsBroadcastPromoteAndUseWeakScalars) {
  NDArray a = np::arange(6).reshape({2, 3});  // int64
  NDArray f = np::ones({3});                  // float32
  NDArray s = a + f;                          // int64 + float32 -> float64
  EXPECT_EQ(s.dtype(), DType::kFloat64);
  EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ((f * 2.5).dtype(), DType::kFloat32);  // weak float scalar keeps float32
  EXPECT_EQ((f * 2.5).to_vector<float>(), (std::vector<float>{2.5f, 2.5f, 2.5f}));
  NDArray i8 = np::ones({2}, DType::kInt8);
  EXPECT_EQ((i8 + 1).dtype(), DType::kInt8);       // weak int scalar keeps int8
  EXPECT_EQ((i8 * 1.5).dtype(), DType::kFloat32);  // float scalar with ints -> default float
  EXPECT_EQ((10 - a).to_vector<int64_t>(), (std::vector<int64_t>{10, 9, 8, 7, 6, 5}));
  EXPECT_EQ((a / 2).to_vector<float>(), (std::vector<float>{0, 0.5f, 1, 1.5f, 2, 2.5f}));
  EXPECT_EQ((a % 4).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 0, 1}));
  EXPECT_EQ((-a).to_vector<int64_t>()[5], -5);
  NDArray acc = np::zeros({2, 3});
  acc += a;  // float32 += int64 stays float32 (same_kind)
  acc *= 2;
  acc -= 1.0;
  acc /= f;
  EXPECT_EQ(acc.dtype(), DType::kFloat32);
  EXPECT_EQ(acc.to_vector<float>(), (std::vector<float>{-1, 1, 3, 5, 7, 9}));
  NDArray ints = np::arange(3);
  expect_error(
      ErrorKind::kTypeError, [&] { ints += np::ones({3}); }, "same_kind");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        f += np::ones({2, 3});
      },
      "non-broadcastable output");
}

TEST(Api, ReductionsShapesAndLinearAlgebra) {
  NDArray a = np::arange(6).reshape({2, 3}).astype(DType::kFloat32);
  EXPECT_EQ(np::sum(a).item<float>(), 15);
  EXPECT_EQ(np::sum(a, 0).to_vector<float>(), (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(np::sum(a, 1, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(np::mean(a, Shape{0, 1}).item<float>(), 2.5f);
  EXPECT_EQ(np::prod(a + 1.0).item<float>(), 720);
  EXPECT_EQ(np::max(a, 1).to_vector<float>(), (std::vector<float>{2, 5}));
  EXPECT_EQ(np::min(a).item<float>(), 0);
  EXPECT_EQ(np::argmax(a).item<int64_t>(), 5);
  EXPECT_EQ(np::argmin(a, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(np::reshape(a, {3, -1}).shape(), (Shape{3, 2}));
  EXPECT_EQ(np::transpose(a).to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(np::expand_dims(a, -1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(np::squeeze(np::zeros({1, 3, 1})).shape(), (Shape{3}));
  EXPECT_EQ(np::broadcast_to(np::arange(3), {2, 3}).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(np::swapaxes(a, 0, 1).shape(), (Shape{3, 2}));
  EXPECT_EQ(np::concatenate({a, a}, 1).shape(), (Shape{2, 6}));
  EXPECT_EQ(np::concatenate({a, a}, std::nullopt).shape(), (Shape{12}));
  EXPECT_EQ(np::stack({a, a, a}, 1).shape(), (Shape{2, 3, 3}));
  auto parts = np::split(np::arange(6), 3);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].to_vector<int64_t>(), (std::vector<int64_t>{4, 5}));
  auto uneven = np::split(np::arange(6), std::vector<int64_t>{1, 4});
  ASSERT_EQ(uneven.size(), 3u);
  EXPECT_EQ(uneven[1].to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  // [[0,1,2],[3,4,5]] @ [[0,3],[1,4],[2,5]] = [[5,14],[14,50]]
  EXPECT_EQ(np::matmul(a, np::transpose(a)).to_vector<float>(),
            (std::vector<float>{5, 14, 14, 50}));
  EXPECT_EQ(np::dot(np::arange(3), np::arange(3)).item<int64_t>(), 5);
  expect_error(
      ErrorKind::kValueError, [&] { np::matmul(a, a); }, "matmul");
  expect_error(
      ErrorKind::kAxisError, [&] { np::sum(a, 2); }, "axis 2");
  expect_error(
      ErrorKind::kValueError, [&] { np::split(np::arange(5), 2); }, "equal division");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        np::concatenate({a, np::zeros({3})});
      },
      "ndim");
}

// An op with a hidden output, named outputs and a random resource, registered by the test.
NDX_REGISTER_OP(_test_noise)
    .describe("Test op: out0 = x + uniform noise in [0, 1); out1 (hidden) = the noise.")
    .set_num_inputs(1)
    .set_num_outputs(2)
    .add_argument("x", "NDArray", "Input.")
    .set_attr<FNumVisibleOutputs>("FNumVisibleOutputs", [](const NodeAttrs&) { return 1u; })
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"out", "noise"};
                                })
    .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 2>)
    .set_attr<FInferType>("FInferType", ElemwiseType<1, 2>)
    .set_attr<FResourceRequest>("FResourceRequest",
                                [](const NodeAttrs&) {
                                  return std::vector<ResourceRequest>{{ResourceRequest::kRandom}};
                                })
    .set_attr<FCompute>("FCompute<cpu>",
                        [](const NodeAttrs&, const OpContext& ctx, const std::vector<TBlob>& in,
                           const std::vector<OpReqType>&, const std::vector<TBlob>& out) {
                          const Resource& rng = ctx.requested.at(0);
                          for (int64_t i = 0; i < in[0].size(); ++i) {
                            double u = static_cast<double>(rng.next_random() >> 11) /
                                       static_cast<double>(1ULL << 53);
                            out[1].ptr<double>()[i] = u;
                            out[0].ptr<double>()[i] = in[0].ptr<double>()[i] + u;
                          }
                        })
    .set_attr<FGradient>("FGradient", ElemwiseGradUseNone{"_np_negative"});

TEST(Registry, VisibleOutputsNamesAndRandomResource) {
  const Op* op = Op::get("_test_noise");
  NodeAttrs attrs = op->make_attrs();
  EXPECT_EQ(op->outputs_for(attrs), 2u);
  EXPECT_EQ(op->visible_outputs_for(attrs), 1u);
  EXPECT_EQ(op->output_names(attrs), (std::vector<std::string>{"out", "noise"}));
  EXPECT_EQ(op->input_names(attrs), (std::vector<std::string>{"x"}));
  NDArray x = np::zeros({1000}, DType::kFloat64);
  random_seed(7);
  auto first = invoke(attrs, {x});
  ASSERT_EQ(first.size(), 1u);  // the hidden output is not returned
  auto v = first[0].to_vector<double>();
  double mean = 0;
  for (double u : v) {
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    mean += u / v.size();
  }
  EXPECT_NEAR(mean, 0.5, 0.05);
  random_seed(7);
  EXPECT_EQ(invoke(attrs, {x})[0].to_vector<double>(), v);  // seeding reproduces the stream
  EXPECT_NE(invoke(attrs, {x})[0].to_vector<double>(), v);
}

}  // namespace
}  // namespace ndx
