// Elementwise unary and binary ops against std:: references computed in the test, over
// dtypes, 0-d and zero-size shapes, broadcasting and strided views; NumPy's type rules and
// integer edge cases; bad inputs; gradients against central differences.
#include "test_util.h"

namespace ndx {
namespace {
using test::expect_close;
using test::expect_error;
using test::run;
using test::values;

struct UnaryCase {
  const char* op;
  double (*ref)(double);
  double lo, hi;  // input domain
};

const std::vector<UnaryCase> kUnary = {
    {"_np_negative", [](double x) { return -x; }, -3, 3},
    {"_np_absolute", [](double x) { return std::fabs(x); }, -3, 3},
    {"_np_sign", [](double x) { return double((x > 0) - (x < 0)); }, -3, 3},
    {"_np_sqrt", [](double x) { return std::sqrt(x); }, 0, 4},
    {"_np_square", [](double x) { return x * x; }, -3, 3},
    {"_np_exp", [](double x) { return std::exp(x); }, -2, 2},
    {"_np_log", [](double x) { return std::log(x); }, 0.1, 4},
    {"_np_sin", [](double x) { return std::sin(x); }, -3, 3},
    {"_np_cos", [](double x) { return std::cos(x); }, -3, 3},
    {"_np_tanh", [](double x) { return std::tanh(x); }, -3, 3},
    {"_np_floor", [](double x) { return std::floor(x); }, -3, 3},
    {"_np_ceil", [](double x) { return std::ceil(x); }, -3, 3},
};

TEST(Unary, FloatDtypesMatchReference) {
  for (const auto& c : kUnary) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
      for (Shape s : {Shape{}, Shape{7}, Shape{2, 3}, Shape{0, 4}}) {
        NDArray x = NDArray::from_vector(values(s.size(), c.lo, c.hi), s).astype(t);
        NDArray y = run(c.op, {x});
        EXPECT_EQ(y.shape(), s) << c.op;
        EXPECT_EQ(y.dtype(), t) << c.op;
        std::vector<double> want;
        for (double v : x.to_vector<double>()) want.push_back(c.ref(v));
        double rtol = t == DType::kFloat64 ? 1e-12 : t == DType::kFloat32 ? 1e-6 : 1e-2;
        expect_close(y.to_vector<double>(), want, rtol, rtol);
      }
    }
  }
}

TEST(Unary, IntegerInputsFollowNumPyTypeRules) {
  NDArray i = NDArray::from_vector<int32_t>({-3, 0, 4}, {3});
  EXPECT_EQ(run("_np_negative", {i}).to_vector<int32_t>(), (std::vector<int32_t>{3, 0, -4}));
  EXPECT_EQ(run("_np_absolute", {i}).to_vector<int32_t>(), (std::vector<int32_t>{3, 0, 4}));
  EXPECT_EQ(run("_np_sign", {i}).to_vector<int32_t>(), (std::vector<int32_t>{-1, 0, 1}));
  EXPECT_EQ(run("_np_square", {i}).dtype(), DType::kInt32);
  EXPECT_EQ(run("_np_floor", {i}).dtype(), DType::kInt32);  // NumPy 2 keeps integer dtypes
  NDArray r = run("_np_sqrt", {NDArray::from_vector<int32_t>({4, 9}, {2})});
  EXPECT_EQ(r.dtype(), DType::kFloat32);  // ints -> default float, not float64
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{2, 3}));
  // Wrap-around like NumPy, never undefined behaviour.
  NDArray m = NDArray::from_vector<int8_t>({-128, 127}, {2});
  EXPECT_EQ(run("_np_negative", {m}).to_vector<int>(), (std::vector<int>{-128, -127}));
  EXPECT_EQ(run("_np_absolute", {m}).to_vector<int>(), (std::vector<int>{-128, 127}));
  EXPECT_EQ(run("_np_square", {NDArray::from_vector<int32_t>({65536}, {1})}).to_vector<int>(),
            (std::vector<int>{0}));
  NDArray u = NDArray::from_vector<uint8_t>({1, 200}, {2});
  EXPECT_EQ(run("_np_negative", {u}).to_vector<int>(), (std::vector<int>{255, 56}));
  NDArray b = NDArray::from_vector<bool>({true, false}, {2});
  EXPECT_EQ(run("_np_square", {b}).dtype(), DType::kInt8);
  EXPECT_EQ(run("_np_absolute", {b}).dtype(), DType::kBool);
  EXPECT_EQ(run("_np_logical_not", {b}).to_vector<int>(), (std::vector<int>{0, 1}));
  EXPECT_EQ(run("_np_logical_not", {NDArray::from_vector<float>({0.f, 2.f}, {2})}).to_vector<int>(),
            (std::vector<int>{1, 0}));
  expect_error(
      ErrorKind::kTypeError, [&] { run("_np_negative", {b}); }, "boolean");
  expect_error(ErrorKind::kTypeError, [&] { run("_np_sign", {b}); });
}

