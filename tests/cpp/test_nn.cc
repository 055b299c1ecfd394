// The npx neural-network ops (src/operator/nn.cc) against reference loops written here:
// activations, softmax / log_softmax, fully_connected, pick, one_hot, embedding, dropout,
// layer_norm and batch_norm. Float dtypes, 0-d and zero-size shapes, request types, bad
// inputs with their error kinds, and gradients against central differences (second order
// through autograd for the composed ones).
#include "ndx/autograd.h"
#include "test_util.h"

namespace ndx {
namespace {
using test::expect_close;
using test::expect_error;
using test::run;
using test::values;
namespace ag = autograd;

using Dict = std::map<std::string, std::string>;
using test::autograd_grads;
constexpr DType kF64 = DType::kFloat64;

NDArray arr(const std::vector<double>& v, Shape s, DType t = kF64) {
  return NDArray::from_vector(v, std::move(s)).astype(t);
}
NDArray rand_arr(Shape s, double lo = -2, double hi = 2, uint64_t seed = 1, DType t = kF64) {
  return arr(values(static_cast<size_t>(s.size()), lo, hi, seed), s, t);
}
double tol_for(DType t) {
  return t == DType::kFloat64 ? 1e-12 : t == DType::kFloat32 ? 1e-5 : 2e-2;
}
const DType kFloats[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

// FGradient of `op` against central differences for the inputs listed in `which`.
void check_grads(const std::string& op, const std::vector<NDArray>& in, const Dict& dict,
                 const std::vector<int>& which, double tol = 1e-5) {
  NDArray y = run(op, in, dict);
  NDArray w = rand_arr(y.shape(), -1, 1, 77);
  auto grads = autograd_grads(op, in, w, dict);
  ASSERT_EQ(grads.size(), in.size()) << op;
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(grads[i].shape(), in[i].shape()) << op << " input " << i;
    if (std::find(which.begin(), which.end(), static_cast<int>(i)) == which.end()) continue;
    auto num = test::numeric_grad(
        [&](const NDArray& v) {
          auto c = in;
          c[i] = v;
          return run(op, c, dict);
        },
        in[i], w);
    SCOPED_TRACE(op + " input " + std::to_string(i));
    expect_close(grads[i].to_vector<double>(), num, tol, tol);
  }
}

// Second order through autograd: d/dx sum(w2 * d/dx sum(w * op(x))) against central
// differences of the first-order gradient.
void check_second_order(const std::string& op, const NDArray& x0, const Dict& dict) {
  NDArray w = rand_arr(run(op, {x0}, dict).shape(), -1, 1, 5);
  NDArray w2 = rand_arr(x0.shape(), -1, 1, 6);
  auto first = [&](const NDArray& v) { return test::symbolic_grads(op, {v}, w, dict)[0]; };
  auto num = test::numeric_grad(first, x0, w2);
  NDArray x = x0.copy();
  ag::attach_grad(x);
  NDArray t;
  {
    ag::RecordScope record;
    NDArray y = np::sum(run(op, {x}, dict) * w);
    NDArray g = ag::grad({y}, {x}, {}, /*create_graph=*/true)[0];
    t = np::sum(g * w2);
  }
  ag::backward({t});
  SCOPED_TRACE(op + " second order");
  expect_close(ag::grad_of(x).to_vector<double>(), num, 1e-5, 1e-6);
}

// ============================== activations ==============================
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

struct ActCase {
  const char* op;
  Dict dict;
  double (*ref)(double);
};
const std::vector<ActCase> kActs = {
    {"_npx_relu", {}, [](double x) { return x > 0 ? x : 0; }},
    {"_npx_sigmoid", {}, sigmoid},
    {"_npx_activation", {{"act_type", "relu"}}, [](double x) { return x > 0 ? x : 0; }},
    {"_npx_activation", {{"act_type", "sigmoid"}}, sigmoid},
    {"_npx_activation", {{"act_type", "tanh"}}, [](double x) { return std::tanh(x); }},
    {"_npx_activation",
     {{"act_type", "softrelu"}},
     [](double x) { return std::log1p(std::exp(x)); }},
    {"_npx_activation",
     {{"act_type", "log_sigmoid"}},
     [](double x) { return std::log(sigmoid(x)); }},
};

TEST(NnActivation, ForwardMatchesReferenceOverDtypesAndShapes) {
  for (const auto& c : kActs)
    for (DType t : kFloats)
      for (Shape s : {Shape{}, Shape{7}, Shape{2, 3}, Shape{0, 4}}) {
        NDArray x = rand_arr(s, -4, 4, 3, t);
        NDArray y = run(c.op, {x}, c.dict);
        EXPECT_EQ(y.shape(), s);
        EXPECT_EQ(y.dtype(), t);
        std::vector<double> want;
        for (double v : x.to_vector<double>()) want.push_back(c.ref(v));
        expect_close(y.to_vector<double>(), want, tol_for(t), tol_for(t));
      }
  // Stable at the extremes.
  NDArray big = arr({-800, 800, 0}, {3});
  expect_close(run("_npx_activation", {big}, {{"act_type", "softrelu"}}).to_vector<double>(),
               {0, 800, std::log(2.0)});
  expect_close(run("_npx_activation", {big}, {{"act_type", "log_sigmoid"}}).to_vector<double>(),
               {-800, 0, -std::log(2.0)});
  expect_close(run("_npx_sigmoid", {big}).to_vector<double>(), {0, 1, 0.5});
}

TEST(NnActivation, DtypeRulesAndBadParams) {
  NDArray i = NDArray::from_vector<int32_t>({-3, 0, 4}, {3});
  NDArray r = run("_npx_relu", {i});
  EXPECT_EQ(r.dtype(), DType::kInt32);
  EXPECT_EQ(r.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 4}));
  expect_error(
      ErrorKind::kTypeError, [&] { run("_npx_sigmoid", {i}); }, "sigmoid");
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        run("_npx_activation", {i}, {{"act_type", "tanh"}});
      },
      "'x'");
  NDArray b = NDArray::from_vector<bool>({true}, {1});
  expect_error(
      ErrorKind::kTypeError, [&] { run("_npx_relu", {b}); }, "relu");
  NDArray x = rand_arr({3});
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_activation", {x}, {{"act_type", "gelu"}});
      },
      "act_type");
  expect_error(
      ErrorKind::kValueError, [&] { run("_npx_activation", {x}); }, "act_type");
}

