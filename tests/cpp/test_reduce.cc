// Reductions: values checked against hand-written reference loops and hand-computed numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ndx/graph.h"
#include "ndx/imperative.h"
#include "ndx/ndarray.h"
#include "ndx/op.h"

namespace {

using ndx::DType;
using ndx::ErrorKind;
using ndx::NDArray;
using ndx::Shape;
using Dict = std::map<std::string, std::string>;

NDArray run(const std::string& op, const NDArray& a, std::map<std::string, std::string> dict = {}) {
  return ndx::invoke(ndx::Op::get(op)->make_attrs(std::move(dict)), {a})[0];
}

// The kind of ndx::Error raised by f, or -1 when none.
int error_kind(const std::function<void()>& f) {
  try {
    f();
  } catch (const ndx::Error& e) {
    return static_cast<int>(e.kind());
  }
  return -1;
}
int kind(ErrorKind k) { return static_cast<int>(k); }

std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const ndx::Error& e) {
    return e.what();
  }
  return "";
}

enum class Ref { kSum, kProd, kMean, kMax, kMin };

// Independent reference: decode each flat index, drop the reduced dims, combine.
std::vector<double> ref_reduce(const std::vector<double>& x, const std::vector<int64_t>& shape,
                               const std::vector<bool>& mask, Ref op) {
  const int nd = static_cast<int>(shape.size());
  int64_t out_size = 1;
  for (int d = 0; d < nd; ++d)
    if (!mask[d]) out_size *= shape[d];
  std::vector<double> acc(out_size);
  std::vector<int64_t> cnt(out_size, 0);
  for (size_t flat = 0; flat < x.size(); ++flat) {
    std::vector<int64_t> idx(nd);
    int64_t rem = static_cast<int64_t>(flat);
    for (int d = nd - 1; d >= 0; --d) idx[d] = rem % shape[d], rem /= shape[d];
    int64_t o = 0;
    for (int d = 0; d < nd; ++d)
      if (!mask[d]) o = o * shape[d] + idx[d];
    double v = x[flat];
    if (cnt[o] == 0) {
      acc[o] = v;
    } else {
      switch (op) {
        case Ref::kSum:
        case Ref::kMean:
          acc[o] += v;
          break;
        case Ref::kProd:
          acc[o] *= v;
          break;
        case Ref::kMax:
          acc[o] = std::max(acc[o], v);
          break;
        case Ref::kMin:
          acc[o] = std::min(acc[o], v);
          break;
      }
    }
    ++cnt[o];
  }
  if (op == Ref::kMean)
    for (int64_t o = 0; o < out_size; ++o) acc[o] /= static_cast<double>(cnt[o]);
  return acc;
}

void expect_near_vec(const std::vector<double>& got, const std::vector<double>& want, double tol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << what << " at " << i;
}

std::vector<double> iota_values(int64_t n, double scale, double offset) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<double>((i * 7) % 11);
  return v;
}

