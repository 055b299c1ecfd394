// _np_matmul and _np_dot against naive loops written here and hand-computed values, plus
// numeric gradient checks of their backward ops.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "ndx/graph.h"
#include "ndx/imperative.h"
#include "ndx/ndarray.h"
#include "ndx/op.h"
#include "test_util.h"

namespace {

using ndx::DType;
using ndx::ErrorKind;
using ndx::NDArray;
using ndx::Shape;

NDArray matmul(const NDArray& a, const NDArray& b, const ndx::InvokeOptions& opt = {}) {
  return ndx::invoke(ndx::Op::get("_np_matmul")->make_attrs(), {a, b}, opt)[0];
}
NDArray dot(const NDArray& a, const NDArray& b) {
  return ndx::invoke(ndx::Op::get("_np_dot")->make_attrs(), {a, b})[0];
}

std::optional<ErrorKind> error_of(const std::function<void()>& f, std::string* msg = nullptr) {
  try {
    f();
  } catch (const ndx::Error& e) {
    if (msg) *msg = e.what();
    return e.kind();
  }
  return std::nullopt;
}

// Deterministic pseudo-random values; small integers so every dtype holds them exactly.
std::vector<double> values(int64_t n, int seed, bool integral = true) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-4, 4);
  std::uniform_real_distribution<double> r(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = integral ? d(rng) : r(rng);
  return v;
}

NDArray make(const std::vector<double>& v, Shape s, DType t) {
  return NDArray::from_vector<double>(v, s).astype(t);
}

// Naive (n x k) @ (k x m), row-major, in double.
std::vector<double> naive_mm(const std::vector<double>& a, const std::vector<double>& b, int n,
                             int k, int m) {
  std::vector<double> c(n * m, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int p = 0; p < k; ++p) c[i * m + j] += a[i * k + p] * b[p * m + j];
  return c;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

void check_gradient(const std::string& op, const std::vector<NDArray>& inputs) {
  ndx::test::check_numeric_gradient(op, {}, inputs, /*seed=*/11);
}

// ============================== matmul ==============================
TEST(MatmulForward, TwoDimsAllFloatDtypes) {
  auto av = values(17 * 33, 1, false), bv = values(33 * 9, 2, false);
  auto want = naive_mm(av, bv, 17, 33, 9);
  NDArray r64 =
      matmul(make(av, Shape{17, 33}, DType::kFloat64), make(bv, Shape{33, 9}, DType::kFloat64));
  EXPECT_EQ(r64.shape(), (Shape{17, 9}));
  EXPECT_EQ(r64.dtype(), DType::kFloat64);
  expect_near(r64.to_vector<double>(), want, 1e-12);
  NDArray r32 =
      matmul(make(av, Shape{17, 33}, DType::kFloat32), make(bv, Shape{33, 9}, DType::kFloat32));
  EXPECT_EQ(r32.dtype(), DType::kFloat32);
  expect_near(r32.to_vector<double>(), want, 1e-4);
}

TEST(MatmulForward, HandComputed) {
  NDArray a = NDArray::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  NDArray b = NDArray::from_vector<float>({7, 8, 9, 10, 11, 12}, Shape{3, 2});
  EXPECT_EQ(matmul(a, b).to_vector<double>(), (std::vector<double>{58, 64, 139, 154}));
  // 1-d operands: promoted, then the added dim removed.
  NDArray v = NDArray::from_vector<float>({1, 0, -1}, Shape{3});
  NDArray av = matmul(a, v);
  EXPECT_EQ(av.shape(), (Shape{2}));
  EXPECT_EQ(av.to_vector<double>(), (std::vector<double>{-2, -2}));
  NDArray va = matmul(v, b);
  EXPECT_EQ(va.shape(), (Shape{2}));
  EXPECT_EQ(va.to_vector<double>(), (std::vector<double>{-4, -4}));
  NDArray vv = matmul(v, v);
  EXPECT_EQ(vv.shape(), Shape{});
  EXPECT_EQ(vv.item<double>(), 2);
}

TEST(MatmulForward, BatchBroadcasting) {
  // (2,1,2,3) @ (3,3,2) -> (2,3,2,2)
  auto av = values(2 * 1 * 2 * 3, 3), bv = values(3 * 3 * 2, 4);
  NDArray r = matmul(make(av, Shape{2, 1, 2, 3}, DType::kFloat64),
                     make(bv, Shape{3, 3, 2}, DType::kFloat64));
  ASSERT_EQ(r.shape(), (Shape{2, 3, 2, 2}));
  auto got = r.to_vector<double>();
  for (int x = 0; x < 2; ++x)
    for (int y = 0; y < 3; ++y)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          double s = 0;
          for (int p = 0; p < 3; ++p) s += av[(x * 2 + i) * 3 + p] * bv[(y * 3 + p) * 2 + j];
          EXPECT_EQ(got[((x * 3 + y) * 2 + i) * 2 + j], s);
        }
  // 1-d times a batch: (3,) @ (4,3,2) -> (4,2)
  auto cv = values(4 * 3 * 2, 5), vv = values(3, 6);
  NDArray r2 =
      matmul(make(vv, Shape{3}, DType::kFloat32), make(cv, Shape{4, 3, 2}, DType::kFloat32));
  ASSERT_EQ(r2.shape(), (Shape{4, 2}));
  auto g2 = r2.to_vector<double>();
  for (int q = 0; q < 4; ++q)
    for (int j = 0; j < 2; ++j) {
      double s = 0;
      for (int p = 0; p < 3; ++p) s += vv[p] * cv[(q * 3 + p) * 2 + j];
      EXPECT_EQ(g2[q * 2 + j], s);
    }
}