TEST(NnActivation, RequestTypesAddToAndInplace) {
  NDArray x = arr({-1, 2, 3}, {3});
  NDArray out = arr({10, 10, 10}, {3});
  std::vector<NDArray> outs{out};
  std::vector<OpReqType> add{kAddTo};
  InvokeOptions o;
  o.outputs = &outs;
  o.req = &add;
  invoke("_npx_relu", {x}, {}, o);
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{10, 12, 13}));
  std::vector<NDArray> self{x};
  InvokeOptions inplace;
  inplace.outputs = &self;
  invoke("_npx_relu", {x}, {}, inplace);
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0, 2, 3}));
}

TEST(NnActivation, GradientsMatchNumericToSecondOrder) {
  // Away from relu's kink at 0.
  NDArray x = arr({-1.5, -0.4, 0.3, 0.8, 1.7, -2.2}, {2, 3});
  for (const auto& c : kActs) {
    check_grads(c.op, {x}, c.dict, {0});
    if (std::string(c.op) != "_npx_relu" && (c.dict.empty() || c.dict.at("act_type") != "relu"))
      check_second_order(c.op, x, c.dict);
  }
  // The gradient keeps the input's dtype (relu's mask is bool, multiply promotes).
  NDArray xf = rand_arr({4}, -1, 1, 2, DType::kFloat32);
  auto g = test::symbolic_grads("_npx_relu", {xf}, rand_arr({4}, -1, 1, 3, DType::kFloat32));
  EXPECT_EQ(g[0].dtype(), DType::kFloat32);
}

// ============================== softmax ==============================
std::vector<double> softmax_ref(const NDArray& x, int axis, bool log) {
  Shape s = x.shape();
  std::vector<double> v = x.to_vector<double>(), out(v.size());
  int64_t outer = 1, n = s[axis], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[d];
  for (int d = axis + 1; d < s.ndim(); ++d) inner *= s[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double mx = -1e300, sum = 0;
      for (int64_t k = 0; k < n; ++k) mx = std::max(mx, v[(o * n + k) * inner + i]);
      for (int64_t k = 0; k < n; ++k) sum += std::exp(v[(o * n + k) * inner + i] - mx);
      for (int64_t k = 0; k < n; ++k) {
        const int64_t j = (o * n + k) * inner + i;
        out[j] = log ? v[j] - mx - std::log(sum) : std::exp(v[j] - mx) / sum;
      }
    }
  return out;
}