TEST(Reduce, AllAxisCombinationsFloat64AgainstReference) {
  const std::vector<int64_t> shape = {2, 3, 4};
  std::vector<double> x = iota_values(24, 0.25, 0.5);
  NDArray a = NDArray::from_vector<double>(x, Shape{2, 3, 4});
  const std::vector<std::pair<std::string, Ref>> ops = {{"_np_sum", Ref::kSum},
                                                        {"_np_prod", Ref::kProd},
                                                        {"_np_mean", Ref::kMean},
                                                        {"_np_max", Ref::kMax},
                                                        {"_np_min", Ref::kMin}};
  // Every subset of axes, written both with positive and with negative indices.
  for (int m = 0; m < 8; ++m) {
    std::vector<bool> mask = {(m & 1) != 0, (m & 2) != 0, (m & 4) != 0};
    std::string pos = "(", neg = "(";
    for (int d = 0; d < 3; ++d)
      if (mask[d]) pos += std::to_string(d) + ",", neg += std::to_string(d - 3) + ",";
    pos += ")", neg += ")";
    for (const auto& [op, ref] : ops) {
      auto want = ref_reduce(x, shape, mask, ref);
      for (const std::string& axis : {pos, neg}) {
        for (bool keepdims : {false, true}) {
          NDArray r = run(op, a, {{"axis", axis}, {"keepdims", keepdims ? "True" : "False"}});
          Shape expect_shape;
          for (int d = 0; d < 3; ++d)
            if (!mask[d])
              expect_shape.push_back(shape[d]);
            else if (keepdims)
              expect_shape.push_back(1);
          EXPECT_EQ(r.shape(), expect_shape) << op << " axis=" << axis;
          EXPECT_EQ(r.dtype(), DType::kFloat64) << op;
          expect_near_vec(r.to_vector<double>(), want, 1e-12, op + " axis=" + axis);
        }
      }
    }
  }
  // axis None == all axes.
  for (const auto& [op, ref] : ops) {
    NDArray r = run(op, a);
    EXPECT_EQ(r.shape(), Shape{});
    expect_near_vec(r.to_vector<double>(), ref_reduce(x, shape, {true, true, true}, ref), 1e-12,
                    op + " axis=None");
  }
}

TEST(Reduce, SumFloat32HandValues) {
  NDArray a = NDArray::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  NDArray s = run("_np_sum", a);
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_DOUBLE_EQ(s.item<double>(), 21.0);
  EXPECT_EQ(run("_np_sum", a, {{"axis", "0"}}).to_vector<double>(), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(run("_np_sum", a, {{"axis", "-1"}}).to_vector<double>(), (std::vector<double>{6, 15}));
  NDArray k = run("_np_sum", a, {{"axis", "(0, 1)"}, {"keepdims", "True"}});
  EXPECT_EQ(k.shape(), (Shape{1, 1}));
  EXPECT_DOUBLE_EQ(k.item<double>(), 21.0);
  // axis=() reduces nothing.
  NDArray none = run("_np_sum", a, {{"axis", "()"}});
  EXPECT_EQ(none.shape(), (Shape{2, 3}));
  EXPECT_EQ(none.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(run("_np_prod", a, {{"axis", "1"}}).to_vector<double>(), (std::vector<double>{6, 120}));
  NDArray m = run("_np_mean", a, {{"axis", "0"}});
  EXPECT_EQ(m.dtype(), DType::kFloat32);
  EXPECT_EQ(m.to_vector<double>(), (std::vector<double>{2.5, 3.5, 4.5}));
}

TEST(Reduce, TypedKwargs) {
  NDArray a = NDArray::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  auto attrs = ndx::Op::get("_np_sum")->make_attrs(
      std::vector<std::pair<std::string_view, ndx::Value>>{{"axis", ndx::Value(ndx::Shape{1})}});
  NDArray r = ndx::invoke(attrs, {a})[0];
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{6, 15}));
  auto attrs2 =
      ndx::Op::get("_np_max")->make_attrs(std::vector<std::pair<std::string_view, ndx::Value>>{
          {"axis", ndx::Value(int64_t{0})}, {"keepdims", ndx::Value(true)}});
  NDArray r2 = ndx::invoke(attrs2, {a})[0];
  EXPECT_EQ(r2.shape(), (Shape{1, 3}));
  EXPECT_EQ(r2.to_vector<double>(), (std::vector<double>{4, 5, 6}));
  auto attrs3 = ndx::Op::get("_np_sum")->make_attrs(
      std::vector<std::pair<std::string_view, ndx::Value>>{{"dtype", ndx::Value(DType::kFloat64)}});
  NDArray r3 = ndx::invoke(attrs3, {a})[0];
  EXPECT_EQ(r3.dtype(), DType::kFloat64);
  EXPECT_DOUBLE_EQ(r3.item<double>(), 21.0);
  auto attrs4 = ndx::Op::get("_np_argmax")
                    ->make_attrs(std::vector<std::pair<std::string_view, ndx::Value>>{
                        {"axis", ndx::Value(int64_t{-1})}});
  EXPECT_EQ(ndx::invoke(attrs4, {a})[0].to_vector<int64_t>(), (std::vector<int64_t>{2, 2}));
}