TEST(Unary, StridedInputsAndNaN) {
  NDArray base = NDArray::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  NDArray y = run("_np_square", {base.transpose()});
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{1, 16, 4, 25, 9, 36}));
  NDArray n = NDArray::from_vector<double>({NAN, -0.0}, {2});
  auto s = run("_np_sign", {n}).to_vector<double>();
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_EQ(s[1], 0.0);
}

using BinRef = double (*)(double, double);
struct BinaryCase {
  const char* op;
  BinRef ref;
  double lo, hi;
};

double py_mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

const std::vector<BinaryCase> kBinary = {
    {"_np_add", [](double a, double b) { return a + b; }, -3, 3},
    {"_np_subtract", [](double a, double b) { return a - b; }, -3, 3},
    {"_np_multiply", [](double a, double b) { return a * b; }, -3, 3},
    {"_np_true_divide", [](double a, double b) { return a / b; }, 0.5, 3},
    {"_np_floor_divide", [](double a, double b) { return std::floor(a / b); }, 0.5, 7},
    {"_np_mod", py_mod, 0.5, 7},
    {"_np_power", [](double a, double b) { return std::pow(a, b); }, 0.5, 2},
    {"_np_maximum", [](double a, double b) { return std::max(a, b); }, -3, 3},
    {"_np_minimum", [](double a, double b) { return std::min(a, b); }, -3, 3},
    {"_np_equal", [](double a, double b) { return double(a == b); }, -1, 1},
    {"_np_not_equal", [](double a, double b) { return double(a != b); }, -1, 1},
    {"_np_less", [](double a, double b) { return double(a < b); }, -1, 1},
    {"_np_less_equal", [](double a, double b) { return double(a <= b); }, -1, 1},
    {"_np_greater", [](double a, double b) { return double(a > b); }, -1, 1},
    {"_np_greater_equal", [](double a, double b) { return double(a >= b); }, -1, 1},
};

bool is_comparison(const std::string& op) {
  return op.find("equal") != std::string::npos || op.find("less") != std::string::npos ||
         op.find("greater") != std::string::npos;
}

TEST(Binary, BroadcastingOverDtypesMatchesReference) {
  struct Shapes {
    Shape a, b, out;
  };
  std::vector<Shapes> shapes = {
      {{2, 3}, {2, 3}, {2, 3}},      {{2, 3}, {3}, {2, 3}}, {{3, 1}, {1, 4}, {3, 4}},
      {{}, {2, 2}, {2, 2}},          {{}, {}, {}},          {{0, 3}, {3}, {0, 3}},
      {{4, 1, 2}, {3, 1}, {4, 3, 2}}};
  for (const auto& c : kBinary) {
    for (DType t :
         {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8}) {
      bool integral = is_integer(t);
      if (integral && std::string(c.op) == "_np_true_divide") continue;  // checked below
      for (const auto& s : shapes) {
        auto av = values(s.a.size(), c.lo, c.hi, 3), bv = values(s.b.size(), c.lo, c.hi, 4);
        if (integral)
          for (auto* v : {&av, &bv})
            for (double& x : *v) x = std::round(std::fabs(x)) + (c.lo > 0 ? 1 : 0);
        NDArray a = NDArray::from_vector(av, s.a).astype(t),
                b = NDArray::from_vector(bv, s.b).astype(t);
        NDArray y = run(c.op, {a, b});
        ASSERT_EQ(y.shape(), s.out) << c.op;
        EXPECT_EQ(y.dtype(), is_comparison(c.op) ? DType::kBool : t) << c.op << " " << t;
        // Reference: broadcast by hand through the views, then apply elementwise.
        auto ab = a.broadcast_to(s.out).to_vector<double>(),
             bb = b.broadcast_to(s.out).to_vector<double>();
        std::vector<double> want(ab.size());
        for (size_t i = 0; i < ab.size(); ++i) {
          want[i] = c.ref(ab[i], bb[i]);
          if (integral && !is_comparison(c.op)) {
            if (t == DType::kUInt8) want[i] = std::fmod(std::fmod(want[i], 256) + 256, 256);
          }
        }
        double tol = t == DType::kFloat32 ? 1e-5 : 1e-12;
        if (integral && std::string(c.op) == "_np_power") continue;  // overflow wraps: below
        expect_close(y.to_vector<double>(), want, tol, tol);
      }
    }
  }
}