TEST(NnSoftmax, ForwardMatchesReference) {
  for (const char* op : {"_npx_softmax", "_npx_log_softmax"}) {
    const bool log = std::string(op) == "_npx_log_softmax";
    for (DType t : kFloats)
      for (int axis : {0, 1, 2, -1, -2}) {
        NDArray x = rand_arr({2, 3, 4}, -3, 3, 4, t);
        NDArray y = run(op, {x}, {{"axis", std::to_string(axis)}});
        EXPECT_EQ(y.dtype(), t);
        expect_close(y.to_vector<double>(), softmax_ref(x, axis < 0 ? axis + 3 : axis, log),
                     tol_for(t), tol_for(t));
      }
    // Default axis -1, large values stay finite, zero-size shapes.
    NDArray big = arr({1000, 1001, 1002, -1000, 0, 1000}, {2, 3});
    expect_close(run(op, {big}).to_vector<double>(), softmax_ref(big, 1, log), 1e-12, 1e-12);
    EXPECT_EQ(run(op, {rand_arr({0, 3})}).shape(), (Shape{0, 3}));
    EXPECT_EQ(run(op, {rand_arr({3, 0})}).shape(), (Shape{3, 0}));
    EXPECT_EQ(run(op, {rand_arr({3, 0})}, {{"axis", "0"}}).shape(), (Shape{3, 0}));
    // Errors: 0-d, axis out of range, integers.
    expect_error(ErrorKind::kAxisError, [&] { run(op, {rand_arr({})}); });
    expect_error(
        ErrorKind::kAxisError,
        [&] {
          run(op, {rand_arr({2, 3})}, {{"axis", "2"}});
        },
        "axis 2");
    expect_error(
        ErrorKind::kTypeError,
        [&] {
          run(op, {NDArray::from_vector<int32_t>({1, 2}, {2})});
        },
        "float");
  }
}

TEST(NnSoftmax, GradientsMatchNumericToSecondOrder) {
  NDArray x = rand_arr({2, 3, 4}, -2, 2, 8);
  for (const char* op : {"_npx_softmax", "_npx_log_softmax"})
    for (const char* axis : {"-1", "0", "1"}) {
      check_grads(op, {x}, {{"axis", axis}}, {0});
      check_second_order(op, x, {{"axis", axis}});
    }
}

// ============================== fully_connected ==============================
// out[i, j] = sum_k x[i, k] w[j, k] + b[j]
std::vector<double> fc_ref(const std::vector<double>& x, const std::vector<double>& w,
                           const std::vector<double>* b, int64_t m, int64_t k, int64_t h) {
  std::vector<double> out(static_cast<size_t>(m * h));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < h; ++j) {
      double s = b ? (*b)[j] : 0;
      for (int64_t p = 0; p < k; ++p) s += x[i * k + p] * w[j * k + p];
      out[i * h + j] = s;
    }
  return out;
}

TEST(NnFullyConnected, ForwardFlattenNoBiasAndLastAxis) {
  for (DType t : kFloats) {
    NDArray x = rand_arr({2, 3, 2}, -1, 1, 1, t), w = rand_arr({4, 6}, -1, 1, 2, t),
            b = rand_arr({4}, -1, 1, 3, t);
    auto xv = x.to_vector<double>(), wv = w.to_vector<double>(), bv = b.to_vector<double>();
    double tol = t == DType::kFloat64 ? 1e-12 : t == DType::kFloat32 ? 1e-5 : 3e-2;
    NDArray y = run("_npx_fully_connected", {x, w, b}, {{"num_hidden", "4"}});
    EXPECT_EQ(y.shape(), (Shape{2, 4}));
    EXPECT_EQ(y.dtype(), t);
    expect_close(y.to_vector<double>(), fc_ref(xv, wv, &bv, 2, 6, 4), tol, tol);
    NDArray y2 = run("_npx_fully_connected", {x, w}, {{"num_hidden", "4"}, {"no_bias", "True"}});
    expect_close(y2.to_vector<double>(), fc_ref(xv, wv, nullptr, 2, 6, 4), tol, tol);
  }
  // flatten=False: applied on the last axis.
  NDArray x = rand_arr({2, 3, 5}, -1, 1, 4), w = rand_arr({4, 5}, -1, 1, 5), b = rand_arr({4});
  NDArray y = run("_npx_fully_connected", {x, w, b}, {{"num_hidden", "4"}, {"flatten", "False"}});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  auto bv = b.to_vector<double>();
  expect_close(y.to_vector<double>(),
               fc_ref(x.to_vector<double>(), w.to_vector<double>(), &bv, 6, 5, 4), 1e-12, 1e-12);
  // 1-d data flattens to (N, 1); zero-size batch and zero features.
  EXPECT_EQ(run("_npx_fully_connected", {rand_arr({3}), rand_arr({2, 1}), rand_arr({2})},
                {{"num_hidden", "2"}})
                .shape(),
            (Shape{3, 2}));
  EXPECT_EQ(run("_npx_fully_connected", {rand_arr({0, 3}), rand_arr({2, 3}), rand_arr({2})},
                {{"num_hidden", "2"}})
                .shape(),
            (Shape{0, 2}));
  NDArray z = run("_npx_fully_connected", {rand_arr({2, 0}), rand_arr({2, 0}), arr({1, 2}, {2})},
                  {{"num_hidden", "2"}});
  EXPECT_EQ(z.to_vector<double>(), (std::vector<double>{1, 2, 1, 2}));
}

