// Shape ops: reshape, transpose, expand_dims, squeeze, broadcast_to, swapaxes, concatenate,
// stack, split. References are hand-computed values or naive index loops written here.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
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
using Dict = std::map<std::string, std::string>;

std::vector<NDArray> run(const std::string& op, const std::vector<NDArray>& in,
                         const Dict& dict = {}, const ndx::InvokeOptions& opt = {}) {
  return ndx::invoke(ndx::Op::get(op)->make_attrs(dict), in, opt);
}

// The kind of ndx::Error f throws (and its message in *msg), or nullopt when it does not throw.
std::optional<ErrorKind> error_of(const std::function<void()>& f, std::string* msg = nullptr) {
  try {
    f();
  } catch (const ndx::Error& e) {
    if (msg) *msg = e.what();
    return e.kind();
  }
  return std::nullopt;
}

#define EXPECT_ERROR(kind, stmt) EXPECT_EQ(error_of([&] { stmt; }), ErrorKind::kind) << #stmt

std::vector<double> iota_values(int64_t n, double start = 0) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i);
  return v;
}

NDArray arange(Shape shape, DType dtype = DType::kFloat32, double start = 0) {
  return NDArray::from_vector<double>(iota_values(shape.size(), start), shape).astype(dtype);
}

void check_gradient(const std::string& op, const Dict& dict, const std::vector<NDArray>& inputs) {
  ndx::test::check_numeric_gradient(op, dict, inputs, /*seed=*/7);
}