TEST(Reduce, IntegerAndBoolDtypes) {
  // int8 sums widen to int64 and do not overflow at 8 bits.
  NDArray i8 = NDArray::from_vector<int8_t>({100, 100, 100, -100, 27, 1}, Shape{2, 3});
  NDArray s = run("_np_sum", i8);
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_EQ(s.item<int64_t>(), 228);
  NDArray s0 = run("_np_sum", i8, {{"axis", "0"}});
  EXPECT_EQ(s0.to_vector<int64_t>(), (std::vector<int64_t>{0, 127, 101}));
  EXPECT_EQ(run("_np_prod", i8, {{"axis", "1"}}).to_vector<int64_t>(),
            (std::vector<int64_t>{1000000, -2700}));
  EXPECT_EQ(run("_np_prod", i8).dtype(), DType::kInt64);
  // dtype= keeps 8 bits and wraps as NumPy does: 6 * 100 = 600 -> 88.
  NDArray w = run("_np_sum", NDArray::from_vector<int8_t>({100, 100, 100, 100, 100, 100}, Shape{6}),
                  {{"dtype", "int8"}});
  EXPECT_EQ(w.dtype(), DType::kInt8);
  EXPECT_EQ(w.item<int64_t>(), 88);
  NDArray max8 = run("_np_max", i8, {{"axis", "1"}});
  EXPECT_EQ(max8.dtype(), DType::kInt8);
  EXPECT_EQ(max8.to_vector<int64_t>(), (std::vector<int64_t>{100, 27}));
  EXPECT_EQ(run("_np_min", i8).item<int64_t>(), -100);

  NDArray i32 = NDArray::from_vector<int32_t>({2000000000, 2000000000, -7}, Shape{3});
  NDArray s32 = run("_np_sum", i32);
  EXPECT_EQ(s32.dtype(), DType::kInt64);
  EXPECT_EQ(s32.item<int64_t>(), 3999999993LL);
  NDArray m32 =
      run("_np_mean", NDArray::from_vector<int32_t>({1, 2, 3, 5}, Shape{2, 2}), {{"axis", "1"}});
  EXPECT_EQ(m32.dtype(), DType::kFloat32);
  EXPECT_EQ(m32.to_vector<double>(), (std::vector<double>{1.5, 4.0}));
  NDArray mi =
      run("_np_mean", NDArray::from_vector<int64_t>({1, 2}, Shape{2}), {{"dtype", "int64"}});
  EXPECT_EQ(mi.dtype(), DType::kInt64);
  EXPECT_EQ(mi.item<int64_t>(), 1);  // 1.5 truncated, as NumPy

  NDArray u8 = NDArray::from_vector<uint8_t>({200, 100}, Shape{2});
  EXPECT_EQ(run("_np_sum", u8).dtype(), DType::kUInt64);
  EXPECT_EQ(run("_np_sum", u8).item<int64_t>(), 300);

  NDArray b = NDArray::from_vector<bool>({true, false, true, true, false, false}, Shape{2, 3});
  NDArray bs = run("_np_sum", b, {{"axis", "1"}});
  EXPECT_EQ(bs.dtype(), DType::kInt64);
  EXPECT_EQ(bs.to_vector<int64_t>(), (std::vector<int64_t>{2, 1}));
  NDArray bb = run("_np_sum", b, {{"dtype", "bool"}});
  EXPECT_EQ(bb.dtype(), DType::kBool);
  EXPECT_TRUE(bb.item<bool>());
  NDArray bmax = run("_np_max", b, {{"axis", "0"}});
  EXPECT_EQ(bmax.dtype(), DType::kBool);
  EXPECT_EQ(bmax.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(run("_np_min", b, {{"axis", "1"}}).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  NDArray bm = run("_np_mean", b);
  EXPECT_EQ(bm.dtype(), DType::kFloat32);
  EXPECT_DOUBLE_EQ(bm.item<double>(), 0.5);
  EXPECT_EQ(run("_np_argmax", b, {{"axis", "1"}}).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(run("_np_argmin", b).item<int64_t>(), 1);
}

TEST(Reduce, Float16) {
  NDArray h =
      NDArray::from_vector<float>({0.5f, 1.5f, 2.25f, -4.0f}, Shape{2, 2}).astype(DType::kFloat16);
  NDArray s = run("_np_sum", h, {{"axis", "0"}});
  EXPECT_EQ(s.dtype(), DType::kFloat16);
  EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{2.75, -2.5}));
  NDArray m = run("_np_mean", h);
  EXPECT_EQ(m.dtype(), DType::kFloat16);
  EXPECT_DOUBLE_EQ(m.item<double>(), 0.0625);
  EXPECT_DOUBLE_EQ(run("_np_max", h).item<double>(), 2.25);
  EXPECT_DOUBLE_EQ(run("_np_min", h).item<double>(), -4.0);
  EXPECT_EQ(run("_np_argmin", h).item<int64_t>(), 3);
  EXPECT_DOUBLE_EQ(run("_np_prod", h).item<double>(), 0.5 * 1.5 * 2.25 * -4.0);
  // 2048 + 1 + 1 ... : a float16 running sum would stall at 2048; accumulation is wider.
  std::vector<float> many(4096, 1.0f);
  NDArray ones = NDArray::from_vector<float>(many, Shape{4096}).astype(DType::kFloat16);
  EXPECT_DOUBLE_EQ(run("_np_sum", ones).item<double>(), 4096.0);
}

TEST(Reduce, NaNHandling) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NDArray a = NDArray::from_vector<double>({1, nan, 3, nan, 5, 0}, Shape{6});
  EXPECT_TRUE(std::isnan(run("_np_max", a).item<double>()));
  EXPECT_TRUE(std::isnan(run("_np_min", a).item<double>()));
  EXPECT_EQ(run("_np_argmax", a).item<int64_t>(), 1);
  EXPECT_EQ(run("_np_argmin", a).item<int64_t>(), 1);
  const float nanf = std::numeric_limits<float>::quiet_NaN();
  NDArray f = NDArray::from_vector<float>({nanf, 2, 1, 3, 4, 4}, Shape{2, 3});
  auto mx = run("_np_max", f, {{"axis", "1"}}).to_vector<double>();
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_EQ(mx[1], 4.0);
  EXPECT_EQ(run("_np_argmax", f, {{"axis", "1"}}).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 1}));  // NaN first; ties: first occurrence
  EXPECT_EQ(run("_np_argmin", f, {{"axis", "0"}}).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 0}));
}