TEST(NnFullyConnected, BadInputs) {
  NDArray x = rand_arr({2, 3}), w = rand_arr({4, 3}), b = rand_arr({4});
  Dict d{{"num_hidden", "4"}};
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_fully_connected", {x, rand_arr({4, 2}), b}, d);
      },
      "'weight'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_fully_connected", {x, w, rand_arr({3})}, d);
      },
      "'bias'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_fully_connected", {rand_arr({}), w, b}, d);
      },
      "'data'");
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        run("_npx_fully_connected", {x.astype(DType::kInt32), w, b}, d);
      },
      "'data'");
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        run("_npx_fully_connected", {x, w.astype(DType::kFloat32), b}, d);
      },
      "'weight'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_fully_connected", {x, w, b});
      },
      "num_hidden");
  expect_error(ErrorKind::kValueError, [&] { run("_npx_fully_connected", {x, w}, d); });
  expect_error(ErrorKind::kValueError, [&] {
    run("_npx_fully_connected", {x, w, b}, {{"num_hidden", "4"}, {"no_bias", "True"}});
  });
}

TEST(NnFullyConnected, GradientsMatchNumeric) {
  check_grads("_npx_fully_connected",
              {rand_arr({2, 3, 2}), rand_arr({4, 6}, -1, 1, 2), rand_arr({4})},
              {{"num_hidden", "4"}}, {0, 1, 2});
  check_grads("_npx_fully_connected", {rand_arr({3, 5}), rand_arr({2, 5}, -1, 1, 3)},
              {{"num_hidden", "2"}, {"no_bias", "True"}}, {0, 1});
  check_grads("_npx_fully_connected",
              {rand_arr({2, 2, 3}), rand_arr({4, 3}, -1, 1, 4), rand_arr({4})},
              {{"num_hidden", "4"}, {"flatten", "False"}}, {0, 1, 2});
  // float32 gradients keep their dtype.
  auto g = test::symbolic_grads(
      "_npx_fully_connected",
      {rand_arr({2, 3}, -1, 1, 1, DType::kFloat32), rand_arr({2, 3}, -1, 1, 2, DType::kFloat32),
       rand_arr({2}, -1, 1, 3, DType::kFloat32)},
      rand_arr({2, 2}, -1, 1, 4, DType::kFloat32), {{"num_hidden", "2"}});
  for (const auto& a : g) EXPECT_EQ(a.dtype(), DType::kFloat32);
}

// ============================== pick ==============================
TEST(NnPick, ForwardAxesKeepdimsClipAndWrap) {
  NDArray x = arr({0, 1, 2, 3, 4, 5}, {2, 3});  // x[i, j] = 3i + j
  EXPECT_EQ(run("_npx_pick", {x, arr({2, 0}, {2})}).to_vector<double>(),
            (std::vector<double>{2, 3}));
  NDArray k = run("_npx_pick", {x, arr({1, 1}, {2})}, {{"keepdims", "True"}});
  EXPECT_EQ(k.shape(), (Shape{2, 1}));
  EXPECT_EQ(k.to_vector<double>(), (std::vector<double>{1, 4}));
  EXPECT_EQ(run("_npx_pick", {x, arr({1, 0, 1}, {3})}, {{"axis", "0"}}).to_vector<double>(),
            (std::vector<double>{3, 1, 5}));
  // Index of keepdims shape, integer and float indices (truncated), clip and wrap.
  EXPECT_EQ(run("_npx_pick", {x, arr({2, 0}, {2, 1})}).shape(), (Shape{2}));
  EXPECT_EQ(run("_npx_pick", {x, NDArray::from_vector<int64_t>({5, -1}, {2})}).to_vector<double>(),
            (std::vector<double>{2, 3}));
  EXPECT_EQ(run("_npx_pick", {x, arr({1.7, 0.2}, {2}, DType::kFloat32)}).to_vector<double>(),
            (std::vector<double>{1, 3}));
  EXPECT_EQ(run("_npx_pick", {x, NDArray::from_vector<int32_t>({4, -1}, {2})}, {{"mode", "wrap"}})
                .to_vector<double>(),
            (std::vector<double>{1, 5}));
  // Integer data, 1-d data (0-d result), zero-size.
  NDArray xi = NDArray::from_vector<int32_t>({7, 8, 9}, {3});
  NDArray p = run("_npx_pick", {xi, NDArray::from_vector<int32_t>({2}, {})});
  EXPECT_EQ(p.shape(), Shape{});
  EXPECT_EQ(p.dtype(), DType::kInt32);
  EXPECT_EQ(p.to_vector<int32_t>(), (std::vector<int32_t>{9}));
  EXPECT_EQ(run("_npx_pick", {rand_arr({0, 3}), rand_arr({0})}).shape(), (Shape{0}));
  for (DType t : kFloats)
    EXPECT_EQ(run("_npx_pick", {x.astype(t), arr({2, 0}, {2})}).to_vector<double>(),
              (std::vector<double>{2, 3}));
}