TEST(MatmulForward, IntegerBoolHalfAndMixedDtypes) {
  auto av = values(4 * 5, 7), bv = values(5 * 3, 8);
  auto want = naive_mm(av, bv, 4, 5, 3);
  NDArray ri = matmul(make(av, Shape{4, 5}, DType::kInt32), make(bv, Shape{5, 3}, DType::kInt32));
  EXPECT_EQ(ri.dtype(), DType::kInt32);
  EXPECT_EQ(ri.to_vector<double>(), want);
  NDArray rh =
      matmul(make(av, Shape{4, 5}, DType::kFloat16), make(bv, Shape{5, 3}, DType::kFloat16));
  EXPECT_EQ(rh.dtype(), DType::kFloat16);
  EXPECT_EQ(rh.to_vector<double>(), want);  // small integers: exact in float16
  NDArray rbf =
      matmul(make(av, Shape{4, 5}, DType::kBFloat16), make(bv, Shape{5, 3}, DType::kBFloat16));
  EXPECT_EQ(rbf.dtype(), DType::kBFloat16);
  EXPECT_EQ(rbf.to_vector<double>(), want);
  NDArray mixed =
      matmul(make(av, Shape{4, 5}, DType::kInt32), make(bv, Shape{5, 3}, DType::kFloat32));
  EXPECT_EQ(mixed.dtype(), DType::kFloat64);  // NumPy: int32 with float32 -> float64
  EXPECT_EQ(mixed.to_vector<double>(), want);

  // int8 wraps: 100 * 3 = 300 -> 44.
  NDArray w = matmul(NDArray::from_vector<int8_t>({100}, Shape{1, 1}),
                     NDArray::from_vector<int8_t>({3}, Shape{1, 1}));
  EXPECT_EQ(w.dtype(), DType::kInt8);
  EXPECT_EQ(w.item<int>(), 44);

  // bool: or of ands.
  NDArray ba = NDArray::from_vector<bool>({true, false, false, false}, Shape{2, 2});
  NDArray bb = NDArray::from_vector<bool>({false, true, true, true}, Shape{2, 2});
  NDArray rb = matmul(ba, bb);
  EXPECT_EQ(rb.dtype(), DType::kBool);
  EXPECT_EQ(rb.to_vector<int>(), (std::vector<int>{0, 1, 0, 0}));
}

TEST(MatmulForward, StridedInputs) {
  auto av = values(3 * 4, 9);
  NDArray a = make(av, Shape{3, 4}, DType::kFloat32);
  NDArray at = a.transpose();  // (4, 3) view
  NDArray r = matmul(at, a);   // (4, 4) = a^T a
  std::vector<double> want(16, 0.0);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int p = 0; p < 3; ++p) want[i * 4 + j] += av[p * 4 + i] * av[p * 4 + j];
  EXPECT_EQ(r.to_vector<double>(), want);
}