TEST(Reduce, ArgmaxArgmin) {
  NDArray a = NDArray::from_vector<int32_t>({3, 9, 9, 1, 7, 0, 2, 8, 5, 5, 9, 1}, Shape{3, 4});
  EXPECT_EQ(run("_np_argmax", a).item<int64_t>(), 1);
  EXPECT_EQ(run("_np_argmin", a).item<int64_t>(), 5);
  NDArray r = run("_np_argmax", a, {{"axis", "0"}});
  EXPECT_EQ(r.dtype(), DType::kInt64);
  EXPECT_EQ(r.shape(), Shape{4});
  EXPECT_EQ(r.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 1}));
  NDArray k = run("_np_argmin", a, {{"axis", "-1"}, {"keepdims", "True"}});
  EXPECT_EQ(k.shape(), (Shape{3, 1}));
  EXPECT_EQ(k.to_vector<int64_t>(), (std::vector<int64_t>{3, 1, 3}));
  NDArray kn = run("_np_argmax", a, {{"keepdims", "True"}});
  EXPECT_EQ(kn.shape(), (Shape{1, 1}));
  EXPECT_EQ(kn.item<int64_t>(), 1);
  // Strided input (a transposed view).
  NDArray t = a.transpose();
  EXPECT_EQ(run("_np_argmax", t, {{"axis", "1"}}).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(run("_np_argmax", t).item<int64_t>(), 1 * 3 + 0);  // t.flat: 3,7,5,9,0,5,...
  // Reference loop over a 3-d float32 array, each axis.
  std::vector<double> x = iota_values(60, 1.0, -3.0);
  NDArray b = NDArray::from_vector<double>(x, Shape{3, 4, 5}).astype(DType::kFloat32);
  const int64_t dims[3] = {3, 4, 5};
  for (int ax = 0; ax < 3; ++ax) {
    std::vector<int64_t> want;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t l = 0; l < 5; ++l) {
          int64_t idx[3] = {i, j, l};
          if (idx[ax] != 0) continue;
          int64_t best = 0;
          double bv = 0;
          for (int64_t n = 0; n < dims[ax]; ++n) {
            idx[ax] = n;
            double v = x[(idx[0] * 4 + idx[1]) * 5 + idx[2]];
            if (n == 0 || v > bv) bv = v, best = n;
          }
          want.push_back(best);
        }
    EXPECT_EQ(run("_np_argmax", b, {{"axis", std::to_string(ax)}}).to_vector<int64_t>(), want)
        << "axis " << ax;
  }
}