TEST(Binary, PromotionAndTypeRules) {
  NDArray i8 = NDArray::from_vector<int8_t>({1, 2}, {2});
  NDArray u8 = NDArray::from_vector<uint8_t>({200, 3}, {2});
  NDArray f32 = NDArray::from_vector<float>({0.5f, 1.5f}, {2});
  NDArray i32 = NDArray::from_vector<int32_t>({7, -7}, {2});
  NDArray bl = NDArray::from_vector<bool>({true, false}, {2});
  NDArray s = run("_np_add", {i8, u8});
  EXPECT_EQ(s.dtype(), DType::kInt16);
  EXPECT_EQ(s.to_vector<int>(), (std::vector<int>{201, 5}));
  EXPECT_EQ(run("_np_add", {f32, i32}).dtype(), DType::kFloat64);
  EXPECT_EQ(run("_np_true_divide", {i32, i32}).dtype(), DType::kFloat32);
  EXPECT_EQ(
      run("_np_true_divide", {i32, NDArray::from_vector<int32_t>({2, 2}, {2})}).to_vector<float>(),
      (std::vector<float>{3.5f, -3.5f}));
  EXPECT_EQ(run("_np_add", {bl, bl}).to_vector<int>(), (std::vector<int>{1, 0}));
  EXPECT_EQ(run("_np_add", {bl, bl}).dtype(), DType::kBool);
  EXPECT_EQ(run("_np_multiply", {bl, bl}).dtype(), DType::kBool);
  EXPECT_EQ(run("_np_power", {bl, bl}).dtype(), DType::kInt8);
  EXPECT_EQ(run("_np_floor_divide", {bl, bl}).dtype(), DType::kInt8);
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        run("_np_subtract", {bl, bl});
      },
      "boolean subtract");
  // Python's floor division and modulo signs.
  NDArray d = NDArray::from_vector<int32_t>({2, 2}, {2});
  EXPECT_EQ(run("_np_floor_divide", {i32, d}).to_vector<int>(), (std::vector<int>{3, -4}));
  EXPECT_EQ(run("_np_mod", {i32, d}).to_vector<int>(), (std::vector<int>{1, 1}));
  EXPECT_EQ(run("_np_mod", {i32, NDArray::from_vector<int32_t>({-2, -2}, {2})}).to_vector<int>(),
            (std::vector<int>{-1, -1}));
  auto fm = run("_np_mod", {NDArray::from_vector<double>({-7.5, 7.5}, {2}),
                            NDArray::from_vector<double>({2, -2}, {2})});
  EXPECT_EQ(fm.to_vector<double>(), (std::vector<double>{0.5, -0.5}));
  // Integer division by zero gives 0 (NumPy warns); INT_MIN // -1 wraps; never a crash.
  NDArray z = NDArray::from_vector<int32_t>({0, -1}, {2});
  NDArray mn = NDArray::from_vector<int32_t>({5, INT32_MIN}, {2});
  EXPECT_EQ(run("_np_floor_divide", {mn, z}).to_vector<int>(), (std::vector<int>{0, INT32_MIN}));
  EXPECT_EQ(run("_np_mod", {mn, z}).to_vector<int>(), (std::vector<int>{0, 0}));
  NDArray fz = run("_np_true_divide", {NDArray::from_vector<double>({1, -1, 0}, {3}),
                                       np::zeros({3}, DType::kFloat64)});
  auto fzv = fz.to_vector<double>();
  EXPECT_EQ(fzv[0], INFINITY);
  EXPECT_EQ(fzv[1], -INFINITY);
  EXPECT_TRUE(std::isnan(fzv[2]));
  // Integer power: exact, wrapping, negative exponents rejected.
  EXPECT_EQ(run("_np_power", {NDArray::from_vector<int64_t>({3, -2}, {2}),
                              NDArray::from_vector<int64_t>({4, 3}, {2})})
                .to_vector<int64_t>(),
            (std::vector<int64_t>{81, -8}));
  EXPECT_EQ(run("_np_power",
                {NDArray::from_vector<int8_t>({2}, {1}), NDArray::from_vector<int8_t>({8}, {1})})
                .to_vector<int>(),
            (std::vector<int>{0}));
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_np_power", {i32, NDArray::from_vector<int32_t>({-1, 1}, {2})});
      },
      "negative integer powers");
  // nan propagates through maximum and minimum.
  auto mx = run("_np_maximum", {NDArray::from_vector<double>({NAN, 1}, {2}),
                                NDArray::from_vector<double>({0, NAN}, {2})});
  EXPECT_TRUE(std::isnan(mx.to_vector<double>()[0]));
  EXPECT_TRUE(std::isnan(mx.to_vector<double>()[1]));
  expect_error(
      ErrorKind::kValueError,
      [&] {
        run("_np_add", {np::ones({2, 3}), np::ones({2})});
      },
      "[add] operands could not be broadcast together with shapes (2, 3) (2,)");
}