TEST(MatmulForward, ZeroSize) {
  NDArray a(Shape{0, 3}, DType::kFloat32), b = make(values(12, 1), Shape{3, 4}, DType::kFloat32);
  EXPECT_EQ(matmul(a, b).shape(), (Shape{0, 4}));
  NDArray c(Shape{2, 0}, DType::kFloat64), d(Shape{0, 3}, DType::kFloat64);
  NDArray z = matmul(c, d);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.to_vector<double>(), std::vector<double>(6, 0.0));
  NDArray zi = matmul(NDArray(Shape{2, 0}, DType::kInt32), NDArray(Shape{0, 2}, DType::kInt32));
  EXPECT_EQ(zi.to_vector<int>(), std::vector<int>(4, 0));
  NDArray e(Shape{0}, DType::kFloat32);
  EXPECT_EQ(matmul(e, e).item<double>(), 0.0);
  EXPECT_EQ(
      matmul(NDArray(Shape{0, 2, 3}), make(values(6, 2), Shape{3, 2}, DType::kFloat32)).shape(),
      (Shape{0, 2, 2}));
}

TEST(MatmulForward, RequestTypes) {
  NDArray a = NDArray::from_vector<float>({1, 2, 3, 4}, Shape{2, 2});
  NDArray out = NDArray::from_vector<float>({10, 20, 30, 40}, Shape{2, 2});
  std::vector<NDArray> outs{out};
  std::vector<ndx::OpReqType> req{ndx::kAddTo};
  ndx::InvokeOptions opt;
  opt.outputs = &outs;
  opt.req = &req;
  matmul(a, a, opt);  // a @ a = [[7, 10], [15, 22]]
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{17, 30, 45, 62}));
  req[0] = ndx::kNullOp;
  matmul(a, a, opt);
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{17, 30, 45, 62}));
  // k = 0 with kAddTo leaves the output as it was.
  NDArray z = NDArray::from_vector<float>({1, 2, 3, 4}, Shape{2, 2});
  std::vector<NDArray> zouts{z};
  req[0] = ndx::kAddTo;
  opt.outputs = &zouts;
  matmul(NDArray(Shape{2, 0}), NDArray(Shape{0, 2}), opt);
  EXPECT_EQ(z.to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  // float16 with kAddTo goes through float32 and back.
  NDArray h = make({1, 1, 1, 1}, Shape{2, 2}, DType::kFloat16);
  std::vector<NDArray> houts{h};
  opt.outputs = &houts;
  matmul(a.astype(DType::kFloat16), a.astype(DType::kFloat16), opt);
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>{8, 11, 16, 23}));
}

TEST(MatmulForward, BadInputs) {
  NDArray s = NDArray::scalar(2), v = NDArray(Shape{3});
  std::string msg;
  EXPECT_EQ(error_of([&] { matmul(s, v); }, &msg), ErrorKind::kValueError);
  EXPECT_NE(msg.find("Input operand 0 does not have enough dimensions"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { matmul(v, s); }, &msg), ErrorKind::kValueError);
  EXPECT_NE(msg.find("Input operand 1 does not have enough dimensions"), std::string::npos) << msg;
  EXPECT_EQ(error_of(
                [&] {
                  matmul(NDArray(Shape{2, 3}), NDArray(Shape{4, 5}));
                },
                &msg),
            ErrorKind::kValueError);
  EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(4, 5)"), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind("[matmul]", 0), 0u) << msg;
  EXPECT_EQ(error_of([&] { matmul(NDArray(Shape{3}), NDArray(Shape{4})); }),
            ErrorKind::kValueError);
  EXPECT_EQ(error_of([&] {
              matmul(NDArray(Shape{2, 2, 3}), NDArray(Shape{3, 3, 4}));
            }),
            ErrorKind::kValueError);
}