TEST(Reduce, Aliases) {
  NDArray a = NDArray::from_vector<float>({1, 5, 2}, Shape{3});
  EXPECT_EQ(ndx::Op::get("_np_amax"), ndx::Op::get("_np_max"));
  EXPECT_EQ(ndx::Op::get("_np_amin"), ndx::Op::get("_np_min"));
  EXPECT_DOUBLE_EQ(run("_np_amax", a).item<double>(), 5.0);
  EXPECT_DOUBLE_EQ(run("_np_amin", a).item<double>(), 1.0);
}

TEST(Reduce, ZeroDimInput) {
  NDArray s = NDArray::scalar(3.0, DType::kFloat32);
  for (const char* op : {"_np_sum", "_np_prod", "_np_mean", "_np_max", "_np_min"}) {
    NDArray r = run(op, s);
    EXPECT_EQ(r.shape(), Shape{}) << op;
    EXPECT_DOUBLE_EQ(r.item<double>(), 3.0) << op;
    NDArray k = run(op, s, {{"keepdims", "True"}});
    EXPECT_EQ(k.shape(), Shape{}) << op;
  }
  // NumPy lets axis 0 / -1 through on 0-d arrays for ufunc reductions, not for mean.
  EXPECT_DOUBLE_EQ(run("_np_sum", s, {{"axis", "0"}}).item<double>(), 3.0);
  EXPECT_DOUBLE_EQ(run("_np_max", s, {{"axis", "-1"}}).item<double>(), 3.0);
  EXPECT_EQ(error_kind([&] { run("_np_sum", s, {{"axis", "1"}}); }), kind(ErrorKind::kAxisError));
  EXPECT_EQ(error_kind([&] { run("_np_mean", s, {{"axis", "0"}}); }), kind(ErrorKind::kAxisError));
  EXPECT_EQ(run("_np_argmax", s).item<int64_t>(), 0);
  EXPECT_EQ(run("_np_argmin", s, {{"axis", "0"}}).item<int64_t>(), 0);
  EXPECT_EQ(error_kind([&] {
              run("_np_argmax", s, {{"axis", "1"}});
            }),
            kind(ErrorKind::kAxisError));
}