TEST(NnPick, BadInputs) {
  NDArray x = rand_arr({2, 3});
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_pick", {x, rand_arr({3})});
      },
      "'index'");
  expect_error(ErrorKind::kAxisError, [&] {
    run("_npx_pick", {x, rand_arr({2})}, {{"axis", "2"}});
  });
  expect_error(ErrorKind::kAxisError, [&] { run("_npx_pick", {rand_arr({}), rand_arr({})}); });
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        run("_npx_pick", {x, NDArray::from_vector<bool>({true, false}, {2})});
      },
      "'index'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_pick", {x, rand_arr({2})}, {{"mode", "raise"}});
      },
      "mode");
  expect_error(ErrorKind::kIndexError, [&] {
    run("_npx_pick", {rand_arr({2, 0}), rand_arr({2})});
  });
}

TEST(NnPick, GradientsScatterAndDifferentiateTwice) {
  NDArray x = rand_arr({3, 4}, -2, 2, 9);
  NDArray idx = arr({3.5, 0.5, 2.5}, {3});  // +-eps keeps the truncated index
  check_grads("_npx_pick", {x, idx}, {}, {0, 1});
  check_grads("_npx_pick", {x, arr({1, 0, 3, 3}, {1, 4})}, {{"axis", "0"}, {"keepdims", "True"}},
              {0});
  auto g = test::symbolic_grads("_npx_pick", {x, idx}, arr({1, 2, 3}, {3}));
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 3, 0}));
  // _backward_pick's own gradient is pick: second order through autograd.
  NDArray xs = x.copy();
  ag::attach_grad(xs);
  NDArray t;
  {
    ag::RecordScope record;
    NDArray y = np::sum(run("_npx_pick", {xs, idx}) * arr({1, 2, 3}, {3}));
    NDArray gx = ag::grad({y}, {xs}, {}, true)[0];
    t = np::sum(gx * xs);  // = sum(pick(x) * w): its gradient is the scatter again
  }
  ag::backward({t});
  EXPECT_EQ(ag::grad_of(xs).to_vector<double>(),
            (std::vector<double>{0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 3, 0}));
}

// ============================== one_hot ==============================
TEST(NnOneHot, ValuesDtypesAndOutOfRange) {
  NDArray i = NDArray::from_vector<int32_t>({0, 2, 3, -1}, {2, 2});
  NDArray y = run("_npx_one_hot", {i}, {{"depth", "3"}});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  NDArray y2 = run("_npx_one_hot", {arr({1.9, 0}, {2}, DType::kFloat32)},
                   {{"depth", "2"}, {"on_value", "5"}, {"off_value", "-1"}, {"dtype", "int32"}});
  EXPECT_EQ(y2.dtype(), DType::kInt32);
  EXPECT_EQ(y2.to_vector<int32_t>(), (std::vector<int32_t>{-1, 5, 5, -1}));
  EXPECT_EQ(run("_npx_one_hot", {NDArray::from_vector<int64_t>({1}, {})}, {{"depth", "2"}})
                .to_vector<double>(),
            (std::vector<double>{0, 1}));
  EXPECT_EQ(run("_npx_one_hot", {rand_arr({0})}, {{"depth", "4"}}).shape(), (Shape{0, 4}));
  EXPECT_EQ(run("_npx_one_hot", {rand_arr({2})}, {{"depth", "0"}}).shape(), (Shape{2, 0}));
  expect_error(
      ErrorKind::kValueError, [&] { run("_npx_one_hot", {i}); }, "depth");
  expect_error(ErrorKind::kValueError, [&] { run("_npx_one_hot", {i}, {{"depth", "-1"}}); });
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        run("_npx_one_hot", {NDArray::from_vector<bool>({true}, {1})}, {{"depth", "2"}});
      },
      "'indices'");
  auto g =
      test::symbolic_grads("_npx_one_hot", {arr({0, 1}, {2})}, rand_arr({2, 3}), {{"depth", "3"}});
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{0, 0}));
}