// ============================== dot ==============================
TEST(MatmulDot, Cases) {
  // 0-d: elementwise multiply.
  NDArray a = NDArray::from_vector<int>({1, -2, 3}, Shape{3});
  NDArray sd = dot(NDArray::scalar(2, DType::kInt32), a);
  EXPECT_EQ(sd.shape(), (Shape{3}));
  EXPECT_EQ(sd.to_vector<int>(), (std::vector<int>{2, -4, 6}));
  EXPECT_EQ(dot(NDArray::scalar(1.5, DType::kFloat64), NDArray::scalar(4, DType::kFloat64))
                .item<double>(),
            6.0);
  // 1-d . 1-d
  NDArray ip = dot(a, a);
  EXPECT_EQ(ip.shape(), Shape{});
  EXPECT_EQ(ip.item<int>(), 14);
  // 2-d . 2-d
  NDArray m = NDArray::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  NDArray n = NDArray::from_vector<float>({7, 8, 9, 10, 11, 12}, Shape{3, 2});
  EXPECT_EQ(dot(m, n).to_vector<double>(), (std::vector<double>{58, 64, 139, 154}));
  // N-d . 1-d: sum over the last axis.
  auto tv = values(2 * 3 * 4, 12), wv = values(4, 13);
  NDArray nd1 = dot(make(tv, Shape{2, 3, 4}, DType::kFloat64), make(wv, Shape{4}, DType::kFloat64));
  ASSERT_EQ(nd1.shape(), (Shape{2, 3}));
  auto g1 = nd1.to_vector<double>();
  for (int i = 0; i < 6; ++i) {
    double s = 0;
    for (int p = 0; p < 4; ++p) s += tv[i * 4 + p] * wv[p];
    EXPECT_EQ(g1[i], s);
  }
  // N-d . M-d: dot(a, b)[i,j,k,m] = sum(a[i,j,:] * b[k,:,m])
  auto bv = values(5 * 4 * 2, 14);
  NDArray ndm =
      dot(make(tv, Shape{2, 3, 4}, DType::kFloat32), make(bv, Shape{5, 4, 2}, DType::kFloat32));
  ASSERT_EQ(ndm.shape(), (Shape{2, 3, 5, 2}));
  auto g2 = ndm.to_vector<double>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k)
        for (int mm = 0; mm < 2; ++mm) {
          double s = 0;
          for (int p = 0; p < 4; ++p) s += tv[(i * 3 + j) * 4 + p] * bv[(k * 4 + p) * 2 + mm];
          EXPECT_EQ(g2[((i * 3 + j) * 5 + k) * 2 + mm], s);
        }
  // 1-d . N-d: sums over b's second-to-last axis.
  NDArray v1 = dot(make(wv, Shape{4}, DType::kFloat64), make(bv, Shape{5, 4, 2}, DType::kFloat64));
  ASSERT_EQ(v1.shape(), (Shape{5, 2}));
  auto g3 = v1.to_vector<double>();
  for (int k = 0; k < 5; ++k)
    for (int mm = 0; mm < 2; ++mm) {
      double s = 0;
      for (int p = 0; p < 4; ++p) s += wv[p] * bv[(k * 4 + p) * 2 + mm];
      EXPECT_EQ(g3[k * 2 + mm], s);
    }
}

TEST(MatmulDot, DtypesAndZeroSize) {
  NDArray b = NDArray::from_vector<bool>({true, false, true}, Shape{3});
  NDArray c = NDArray::from_vector<bool>({false, false, true}, Shape{3});
  NDArray bd = dot(b, c);
  EXPECT_EQ(bd.dtype(), DType::kBool);
  EXPECT_TRUE(bd.item<bool>());
  NDArray h = make({0.5, 2, -1}, Shape{3}, DType::kFloat16);
  NDArray hd = dot(h, h);
  EXPECT_EQ(hd.dtype(), DType::kFloat16);
  EXPECT_EQ(hd.item<double>(), 5.25);
  NDArray mixed = dot(NDArray::from_vector<int>({1, 2}, Shape{2}),
                      NDArray::from_vector<double>({0.5, 0.25}, Shape{2}));
  EXPECT_EQ(mixed.dtype(), DType::kFloat64);
  EXPECT_EQ(mixed.item<double>(), 1.0);
  NDArray z = dot(NDArray(Shape{2, 0}), NDArray(Shape{0, 3}));
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.to_vector<double>(), std::vector<double>(6, 0.0));
  EXPECT_EQ(dot(NDArray(Shape{0, 3}), NDArray(Shape{3})).shape(), (Shape{0}));
  EXPECT_EQ(dot(NDArray::scalar(2), NDArray(Shape{0, 2})).shape(), (Shape{0, 2}));
}