TEST(Reduce, ZeroSizeInputs) {
  NDArray e = NDArray::from_vector<float>({}, Shape{0, 3});
  NDArray s = run("_np_sum", e, {{"axis", "0"}});
  EXPECT_EQ(s.shape(), Shape{3});
  EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(run("_np_prod", e, {{"axis", "0"}}).to_vector<double>(),
            (std::vector<double>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(run("_np_sum", e).item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(run("_np_prod", e).item<double>(), 1.0);
  for (double v : run("_np_mean", e, {{"axis", "0"}}).to_vector<double>())
    EXPECT_TRUE(std::isnan(v));
  EXPECT_EQ(run("_np_sum", e, {{"axis", "1"}}).shape(), Shape{0});
  // max along a nonempty axis of an empty array is an empty result, not an error.
  EXPECT_EQ(run("_np_max", e, {{"axis", "1"}}).shape(), Shape{0});
  EXPECT_EQ(run("_np_argmax", e, {{"axis", "1"}}).shape(), Shape{0});
  EXPECT_EQ(error_kind([&] { run("_np_max", e); }), kind(ErrorKind::kValueError));
  EXPECT_EQ(error_kind([&] { run("_np_min", e, {{"axis", "0"}}); }), kind(ErrorKind::kValueError));
  EXPECT_EQ(error_kind([&] { run("_np_argmax", e); }), kind(ErrorKind::kValueError));
  EXPECT_EQ(error_kind([&] {
              run("_np_argmin", e, {{"axis", "0"}});
            }),
            kind(ErrorKind::kValueError));
  std::string msg = error_message([&] { run("_np_max", e); });
  EXPECT_EQ(
      msg.rfind("[max] zero-size array to reduction operation maximum which has no identity", 0),
      0u)
      << msg;
  msg = error_message([&] { run("_np_argmin", e); });
  EXPECT_EQ(msg.rfind("[argmin] attempt to get argmin of an empty sequence", 0), 0u) << msg;
}

TEST(Reduce, BadArguments) {
  NDArray a = NDArray::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(error_kind([&] {
              run("_np_sum", a, {{"axis", "(1, 1)"}});
            }),
            kind(ErrorKind::kValueError));
  EXPECT_EQ(error_kind([&] {
              run("_np_max", a, {{"axis", "(1, -1)"}});
            }),
            kind(ErrorKind::kValueError));
  EXPECT_EQ(error_kind([&] { run("_np_sum", a, {{"axis", "2"}}); }), kind(ErrorKind::kAxisError));
  EXPECT_EQ(error_kind([&] { run("_np_mean", a, {{"axis", "-3"}}); }), kind(ErrorKind::kAxisError));
  EXPECT_EQ(error_kind([&] {
              run("_np_argmax", a, {{"axis", "2"}});
            }),
            kind(ErrorKind::kAxisError));
  EXPECT_EQ(error_kind([&] {
              run("_np_prod", a, {{"dtype", "float128"}});
            }),
            kind(ErrorKind::kTypeError));
  std::string msg = error_message([&] { run("_np_sum", a, {{"axis", "(0, 0)"}}); });
  EXPECT_EQ(msg.rfind("[sum] duplicate value in 'axis'", 0), 0u) << msg;
  msg = error_message([&] { run("_np_sum", a, {{"axis", "5"}}); });
  EXPECT_EQ(msg.rfind("[sum] axis 5 is out of bounds for array of dimension 2", 0), 0u) << msg;
}

TEST(Reduce, StridedInputAndRequests) {
  NDArray a = NDArray::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  NDArray t = a.transpose();  // (3, 2): [[1,4],[2,5],[3,6]]
  EXPECT_EQ(run("_np_sum", t, {{"axis", "1"}}).to_vector<double>(), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(run("_np_max", t, {{"axis", "0"}}).to_vector<double>(), (std::vector<double>{3, 6}));
  // kAddTo adds into the caller's output; kNullOp leaves it.
  NDArray out = NDArray::from_vector<float>({10, 20}, Shape{2});
  std::vector<NDArray> outs = {out};
  std::vector<ndx::OpReqType> req = {ndx::kAddTo};
  ndx::InvokeOptions opt;
  opt.outputs = &outs;
  opt.req = &req;
  ndx::invoke(ndx::Op::get("_np_sum")->make_attrs(Dict{{"axis", "1"}}), {a}, opt);
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{16, 35}));
  req = {ndx::kNullOp};
  ndx::invoke(ndx::Op::get("_np_max")->make_attrs(Dict{{"axis", "1"}}), {a}, opt);
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{16, 35}));
  req = {ndx::kWriteTo};
  ndx::invoke(ndx::Op::get("_np_min")->make_attrs(Dict{{"axis", "1"}}), {a}, opt);
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{1, 4}));
}