TEST(Binary, StridedAndSelfAliasedOperands) {
  NDArray a = NDArray::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  NDArray y =
      run("_np_subtract", {a.transpose(), a.transpose().slice(0, std::nullopt, std::nullopt, -1)});
  // a.T = [[1,4],[2,5],[3,6]], reversed rows = [[3,6],[2,5],[1,4]]
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{-2, -2, 0, 0, 2, 2}));
  // a += a[::-1] written in place must read every input before it overwrites it.
  NDArray v = NDArray::from_vector<float>({1, 2, 3}, {3});
  v += v.slice(0, std::nullopt, std::nullopt, -1);
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{4, 4, 4}));
}

// FGradient of each differentiable elementwise op against central differences (float64).
TEST(Gradients, UnaryMatchNumeric) {
  for (const char* op : {"_np_negative", "_np_absolute", "_np_sqrt", "_np_square", "_np_exp",
                         "_np_log", "_np_sin", "_np_cos", "_np_tanh", "_np_sign", "_np_floor"}) {
    NDArray x = NDArray::from_vector(values(6, 0.3, 2.0, 9), {2, 3});
    NDArray w = NDArray::from_vector(values(6, -1, 1, 10), {2, 3});
    auto grads = test::symbolic_grads(op, {x}, w);
    auto num = test::numeric_grad([&](const NDArray& v) { return run(op, {v}); }, x, w);
    expect_close(grads[0].to_vector<double>(), num, 1e-5, 1e-6);
  }
}

TEST(Gradients, BinaryWithBroadcastingMatchNumeric) {
  for (const char* op : {"_np_add", "_np_subtract", "_np_multiply", "_np_true_divide", "_np_power",
                         "_np_maximum", "_np_minimum", "_np_mod", "_np_less"}) {
    NDArray a = NDArray::from_vector(values(6, 0.5, 2.0, 11), {2, 3});
    NDArray b = NDArray::from_vector(values(3, 0.6, 1.9, 12), {3});
    NDArray w = NDArray::from_vector(values(6, -1, 1, 13), {2, 3});
    auto grads = test::symbolic_grads(op, {a, b}, w);
    ASSERT_EQ(grads.size(), 2u);
    EXPECT_EQ(grads[1].shape(), (Shape{3}));
    auto na = test::numeric_grad([&](const NDArray& v) { return run(op, {v, b}); }, a, w);
    auto nb = test::numeric_grad([&](const NDArray& v) { return run(op, {a, v}); }, b, w);
    expect_close(grads[0].to_vector<double>(), na, 1e-5, 1e-6);
    expect_close(grads[1].to_vector<double>(), nb, 1e-5, 1e-6);
  }
}

}  // namespace
}  // namespace ndx