// ============================== embedding ==============================
TEST(NnEmbedding, LookupShapesAndErrors) {
  NDArray w = arr({0, 1, 10, 11, 20, 21}, {3, 2});
  Dict d{{"input_dim", "3"}, {"output_dim", "2"}};
  NDArray y = run("_npx_embedding", {NDArray::from_vector<int32_t>({2, 0, 2, 1}, {2, 2}), w}, d);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{20, 21, 0, 1, 20, 21, 10, 11}));
  EXPECT_EQ(
      run("_npx_embedding", {arr({1.0, 2.7}, {2}, DType::kFloat32), w}, d).to_vector<double>(),
      (std::vector<double>{10, 11, 20, 21}));
  EXPECT_EQ(run("_npx_embedding", {arr({1}, {}), w}, d).shape(), (Shape{2}));
  EXPECT_EQ(run("_npx_embedding", {rand_arr({0, 4}), w}, d).shape(), (Shape{0, 4, 2}));
  for (DType t : kFloats) {
    NDArray yt = run("_npx_embedding", {arr({1}, {1}), w.astype(t)}, d);
    EXPECT_EQ(yt.dtype(), t);
    EXPECT_EQ(yt.to_vector<double>(), (std::vector<double>{10, 11}));
  }
  expect_error(
      ErrorKind::kIndexError,
      [&] {
        run("_npx_embedding", {arr({3}, {1}), w}, d);
      },
      "3");
  expect_error(ErrorKind::kIndexError, [&] { run("_npx_embedding", {arr({-1}, {1}), w}, d); });
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_embedding", {arr({0}, {1}), rand_arr({3, 3})}, d);
      },
      "'weight'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_embedding", {arr({0}, {1}), w});
      },
      "input_dim");
}

TEST(NnEmbedding, GradientAddsRowsPerIndex) {
  NDArray w = rand_arr({4, 3});
  NDArray data = arr({1, 3, 1, 0, 1}, {5});
  Dict d{{"input_dim", "4"}, {"output_dim", "3"}};
  check_grads("_npx_embedding", {data, w}, d, {1});
  std::vector<double> g(15);
  for (int i = 0; i < 15; ++i) g[i] = i;
  auto grads = test::symbolic_grads("_npx_embedding", {data, w}, arr(g, {5, 3}), d);
  EXPECT_EQ(grads[0].to_vector<double>(), (std::vector<double>(5, 0.0)));
  // row 0 <- g[3]; row 1 <- g[0] + g[2] + g[4]; row 2 <- 0; row 3 <- g[1]
  EXPECT_EQ(grads[1].to_vector<double>(),
            (std::vector<double>{9, 10, 11, 18, 21, 24, 0, 0, 0, 3, 4, 5}));
}

// ============================== dropout ==============================
TEST(NnDropout, PredictIsIdentityTrainingDropsAndScales) {
  NDArray x = rand_arr({50, 40}, 0.5, 2, 3, DType::kFloat32);
  EXPECT_EQ(run("_npx_dropout", {x}).to_vector<float>(), x.to_vector<float>());
  InvokeOptions train;
  train.is_train = true;
  train.all_outputs = true;
  random_seed(42);
  auto outs = invoke("_npx_dropout", {x}, {{"p", "0.3"}}, train);
  ASSERT_EQ(outs.size(), 2u);
  auto xv = x.to_vector<double>(), yv = outs[0].to_vector<double>(),
       mv = outs[1].to_vector<double>();
  int dropped = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    if (yv[i] == 0) {
      ++dropped;
      EXPECT_EQ(mv[i], 0);
    } else {
      EXPECT_NEAR(yv[i], xv[i] / 0.7, 1e-5);
      EXPECT_NEAR(mv[i], 1 / 0.7, 1e-6);
    }
  }
  EXPECT_NEAR(dropped / 2000.0, 0.3, 0.05);
  // Reproducible under a seed; visible outputs only by default.
  random_seed(42);
  InvokeOptions train1;
  train1.is_train = true;
  auto again = invoke("_npx_dropout", {x}, {{"p", "0.3"}}, train1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].to_vector<double>(), yv);
  // p = 0, p = 1, mode 'always', zero-size and 0-d, other float dtypes.
  EXPECT_EQ(invoke("_npx_dropout", {x}, {{"p", "0"}}, train1)[0].to_vector<float>(),
            x.to_vector<float>());
  for (double v : invoke("_npx_dropout", {x}, {{"p", "1"}}, train1)[0].to_vector<double>())
    ASSERT_EQ(v, 0);
  auto always = run("_npx_dropout", {x}, {{"mode", "always"}}).to_vector<double>();
  EXPECT_GT(std::count(always.begin(), always.end(), 0.0), 500);
  EXPECT_EQ(invoke("_npx_dropout", {rand_arr({0, 3})}, {}, train1)[0].shape(), (Shape{0, 3}));
  EXPECT_EQ(invoke("_npx_dropout", {rand_arr({})}, {}, train1)[0].shape(), Shape{});
  for (DType t : kFloats)
    EXPECT_EQ(invoke("_npx_dropout", {x.astype(t)}, {}, train1)[0].dtype(), t);
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_dropout", {x}, {{"p", "1.5"}});
      },
      "p");
  expect_error(
      ErrorKind::kTypeError,
      [&] { run("_npx_dropout", {NDArray::from_vector<int32_t>({1}, {1})}); }, "'data'");
}