// Central-difference check of the op's FGradient: loss = sum(w * f(x)), ograd = w.
void check_gradient(const std::string& op, std::map<std::string, std::string> dict,
                    const std::vector<double>& xv, const Shape& xs) {
  SCOPED_TRACE(op);
  auto x = ndx::make_variable("x");
  auto og = ndx::make_variable("ograd");
  ndx::NodeEntry y = ndx::make_node(op, {ndx::NodeEntry{x}}, dict);
  auto fgrad = ndx::Op::attr<ndx::FGradient>("FGradient")[ndx::Op::get(op)];
  std::vector<ndx::NodeEntry> grads = fgrad(y.node, {ndx::NodeEntry{og}});
  ASSERT_EQ(grads.size(), 1u);

  NDArray xa = NDArray::from_vector<double>(xv, xs);
  NDArray ya = run(op, xa, dict);
  std::vector<double> w(static_cast<size_t>(ya.size()));
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5 + 0.25 * static_cast<double>(i);
  NDArray wa = NDArray::from_vector<double>(w, ya.shape());
  std::unordered_map<const ndx::Node*, NDArray> values = {{x.get(), xa}, {og.get(), wa}};
  NDArray g = ndx::evaluate(grads, values)[0];
  ASSERT_EQ(g.shape(), xs);
  ASSERT_EQ(g.dtype(), DType::kFloat64);
  std::vector<double> got = g.to_vector<double>();

  auto loss = [&](const std::vector<double>& v) {
    std::vector<double> f = run(op, NDArray::from_vector<double>(v, xs), dict).to_vector<double>();
    double l = 0;
    for (size_t i = 0; i < f.size(); ++i) l += w[i] * f[i];
    return l;
  };
  const double h = 1e-6;
  for (size_t i = 0; i < xv.size(); ++i) {
    std::vector<double> p = xv, m = xv;
    p[i] += h, m[i] -= h;
    double num = (loss(p) - loss(m)) / (2 * h);
    EXPECT_NEAR(got[i], num, 1e-6 * std::max(1.0, std::fabs(num))) << "element " << i;
  }
}

TEST(Reduce, GradientsNumeric) {
  const std::vector<double> x = {0.5, -1.25, 2.0, 1.5, 3.0, -0.75};
  check_gradient("_np_sum", {{"axis", "1"}}, x, Shape{2, 3});
  check_gradient("_np_sum", {{"axis", "0"}, {"keepdims", "True"}}, x, Shape{2, 3});
  check_gradient("_np_sum", {}, x, Shape{2, 3});
  check_gradient("_np_mean", {{"axis", "(0, 1)"}}, x, Shape{2, 3});
  check_gradient("_np_mean", {{"axis", "-1"}, {"keepdims", "True"}}, x, Shape{2, 3});
  check_gradient("_np_prod", {{"axis", "1"}}, x, Shape{2, 3});
  check_gradient("_np_prod", {}, x, Shape{3, 2});
  check_gradient("_np_max", {{"axis", "1"}}, x, Shape{2, 3});  // distinct values: smooth
  check_gradient("_np_min", {{"axis", "0"}, {"keepdims", "True"}}, x, Shape{2, 3});
  check_gradient("_np_amax", {}, x, Shape{6});
}