// ============================== reshape ==============================
TEST(ShapeOpsReshape, StringAndTypedParams) {
  NDArray a = NDArray::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  // The map type is named: a plain braced dict is ambiguous between make_attrs' overloads.
  auto out =
      ndx::invoke(ndx::Op::get("_np_reshape")->make_attrs(Dict{{"newshape", "(3, -1)"}}), {a});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(out[0].dtype(), DType::kFloat32);
  EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));

  auto typed = ndx::invoke(ndx::Op::get("_np_reshape")
                               ->make_attrs(std::vector<std::pair<std::string_view, ndx::Value>>{
                                   {"newshape", ndx::Value(ndx::Shape{3, -1})}}),
                           {a});
  EXPECT_EQ(typed[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(typed[0].to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(ShapeOpsReshape, ResultIsACopyNotAView) {
  NDArray a = arange(Shape{2, 3});
  NDArray r = run("_np_reshape", {a}, {{"newshape", "(6,)"}})[0];
  EXPECT_FALSE(r.shares_storage_with(a));
  a.fill(-1);
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  // NDArray::reshape, by contrast, is a view.
  NDArray v = a.reshape(Shape{6});
  EXPECT_TRUE(v.shares_storage_with(a));
}

TEST(ShapeOpsReshape, StridedInputReadsLogicalOrder) {
  NDArray a = arange(Shape{2, 3}, DType::kInt32);  // [[0,1,2],[3,4,5]]
  NDArray t = a.transpose();                       // [[0,3],[1,4],[2,5]], a view
  ASSERT_FALSE(t.is_contiguous());
  NDArray r = run("_np_reshape", {t}, {{"newshape", "(-1,)"}})[0];
  EXPECT_EQ(r.dtype(), DType::kInt32);
  EXPECT_EQ(r.to_vector<int>(), (std::vector<int>{0, 3, 1, 4, 2, 5}));
}

TEST(ShapeOpsReshape, ScalarsZeroSizeAndDtypes) {
  NDArray s = NDArray::scalar(7.5, DType::kFloat64);
  NDArray r = run("_np_reshape", {s}, {{"newshape", "(1, 1)"}})[0];
  EXPECT_EQ(r.shape(), (Shape{1, 1}));
  EXPECT_EQ(r.item<double>(), 7.5);
  NDArray back = run("_np_reshape", {r}, {{"newshape", "()"}})[0];
  EXPECT_EQ(back.shape(), Shape{});
  EXPECT_EQ(back.item<double>(), 7.5);

  NDArray z(Shape{0, 3}, DType::kFloat32);
  EXPECT_EQ(run("_np_reshape", {z}, {{"newshape", "(3, 0)"}})[0].shape(), (Shape{3, 0}));
  EXPECT_EQ(run("_np_reshape", {z}, {{"newshape", "(-1,)"}})[0].shape(), (Shape{0}));
  EXPECT_EQ(run("_np_reshape", {z}, {{"newshape", "(-1, 3)"}})[0].shape(), (Shape{0, 3}));

  NDArray b = NDArray::from_vector<bool>({true, false, false, true}, Shape{4});
  NDArray rb = run("_np_reshape", {b}, {{"newshape", "(2, 2)"}})[0];
  EXPECT_EQ(rb.dtype(), DType::kBool);
  EXPECT_EQ(rb.to_vector<int>(), (std::vector<int>{1, 0, 0, 1}));

  NDArray h =
      NDArray::from_vector<double>({0.5, -1.25, 3, 1024}, Shape{2, 2}).astype(DType::kFloat16);
  NDArray rh = run("_np_reshape", {h}, {{"newshape", "(4,)"}})[0];
  EXPECT_EQ(rh.dtype(), DType::kFloat16);
  EXPECT_EQ(rh.to_vector<double>(), (std::vector<double>{0.5, -1.25, 3, 1024}));
}

TEST(ShapeOpsReshape, BadInputs) {
  NDArray a = arange(Shape{2, 3});
  std::string msg;
  EXPECT_EQ(error_of(
                [&] {
                  run("_np_reshape", {a}, {{"newshape", "(4,)"}});
                },
                &msg),
            ErrorKind::kValueError);
  EXPECT_EQ(msg, "[reshape] cannot reshape array of size 6 into shape (4,)");
  EXPECT_ERROR(kValueError, run("_np_reshape", {a}, {{"newshape", "(-1, -1)"}}));
  EXPECT_ERROR(kValueError, run("_np_reshape", {a}, {{"newshape", "(4, -1)"}}));
  EXPECT_ERROR(kValueError, run("_np_reshape", {NDArray(Shape{0, 3})}, {{"newshape", "(-1, 0)"}}));
  EXPECT_ERROR(kValueError, run("_np_reshape", {a}, {}));  // newshape is required
  EXPECT_ERROR(kTypeError, ndx::Op::get("_np_reshape")
                               ->make_attrs(std::vector<std::pair<std::string_view, ndx::Value>>{
                                   {"newshape", ndx::Value(1.5)}}));
  EXPECT_ERROR(kValueError, run("_np_reshape", {a, a}, {{"newshape", "(6,)"}}));
}

TEST(ShapeOpsReshape, RequestTypes) {
  NDArray a = arange(Shape{2, 3}, DType::kInt32, 1);
  NDArray out = NDArray::from_vector<int>({10, 20, 30, 40, 50, 60}, Shape{3, 2});
  std::vector<NDArray> outs{out};
  std::vector<ndx::OpReqType> req{ndx::kAddTo};
  ndx::InvokeOptions opt;
  opt.outputs = &outs;
  opt.req = &req;
  run("_np_reshape", {a}, {{"newshape", "(3, 2)"}}, opt);
  EXPECT_EQ(out.to_vector<int>(), (std::vector<int>{11, 22, 33, 44, 55, 66}));
  req[0] = ndx::kNullOp;
  run("_np_reshape", {a}, {{"newshape", "(3, 2)"}}, opt);
  EXPECT_EQ(out.to_vector<int>(), (std::vector<int>{11, 22, 33, 44, 55, 66}));
  req[0] = ndx::kWriteTo;
  run("_np_reshape", {a}, {{"newshape", "(3, 2)"}}, opt);
  EXPECT_EQ(out.to_vector<int>(), (std::vector<int>{1, 2, 3, 4, 5, 6}));
}

// ============================== transpose / swapaxes ==============================
TEST(ShapeOpsTranspose, AxesAndDefault) {
  NDArray a = arange(Shape{2, 3, 4}, DType::kFloat64);
  NDArray t = run("_np_transpose", {a}, {{"axes", "(1, 0, 2)"}})[0];
  ASSERT_EQ(t.shape(), (Shape{3, 2, 4}));
  auto tv = t.to_vector<double>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(tv[(i * 2 + j) * 4 + k], (j * 3 + i) * 4 + k);

  NDArray r = run("_np_transpose", {a})[0];  // None reverses
  ASSERT_EQ(r.shape(), (Shape{4, 3, 2}));
  auto rv = r.to_vector<double>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(rv[(i * 3 + j) * 2 + k], (k * 3 + j) * 4 + i);

  NDArray neg = run("_np_transpose", {a}, {{"axes", "(-1, 0, 1)"}})[0];
  EXPECT_EQ(neg.shape(), (Shape{4, 2, 3}));

  NDArray s = NDArray::scalar(3, DType::kInt32);
  EXPECT_EQ(run("_np_transpose", {s})[0].item<int>(), 3);
  NDArray z(Shape{0, 2}, DType::kBool);
  EXPECT_EQ(run("_np_transpose", {z})[0].shape(), (Shape{2, 0}));
}

TEST(ShapeOpsTranspose, StridedInputAndDtypes) {
  NDArray a = arange(Shape{3, 4}, DType::kInt32).slice(1, 0, std::nullopt, 2);  // cols 0, 2
  NDArray t = run("_np_transpose", {a})[0];
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.to_vector<int>(), (std::vector<int>{0, 4, 8, 2, 6, 10}));
  NDArray h = arange(Shape{2, 2}, DType::kFloat16);
  NDArray th = run("_np_transpose", {h})[0];
  EXPECT_EQ(th.dtype(), DType::kFloat16);
  EXPECT_EQ(th.to_vector<double>(), (std::vector<double>{0, 2, 1, 3}));
}

TEST(ShapeOpsTranspose, BadInputs) {
  NDArray a = arange(Shape{2, 3});
  EXPECT_ERROR(kValueError, run("_np_transpose", {a}, {{"axes", "(0,)"}}));
  EXPECT_ERROR(kValueError, run("_np_transpose", {a}, {{"axes", "(0, 0)"}}));
  EXPECT_ERROR(kAxisError, run("_np_transpose", {a}, {{"axes", "(0, 2)"}}));
  std::string msg;
  error_of([&] { run("_np_transpose", {a}, {{"axes", "(0, 0)"}}); }, &msg);
  EXPECT_EQ(msg.rfind("[transpose]", 0), 0u) << msg;
}

TEST(ShapeOpsSwapaxes, Values) {
  NDArray a = arange(Shape{2, 3, 4}, DType::kInt32);
  NDArray s = run("_np_swapaxes", {a}, {{"axis1", "0"}, {"axis2", "-1"}})[0];
  ASSERT_EQ(s.shape(), (Shape{4, 3, 2}));
  auto v = s.to_vector<int>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(v[(i * 3 + j) * 2 + k], (k * 3 + j) * 4 + i);
  EXPECT_ERROR(kAxisError, run("_np_swapaxes", {a}, {{"axis1", "0"}, {"axis2", "3"}}));
  EXPECT_ERROR(kValueError, run("_np_swapaxes", {a}, {{"axis1", "0"}}));  // axis2 required
}

// ============================== expand_dims / squeeze ==============================
TEST(ShapeOpsExpandDims, Values) {
  NDArray a = arange(Shape{2, 3});
  EXPECT_EQ(run("_np_expand_dims", {a}, {{"axis", "-1"}})[0].shape(), (Shape{2, 3, 1}));
  NDArray e = run("_np_expand_dims", {a}, {{"axis", "1"}})[0];
  EXPECT_EQ(e.shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(e.to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_FALSE(e.shares_storage_with(a));
  NDArray s = NDArray::scalar(1, DType::kBool);
  EXPECT_EQ(run("_np_expand_dims", {s}, {{"axis", "0"}})[0].shape(), (Shape{1}));
  EXPECT_ERROR(kAxisError, run("_np_expand_dims", {a}, {{"axis", "3"}}));
  EXPECT_ERROR(kAxisError, run("_np_expand_dims", {a}, {{"axis", "-4"}}));
  EXPECT_ERROR(kValueError, run("_np_expand_dims", {a}, {}));
}

TEST(ShapeOpsSqueeze, Values) {
  NDArray a = arange(Shape{1, 3, 1}, DType::kInt32);
  NDArray all = run("_np_squeeze", {a})[0];
  EXPECT_EQ(all.shape(), (Shape{3}));
  EXPECT_EQ(all.to_vector<int>(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(run("_np_squeeze", {a}, {{"axis", "(0,)"}})[0].shape(), (Shape{3, 1}));
  EXPECT_EQ(run("_np_squeeze", {a}, {{"axis", "-1"}})[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(run("_np_squeeze", {a}, {{"axis", "()"}})[0].shape(), (Shape{1, 3, 1}));
  NDArray s = NDArray::scalar(2.5);
  EXPECT_EQ(run("_np_squeeze", {s})[0].shape(), Shape{});
  EXPECT_EQ(run("_np_squeeze", {s}, {{"axis", "0"}})[0].item<double>(), 2.5);  // as NumPy
  NDArray z(Shape{1, 0}, DType::kFloat32);
  EXPECT_EQ(run("_np_squeeze", {z})[0].shape(), (Shape{0}));

  std::string msg;
  EXPECT_EQ(error_of(
                [&] {
                  run("_np_squeeze", {a}, {{"axis", "1"}});
                },
                &msg),
            ErrorKind::kValueError);
  EXPECT_EQ(msg.rfind("[squeeze] cannot select an axis to squeeze out", 0), 0u) << msg;
  EXPECT_ERROR(kAxisError, run("_np_squeeze", {a}, {{"axis", "3"}}));
  EXPECT_ERROR(kValueError, run("_np_squeeze", {a}, {{"axis", "(0, -3)"}}));  // duplicate
  EXPECT_ERROR(kAxisError, run("_np_squeeze", {s}, {{"axis", "1"}}));
}

// ============================== broadcast_to ==============================
TEST(ShapeOpsBroadcastTo, Values) {
  NDArray a = NDArray::from_vector<float>({1, 2, 3}, Shape{3});
  NDArray b = run("_np_broadcast_to", {a}, {{"shape", "(2, 3)"}})[0];
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  EXPECT_TRUE(b.is_contiguous());
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  NDArray c = NDArray::from_vector<int>({1, 2}, Shape{2, 1});
  EXPECT_EQ(run("_np_broadcast_to", {c}, {{"shape", "(2, 2)"}})[0].to_vector<int>(),
            (std::vector<int>{1, 1, 2, 2}));
  NDArray s = NDArray::scalar(4, DType::kFloat16);
  NDArray bs = run("_np_broadcast_to", {s}, {{"shape", "(2, 2)"}})[0];
  EXPECT_EQ(bs.dtype(), DType::kFloat16);
  EXPECT_EQ(bs.to_vector<double>(), (std::vector<double>{4, 4, 4, 4}));
  EXPECT_EQ(run("_np_broadcast_to", {a}, {{"shape", "(0, 3)"}})[0].shape(), (Shape{0, 3}));
  EXPECT_EQ(run("_np_broadcast_to", {a}, {{"shape", "(3,)"}})[0].shape(), (Shape{3}));

  EXPECT_ERROR(kValueError, run("_np_broadcast_to", {a}, {{"shape", "(2, 4)"}}));
  EXPECT_ERROR(kValueError, run("_np_broadcast_to", {a}, {{"shape", "(-1, 3)"}}));
  EXPECT_ERROR(kValueError, run("_np_broadcast_to", {c}, {{"shape", "(2,)"}}));
}

// ============================== concatenate ==============================
TEST(ShapeOpsConcatenate, Axis) {
  NDArray a = arange(Shape{2, 3});
  NDArray b = arange(Shape{2, 2}, DType::kFloat32, 100);
  NDArray c = run("_npi_concatenate", {a, b}, {{"num_args", "2"}, {"axis", "1"}})[0];
  EXPECT_EQ(c.shape(), (Shape{2, 5}));
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{0, 1, 2, 100, 101, 3, 4, 5, 102, 103}));
  NDArray c0 = run("_npi_concatenate", {a, a, a}, {{"num_args", "3"}})[0];  // axis 0 default
  EXPECT_EQ(c0.shape(), (Shape{6, 3}));
  EXPECT_EQ(c0.to_vector<double>()[15], 3);
  NDArray neg = run("_npi_concatenate", {a, b}, {{"num_args", "2"}, {"axis", "-1"}})[0];
  EXPECT_EQ(neg.to_vector<double>(), c.to_vector<double>());
  NDArray one = run("_npi_concatenate", {a}, {{"num_args", "1"}})[0];
  EXPECT_EQ(one.to_vector<double>(), a.to_vector<double>());
  EXPECT_FALSE(one.shares_storage_with(a));
}

TEST(ShapeOpsConcatenate, NoneFlattensAndScalars) {
  NDArray a = arange(Shape{2, 2}, DType::kInt32);
  NDArray s = NDArray::scalar(9, DType::kInt32);
  NDArray c = run("_npi_concatenate", {a.transpose(), s}, {{"num_args", "2"}, {"axis", "None"}})[0];
  EXPECT_EQ(c.shape(), (Shape{5}));
  EXPECT_EQ(c.to_vector<int>(), (std::vector<int>{0, 2, 1, 3, 9}));
  NDArray typed =
      ndx::invoke(ndx::Op::get("_npi_concatenate")
                      ->make_attrs(std::vector<std::pair<std::string_view, ndx::Value>>{
                          {"num_args", ndx::Value(2)}, {"axis", ndx::Value(std::nullopt)}}),
                  {s, s})[0];
  EXPECT_EQ(typed.to_vector<int>(), (std::vector<int>{9, 9}));
}

TEST(ShapeOpsConcatenate, PromotesDtypes) {
  NDArray b = NDArray::from_vector<bool>({true, false}, Shape{2});
  NDArray i = NDArray::from_vector<int32_t>({-5, 7}, Shape{2});
  NDArray c = run("_npi_concatenate", {b, i}, {{"num_args", "2"}})[0];
  EXPECT_EQ(c.dtype(), DType::kInt32);
  EXPECT_EQ(c.to_vector<int>(), (std::vector<int>{1, 0, -5, 7}));
  NDArray f = NDArray::from_vector<float>({0.5f}, Shape{1});
  NDArray cf = run("_npi_concatenate", {i, f}, {{"num_args", "2"}})[0];
  EXPECT_EQ(cf.dtype(), DType::kFloat64);  // NumPy: int32 + float32 -> float64
  EXPECT_EQ(cf.to_vector<double>(), (std::vector<double>{-5, 7, 0.5}));
  NDArray h = NDArray::from_vector<double>({1.5}, Shape{1}).astype(DType::kFloat16);
  NDArray i8 = NDArray::from_vector<int8_t>({-3}, Shape{1});
  NDArray ch = run("_npi_concatenate", {h, i8}, {{"num_args", "2"}})[0];
  EXPECT_EQ(ch.dtype(), DType::kFloat16);
  EXPECT_EQ(ch.to_vector<double>(), (std::vector<double>{1.5, -3}));
}

TEST(ShapeOpsConcatenate, ZeroSize) {
  NDArray a(Shape{2, 0}, DType::kFloat32);
  NDArray b = arange(Shape{2, 3});
  NDArray c = run("_npi_concatenate", {a, b}, {{"num_args", "2"}, {"axis", "1"}})[0];
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.to_vector<double>(), b.to_vector<double>());
  NDArray z = run("_npi_concatenate", {a, a}, {{"num_args", "2"}})[0];
  EXPECT_EQ(z.shape(), (Shape{4, 0}));
}

TEST(ShapeOpsConcatenate, BadInputs) {
  NDArray a = arange(Shape{2, 3});
  std::string msg;
  EXPECT_EQ(error_of(
                [&] {
                  run("_npi_concatenate", {a, arange(Shape{2, 3, 1})}, {{"num_args", "2"}});
                },
                &msg),
            ErrorKind::kValueError);
  EXPECT_EQ(msg,
            "[concatenate] all inputs must have the same ndim; input 1 has ndim 3, expected 2");
  EXPECT_ERROR(kValueError, run("_npi_concatenate", {a, arange(Shape{2, 4})}, {{"num_args", "2"}}));
  EXPECT_ERROR(kValueError, run("_npi_concatenate", {NDArray::scalar(1), NDArray::scalar(2)},
                                {{"num_args", "2"}}));
  EXPECT_ERROR(kAxisError, run("_npi_concatenate", {a, a}, {{"num_args", "2"}, {"axis", "2"}}));
  EXPECT_ERROR(kValueError, run("_npi_concatenate", {}, {{"num_args", "0"}}));
  EXPECT_ERROR(kValueError, run("_npi_concatenate", {a, a}, {{"num_args", "3"}}));
  EXPECT_ERROR(kValueError, run("_npi_concatenate", {a, a}, {}));  // num_args is required
}

TEST(ShapeOpsConcatenate, AddTo) {
  NDArray a = NDArray::from_vector<float>({1, 2}, Shape{1, 2});
  NDArray b = NDArray::from_vector<float>({3, 4}, Shape{1, 2});
  NDArray out = NDArray::from_vector<float>({10, 10, 10, 10}, Shape{2, 2});
  std::vector<NDArray> outs{out};
  std::vector<ndx::OpReqType> req{ndx::kAddTo};
  ndx::InvokeOptions opt;
  opt.outputs = &outs;
  opt.req = &req;
  run("_npi_concatenate", {a, b}, {{"num_args", "2"}}, opt);
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{11, 12, 13, 14}));
}

// ============================== stack ==============================
TEST(ShapeOpsStack, Values) {
  NDArray a = NDArray::from_vector<int>({1, 2, 3}, Shape{3});
  NDArray b = NDArray::from_vector<int>({4, 5, 6}, Shape{3});
  NDArray s0 = run("_npi_stack", {a, b}, {{"num_args", "2"}})[0];
  EXPECT_EQ(s0.shape(), (Shape{2, 3}));
  EXPECT_EQ(s0.to_vector<int>(), (std::vector<int>{1, 2, 3, 4, 5, 6}));
  NDArray s1 = run("_npi_stack", {a, b}, {{"num_args", "2"}, {"axis", "-1"}})[0];
  EXPECT_EQ(s1.shape(), (Shape{3, 2}));
  EXPECT_EQ(s1.to_vector<int>(), (std::vector<int>{1, 4, 2, 5, 3, 6}));
  NDArray sc = run("_npi_stack",
                   {NDArray::scalar(1.5, DType::kFloat64), NDArray::scalar(2, DType::kFloat32)},
                   {{"num_args", "2"}})[0];
  EXPECT_EQ(sc.shape(), (Shape{2}));
  EXPECT_EQ(sc.dtype(), DType::kFloat64);
  EXPECT_EQ(sc.to_vector<double>(), (std::vector<double>{1.5, 2}));
  NDArray z = run("_npi_stack", {NDArray(Shape{0}), NDArray(Shape{0})},
                  {{"num_args", "2"}, {"axis", "1"}})[0];
  EXPECT_EQ(z.shape(), (Shape{0, 2}));

  EXPECT_ERROR(kValueError, run("_npi_stack", {a, arange(Shape{4})}, {{"num_args", "2"}}));
  EXPECT_ERROR(kAxisError, run("_npi_stack", {a, b}, {{"num_args", "2"}, {"axis", "2"}}));
}

// ============================== split ==============================
TEST(ShapeOpsSplit, SectionsAndIndices) {
  NDArray a = arange(Shape{6}, DType::kInt32);
  auto parts = run("_npi_split", {a}, {{"sections", "3"}});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].to_vector<int>(), (std::vector<int>{2, 3}));
  EXPECT_EQ(parts[2].to_vector<int>(), (std::vector<int>{4, 5}));

  NDArray b = arange(Shape{5}, DType::kInt32);
  auto idx = run("_npi_split", {b}, {{"indices", "(3, 1)"}});  // numpy.split(arange(5), [3, 1])
  ASSERT_EQ(idx.size(), 3u);
  EXPECT_EQ(idx[0].to_vector<int>(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(idx[1].shape(), (Shape{0}));
  EXPECT_EQ(idx[2].to_vector<int>(), (std::vector<int>{1, 2, 3, 4}));
  auto neg = run("_npi_split", {b}, {{"indices", "(-2, 10)"}});
  ASSERT_EQ(neg.size(), 3u);
  EXPECT_EQ(neg[0].to_vector<int>(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(neg[1].to_vector<int>(), (std::vector<int>{3, 4}));
  EXPECT_EQ(neg[2].shape(), (Shape{0}));
  EXPECT_EQ(run("_npi_split", {b})[0].to_vector<int>(), b.to_vector<int>());  // indices=()

  NDArray m = arange(Shape{2, 4}).transpose();  // (4, 2), strided
  auto cols = run("_npi_split", {m}, {{"sections", "2"}, {"axis", "1"}});
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[0].shape(), (Shape{4, 1}));
  EXPECT_EQ(cols[0].to_vector<double>(), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(cols[1].to_vector<double>(), (std::vector<double>{4, 5, 6, 7}));
  auto zs = run("_npi_split", {NDArray(Shape{0, 2}, DType::kBool)}, {{"sections", "2"}});
  EXPECT_EQ(zs[1].shape(), (Shape{0, 2}));
}

TEST(ShapeOpsSplit, BadInputs) {
  NDArray a = arange(Shape{5});
  std::string msg;
  EXPECT_EQ(error_of(
                [&] {
                  run("_npi_split", {a}, {{"sections", "2"}});
                },
                &msg),
            ErrorKind::kValueError);
  EXPECT_NE(msg.find("array split does not result in an equal division"), std::string::npos) << msg;
  EXPECT_ERROR(kValueError, run("_npi_split", {a}, {{"sections", "2"}, {"indices", "(1,)"}}));
  EXPECT_ERROR(kValueError, run("_npi_split", {a}, {{"sections", "-1"}}));
  EXPECT_ERROR(kAxisError, run("_npi_split", {a}, {{"sections", "1"}, {"axis", "1"}}));
  EXPECT_ERROR(kAxisError, run("_npi_split", {NDArray::scalar(1)}, {{"sections", "1"}}));
}

// ============================== backward ops ==============================
TEST(ShapeOpsBackward, OpsAreMarked) {
  const auto& is_bwd = ndx::Op::attr<ndx::TIsBackward>("TIsBackward");
  const auto& fgrad = ndx::Op::attr<ndx::FGradient>("FGradient");
  for (const char* name :
       {"_backward_reshape", "_backward_broadcast_to", "_backward_concatenate", "_backward_stack"})
    EXPECT_TRUE(is_bwd.get(ndx::Op::get(name), false)) << name;
  for (const char* name :
       {"_np_reshape", "_np_transpose", "_np_expand_dims", "_np_squeeze", "_np_broadcast_to",
        "_np_swapaxes", "_npi_concatenate", "_npi_stack", "_npi_split"})
    EXPECT_TRUE(fgrad.count(ndx::Op::get(name))) << name;
}

TEST(ShapeOpsBackward, BroadcastToSumsBack) {
  NDArray g = arange(Shape{2, 3}, DType::kFloat32, 1);  // [[1,2,3],[4,5,6]]
  NDArray x = NDArray::from_vector<float>({0, 0, 0}, Shape{1, 3});
  NDArray gx = run("_backward_broadcast_to", {g, x})[0];
  EXPECT_EQ(gx.shape(), (Shape{1, 3}));
  EXPECT_EQ(gx.to_vector<double>(), (std::vector<double>{5, 7, 9}));
  NDArray gs = run("_backward_broadcast_to", {g, NDArray::scalar(0)})[0];
  EXPECT_EQ(gs.item<double>(), 21);
}

TEST(ShapeOpsGradient, NumericCheck) {
  auto x = [](Shape s, double start = 0.25) { return arange(s, DType::kFloat64, start); };
  check_gradient("_np_reshape", {{"newshape", "(3, -1)"}}, {x(Shape{2, 3})});
  check_gradient("_np_transpose", {{"axes", "(2, 0, 1)"}}, {x(Shape{2, 3, 4})});
  check_gradient("_np_transpose", {}, {x(Shape{2, 3})});
  check_gradient("_np_expand_dims", {{"axis", "1"}}, {x(Shape{2, 3})});
  check_gradient("_np_squeeze", {}, {x(Shape{1, 3, 1})});
  check_gradient("_np_broadcast_to", {{"shape", "(2, 2, 3)"}}, {x(Shape{2, 1, 3})});
  check_gradient("_np_swapaxes", {{"axis1", "0"}, {"axis2", "2"}}, {x(Shape{2, 3, 4})});
  check_gradient("_npi_concatenate", {{"num_args", "2"}, {"axis", "1"}},
                 {x(Shape{2, 3}), x(Shape{2, 1}, 5)});
  check_gradient("_npi_concatenate", {{"num_args", "2"}, {"axis", "None"}},
                 {x(Shape{2, 2}), x(Shape{3}, 5)});
  check_gradient("_npi_stack", {{"num_args", "3"}, {"axis", "1"}},
                 {x(Shape{2, 2}), x(Shape{2, 2}, 7), x(Shape{2, 2})});
  check_gradient("_npi_split", {{"indices", "(1, 3)"}, {"axis", "1"}}, {x(Shape{2, 4})});
}

}  // namespace