TEST(NnDropout, GradientIsTheMaskOfTheForwardPass) {
  NDArray x = rand_arr({20, 10}, 0.5, 2, 4);
  ag::attach_grad(x);
  NDArray y;
  {
    ag::RecordScope record;  // training mode
    y = run("_npx_dropout", {x}, {{"p", "0.5"}});
  }
  NDArray w = rand_arr({20, 10}, -1, 1, 5);
  ag::backward({y}, {w});
  auto xv = x.to_vector<double>(), yv = y.to_vector<double>(), wv = w.to_vector<double>(),
       gv = ag::grad_of(x).to_vector<double>();
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(gv[i], wv[i] * yv[i] / xv[i], 1e-12);
  // Predict mode: identity, gradient ograd.
  check_grads("_npx_dropout", {rand_arr({2, 3})}, {}, {0});
}

// ============================== layer_norm ==============================
std::vector<double> layer_norm_ref(const NDArray& x, const std::vector<double>& g,
                                   const std::vector<double>& b, int axis, double eps) {
  Shape s = x.shape();
  auto v = x.to_vector<double>();
  std::vector<double> out(v.size());
  int64_t outer = 1, n = s[axis], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[d];
  for (int d = axis + 1; d < s.ndim(); ++d) inner *= s[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double m = 0, var = 0;
      for (int64_t k = 0; k < n; ++k) m += v[(o * n + k) * inner + i] / n;
      for (int64_t k = 0; k < n; ++k) var += std::pow(v[(o * n + k) * inner + i] - m, 2) / n;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t j = (o * n + k) * inner + i;
        out[j] = (v[j] - m) / std::sqrt(var + eps) * g[k] + b[k];
      }
    }
  return out;
}

TEST(NnLayerNorm, ForwardAxesDtypesAndMeanStd) {
  for (DType t : kFloats)
    for (int axis : {-1, 0, 1}) {
      NDArray x = rand_arr({3, 4, 2}, -2, 2, 6, t);
      const int64_t n = x.shape()[axis < 0 ? 2 : axis];
      NDArray g = rand_arr({n}, 0.5, 1.5, 7, t), b = rand_arr({n}, -1, 1, 8, t);
      NDArray y = run("_npx_layer_norm", {x, g, b}, {{"axis", std::to_string(axis)}});
      EXPECT_EQ(y.dtype(), t);
      double tol = t == DType::kFloat64 ? 1e-10 : t == DType::kFloat32 ? 1e-5 : 5e-2;
      expect_close(y.to_vector<double>(),
                   layer_norm_ref(x, g.to_vector<double>(), b.to_vector<double>(),
                                  axis < 0 ? 2 : axis, 1e-5),
                   tol, tol);
    }
  NDArray x = arr({1, 2, 3, 4, 4, 4}, {2, 3});
  auto outs = invoke("_npx_layer_norm", {x, arr({1, 1, 1}, {3}), arr({0, 0, 0}, {3})},
                     {{"output_mean_var", "True"}, {"eps", "0"}});
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(outs[1].shape(), (Shape{2, 1}));
  expect_close(outs[1].to_vector<double>(), {2, 4});
  expect_close(outs[2].to_vector<double>(), {std::sqrt(2.0 / 3), 0});
  EXPECT_EQ(run("_npx_layer_norm", {rand_arr({0, 3}), rand_arr({3}), rand_arr({3})}).shape(),
            (Shape{0, 3}));
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_layer_norm", {x, rand_arr({2}), rand_arr({3})});
      },
      "'gamma'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_layer_norm", {x, rand_arr({3}), rand_arr({2})});
      },
      "'beta'");
  expect_error(ErrorKind::kAxisError, [&] {
    run("_npx_layer_norm", {rand_arr({}), rand_arr({1}), rand_arr({1})});
  });
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        run("_npx_layer_norm", {x, rand_arr({3}, 0, 1, 1, DType::kFloat32), rand_arr({3})});
      },
      "'gamma'");
}

TEST(NnLayerNorm, GradientsMatchNumeric) {
  NDArray x = rand_arr({3, 4}, -2, 2, 9);
  check_grads("_npx_layer_norm", {x, rand_arr({4}, 0.5, 1.5, 1), rand_arr({4})}, {}, {0, 1, 2});
  check_grads("_npx_layer_norm", {x, rand_arr({3}, 0.5, 1.5, 2), rand_arr({3})}, {{"axis", "0"}},
              {0, 1, 2});
  check_grads("_npx_layer_norm",
              {rand_arr({2, 3, 2}, -2, 2, 3), rand_arr({3}, 0.5, 1.5, 4), rand_arr({3})},
              {{"axis", "1"}}, {0, 1, 2});
}