TEST(Reduce, GradientEdgeCases) {
  // prod with zeros: exact gradients, no division by zero.
  auto x = ndx::make_variable("x");
  auto og = ndx::make_variable("ograd");
  ndx::NodeEntry y = ndx::make_node("_np_prod", {ndx::NodeEntry{x}}, {{"axis", "1"}});
  auto fgrad = ndx::Op::attr<ndx::FGradient>("FGradient")[ndx::Op::get("_np_prod")];
  auto grads = fgrad(y.node, {ndx::NodeEntry{og}});
  NDArray xa = NDArray::from_vector<double>({2, 0, 3, 0, 0, 5, 1, 2, 4}, Shape{3, 3});
  NDArray wa = NDArray::from_vector<double>({1, 1, 1}, Shape{3});
  NDArray g = ndx::evaluate(grads, {{x.get(), xa}, {og.get(), wa}})[0];
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 6, 0, 0, 0, 0, 8, 4, 2}));
  // Integer prod gradients (no SIGFPE on zeros).
  NDArray xi = NDArray::from_vector<int64_t>({2, 0, 3, -1, 4, 5}, Shape{2, 3});
  NDArray wi = NDArray::from_vector<int64_t>({1, 2}, Shape{2});
  NDArray gi = ndx::evaluate(grads, {{x.get(), xi}, {og.get(), wi}})[0];
  EXPECT_EQ(gi.to_vector<int64_t>(), (std::vector<int64_t>{0, 6, 0, 40, -10, -8}));
  // max with ties: every tied element receives the gradient.
  ndx::NodeEntry ym = ndx::make_node("_np_max", {ndx::NodeEntry{x}}, {});
  auto gm = ndx::Op::attr<ndx::FGradient>("FGradient")[ndx::Op::get("_np_max")](
      ym.node, {ndx::NodeEntry{og}});
  NDArray xt = NDArray::from_vector<float>({1, 3, 3, 2}, Shape{4});
  NDArray g1 = ndx::evaluate(gm, {{x.get(), xt}, {og.get(), NDArray::scalar(2.0)}})[0];
  EXPECT_EQ(g1.dtype(), DType::kFloat32);
  EXPECT_EQ(g1.to_vector<double>(), (std::vector<double>{0, 2, 2, 0}));
  // Backward ops are marked and argmax has a (zero) gradient.
  const auto& is_bwd = ndx::Op::attr<ndx::TIsBackward>("TIsBackward");
  for (const char* name :
       {"_backward_sum", "_backward_mean", "_backward_prod", "_backward_max", "_backward_min"})
    EXPECT_TRUE(is_bwd.get(ndx::Op::get(name), false)) << name;
  EXPECT_TRUE(ndx::Op::attr<ndx::FGradient>("FGradient").count(ndx::Op::get("_np_argmax")));
  EXPECT_TRUE(ndx::Op::attr<ndx::FGradient>("FGradient").count(ndx::Op::get("_np_argmin")));
  // argmax's gradient is zeros shaped like the input.
  ndx::NodeEntry ya = ndx::make_node("_np_argmax", {ndx::NodeEntry{x}}, {{"axis", "0"}});
  auto ga = ndx::Op::attr<ndx::FGradient>("FGradient")[ndx::Op::get("_np_argmax")](
      ya.node, {ndx::NodeEntry{og}});
  ASSERT_EQ(ga.size(), 1u);
  NDArray z = ndx::evaluate(ga, {{x.get(), xt}})[0];
  EXPECT_EQ(z.shape(), Shape{4});
  EXPECT_EQ(z.to_vector<double>(), (std::vector<double>{0, 0, 0, 0}));
  // The backward checks the ograd's shape.
  NDArray bad = NDArray::from_vector<double>({1, 2}, Shape{2});
  EXPECT_EQ(error_kind([&] {
              ndx::invoke(ndx::Op::get("_backward_sum")->make_attrs(Dict{{"axis", "0"}}),
                          {bad, NDArray::from_vector<double>({1, 2, 3, 4, 5, 6}, Shape{2, 3})});
            }),
            kind(ErrorKind::kValueError));
}

}  // namespace