TEST(MatmulDot, BadInputs) {
  std::string msg;
  EXPECT_EQ(error_of(
                [&] {
                  dot(NDArray(Shape{2, 3}), NDArray(Shape{4}));
                },
                &msg),
            ErrorKind::kValueError);
  EXPECT_EQ(msg, "[dot] shapes (2,3) and (4,) not aligned: 3 (dim 1) != 4 (dim 0)");
  EXPECT_EQ(error_of(
                [&] {
                  dot(NDArray(Shape{2, 3, 4}), NDArray(Shape{2, 5, 6}));
                },
                &msg),
            ErrorKind::kValueError);
  EXPECT_EQ(msg, "[dot] shapes (2,3,4) and (2,5,6) not aligned: 4 (dim 2) != 5 (dim 1)");
  EXPECT_EQ(error_of([&] { dot(NDArray(Shape{3}), NDArray(Shape{4})); }), ErrorKind::kValueError);
  EXPECT_EQ(error_of([&] { ndx::invoke("_np_dot", {NDArray(Shape{3})}); }), ErrorKind::kValueError);
}

// ============================== gradients ==============================
TEST(MatmulGradient, NumericCheck) {
  auto x = [](Shape s, int seed) {
    return make(values(s.size(), seed, false), s, DType::kFloat64);
  };
  check_gradient("_np_matmul", {x(Shape{2, 3}, 1), x(Shape{3, 4}, 2)});
  check_gradient("_np_matmul", {x(Shape{3}, 3), x(Shape{2, 3, 4}, 4)});
  check_gradient("_np_matmul", {x(Shape{2, 1, 3, 2}, 5), x(Shape{3, 2, 2}, 6)});
  check_gradient("_np_matmul", {x(Shape{2, 3}, 7), x(Shape{3}, 8)});
  check_gradient("_np_matmul", {x(Shape{4}, 9), x(Shape{4}, 10)});
  check_gradient("_np_dot", {x(Shape{2, 3}, 11), x(Shape{3, 2}, 12)});
  check_gradient("_np_dot", {x(Shape{2, 3}, 13), x(Shape{3}, 14)});
  check_gradient("_np_dot", {x(Shape{2, 3, 4}, 15), x(Shape{5, 4, 2}, 16)});
  check_gradient("_np_dot", {x(Shape{}, 17), x(Shape{2, 3}, 18)});
  check_gradient("_np_dot", {x(Shape{3}, 19), x(Shape{3}, 20)});
  check_gradient("_np_dot", {x(Shape{4}, 21), x(Shape{3, 4, 2}, 22)});
}

TEST(MatmulGradient, BackwardOpsDirectly) {
  // grad_a = g @ b^T, grad_b = a^T @ g, with b broadcast over a batch: its gradient sums.
  NDArray g = NDArray::from_vector<float>({1, 1, 1, 1}, Shape{2, 1, 2});
  NDArray a = NDArray::from_vector<float>({1, 2, 3, 4}, Shape{2, 1, 2});
  NDArray b = NDArray::from_vector<float>({1, 0, 0, 1}, Shape{2, 2});
  auto grads = ndx::invoke("_backward_matmul", {g, a, b});
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(grads[0].to_vector<double>(), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(grads[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(grads[1].to_vector<double>(), (std::vector<double>{4, 4, 6, 6}));
  // Mixed dtypes: each gradient has its input's dtype.
  auto mixed = ndx::invoke("_backward_dot", {NDArray::from_vector<double>({1, 1}, Shape{2}),
                                             NDArray::from_vector<float>({1, 2, 3, 4}, Shape{2, 2}),
                                             NDArray::from_vector<double>({5, 6}, Shape{2})});
  EXPECT_EQ(mixed[0].dtype(), DType::kFloat32);
  EXPECT_EQ(mixed[0].to_vector<double>(), (std::vector<double>{5, 6, 5, 6}));
  EXPECT_EQ(mixed[1].dtype(), DType::kFloat64);
  EXPECT_EQ(mixed[1].to_vector<double>(), (std::vector<double>{4, 6}));
  EXPECT_TRUE(
      ndx::Op::attr<ndx::TIsBackward>("TIsBackward").get(ndx::Op::get("_backward_matmul"), false));
  EXPECT_TRUE(
      ndx::Op::attr<ndx::TIsBackward>("TIsBackward").get(ndx::Op::get("_backward_dot"), false));
}

}  // namespace