// ============================== batch_norm ==============================
TEST(NnBatchNorm, TrainingUsesBatchStatsAndUpdatesRunningStatsInPlace) {
  NDArray x = rand_arr({4, 3, 2}, -2, 2, 10);
  NDArray g = rand_arr({3}, 0.5, 1.5, 11), b = rand_arr({3}, -1, 1, 12);
  NDArray rm = arr({0.1, 0.2, 0.3}, {3}), rv = arr({1, 2, 3}, {3});
  InvokeOptions train;
  train.is_train = true;
  NDArray y = invoke("_npx_batch_norm", {x, g, b, rm, rv}, {}, train)[0];
  // Reference: layer_norm over axes (0, 2) per channel, via a transpose to (3, 8).
  auto xv = x.to_vector<double>(), gv = g.to_vector<double>(), bv = b.to_vector<double>();
  std::vector<double> want(xv.size()), mean(3, 0), var(3, 0);
  for (int c = 0; c < 3; ++c) {
    for (int o = 0; o < 4; ++o)
      for (int i = 0; i < 2; ++i) mean[c] += xv[(o * 3 + c) * 2 + i] / 8;
    for (int o = 0; o < 4; ++o)
      for (int i = 0; i < 2; ++i) var[c] += std::pow(xv[(o * 3 + c) * 2 + i] - mean[c], 2) / 8;
    for (int o = 0; o < 4; ++o)
      for (int i = 0; i < 2; ++i) {
        const int j = (o * 3 + c) * 2 + i;
        want[j] = (xv[j] - mean[c]) / std::sqrt(var[c] + 1e-5) * gv[c] + bv[c];
      }
  }
  expect_close(y.to_vector<double>(), want, 1e-10, 1e-10);
  std::vector<double> rm_want, rv_want;
  for (int c = 0; c < 3; ++c) {
    rm_want.push_back(0.1 * (c + 1) * 0.9 + mean[c] * 0.1);
    rv_want.push_back((c + 1) * 0.9 + var[c] * 0.1);
  }
  expect_close(rm.to_vector<double>(), rm_want, 1e-12, 1e-12);
  expect_close(rv.to_vector<double>(), rv_want, 1e-12, 1e-12);
  // Predict mode: the running statistics, which stay unchanged.
  NDArray yp = run("_npx_batch_norm", {x, g, b, rm, rv}, {{"fix_gamma", "True"}});
  auto rmv = rm.to_vector<double>(), rvv = rv.to_vector<double>();
  for (int j = 0; j < 24; ++j) {
    const int c = (j / 2) % 3;
    EXPECT_NEAR(yp.to_vector<double>()[j], (xv[j] - rmv[c]) / std::sqrt(rvv[c] + 1e-5) + bv[c],
                1e-10);
  }
  expect_close(rm.to_vector<double>(), rm_want, 1e-12, 1e-12);
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_npx_batch_norm", {x, rand_arr({2}), b, rm, rv});
      },
      "'gamma'");
  expect_error(ErrorKind::kAxisError, [&] {
    run("_npx_batch_norm", {x, g, b, rm, rv}, {{"axis", "3"}});
  });
}

TEST(NnBatchNorm, GradientsMatchNumericInTrainingAndPredictMode) {
  NDArray x0 = rand_arr({4, 3}, -2, 2, 13), g0 = rand_arr({3}, 0.5, 1.5, 14), b0 = rand_arr({3});
  NDArray w = rand_arr({4, 3}, -1, 1, 15);
  for (bool training : {true, false}) {
    auto forward = [&](const NDArray& x, const NDArray& g, const NDArray& b) {
      InvokeOptions o;
      o.is_train = training;
      return invoke("_npx_batch_norm", {x, g, b, arr({0, 0.5, 1}, {3}), arr({1, 2, 0.5}, {3})}, {},
                    o)[0];
    };
    NDArray x = x0.copy(), g = g0.copy(), b = b0.copy();
    for (NDArray* a : {&x, &g, &b}) ag::attach_grad(*a);
    NDArray y;
    {
      ag::RecordScope record(true, training);
      y = forward(x, g, b);
    }
    {
      ag::RecordScope mode(false, training);
      ag::backward({y}, {w});
    }
    SCOPED_TRACE(training ? "training" : "predict");
    expect_close(ag::grad_of(x).to_vector<double>(),
                 test::numeric_grad([&](const NDArray& v) { return forward(v, g0, b0); }, x0, w),
                 1e-5, 1e-6);
    expect_close(ag::grad_of(g).to_vector<double>(),
                 test::numeric_grad([&](const NDArray& v) { return forward(x0, v, b0); }, g0, w),
                 1e-5, 1e-6);
    expect_close(ag::grad_of(b).to_vector<double>(),
                 test::numeric_grad([&](const NDArray& v) { return forward(x0, g0, v); }, b0, w),
                 1e-5, 1e-6);
  }
}

}  // namespace
}  // namespace ndx
