// Core types: dtypes and promotion, 16-bit floats, shapes, storage, NDArray views and copies,
// printing. References are NumPy's documented results, written out by hand.
#include <sstream>

#include "ndx/runtime.h"
#include "test_util.h"

namespace ndx {
namespace {
using test::expect_error;

TEST(DType, NamesAndSizes) {
  EXPECT_EQ(dtype_name(DType::kFloat32), "float32");
  EXPECT_EQ(dtype_size(DType::kBFloat16), 2);
  EXPECT_EQ(dtype_size(DType::kUInt64), 8);
  EXPECT_EQ(dtype_from_name("int16"), DType::kInt16);
  EXPECT_EQ(dtype_from_name("bool"), DType::kBool);
  expect_error(
      ErrorKind::kTypeError, [] { dtype_from_name("float128"); }, "float128");
}

TEST(DType, PromotionFollowsNumPy2) {
  struct Case {
    DType a, b, want;
  };
  // Values from numpy.promote_types (NumPy 2.x).
  std::vector<Case> cases = {
      {DType::kBool, DType::kInt8, DType::kInt8},
      {DType::kInt8, DType::kUInt8, DType::kInt16},
      {DType::kInt16, DType::kUInt16, DType::kInt32},
      {DType::kInt32, DType::kUInt32, DType::kInt64},
      {DType::kInt64, DType::kUInt64, DType::kFloat64},
      {DType::kInt64, DType::kUInt8, DType::kInt64},
      {DType::kUInt8, DType::kUInt32, DType::kUInt32},
      {DType::kFloat16, DType::kInt8, DType::kFloat16},
      {DType::kFloat16, DType::kInt16, DType::kFloat32},
      {DType::kFloat16, DType::kInt32, DType::kFloat64},
      {DType::kFloat32, DType::kInt16, DType::kFloat32},
      {DType::kFloat32, DType::kInt32, DType::kFloat64},
      {DType::kFloat32, DType::kInt64, DType::kFloat64},
      {DType::kFloat32, DType::kFloat64, DType::kFloat64},
      {DType::kFloat16, DType::kFloat32, DType::kFloat32},
      {DType::kBFloat16, DType::kFloat16, DType::kFloat32},
      {DType::kBool, DType::kBool, DType::kBool},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(promote_types(c.a, c.b), c.want) << c.a << " + " << c.b;
    EXPECT_EQ(promote_types(c.b, c.a), c.want) << c.b << " + " << c.a;
  }
}

TEST(DType, WeakScalarsNEP50) {
  EXPECT_EQ(promote_with_scalar(DType::kInt8, ScalarKind::kInt), DType::kInt8);
  EXPECT_EQ(promote_with_scalar(DType::kFloat16, ScalarKind::kFloat), DType::kFloat16);
  EXPECT_EQ(promote_with_scalar(DType::kInt32, ScalarKind::kFloat), DType::kFloat32);
  EXPECT_EQ(promote_with_scalar(DType::kBool, ScalarKind::kInt), DType::kInt64);
  EXPECT_EQ(promote_with_scalar(DType::kUInt8, ScalarKind::kBool), DType::kUInt8);
}

TEST(DType, DefaultFloatSwitches) {
  EXPECT_EQ(default_float_dtype(), DType::kFloat32);
  set_default_float_dtype(DType::kFloat64);
  EXPECT_EQ(np::zeros({2}).dtype(), DType::kFloat64);
  set_default_float_dtype(DType::kFloat32);
  EXPECT_EQ(np::zeros({2}).dtype(), DType::kFloat32);
  expect_error(ErrorKind::kTypeError, [] { set_default_float_dtype(DType::kInt32); });
}

TEST(Float16, ConversionRoundsToNearestEven) {
  // Hand-computed IEEE binary16 encodings.
  EXPECT_EQ(float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(float16(-2.0f).bits, 0xc000);
  EXPECT_EQ(float16(65504.0f).bits, 0x7bff);                // largest finite
  EXPECT_EQ(float16(65520.0f).bits, 0x7c00);                // rounds to inf
  EXPECT_EQ(float16(5.960464477539063e-08f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(float16(0.1f).bits, 0x2e66);
  EXPECT_EQ(float16(1.0009765625f).bits, 0x3c01);   // 1 + 2^-10 exact
  EXPECT_EQ(float16(1.00048828125f).bits, 0x3c00);  // halfway: ties to even (down)
  EXPECT_EQ(float16(1.00146484375f).bits, 0x3c02);  // halfway: ties to even (up)
  EXPECT_TRUE(std::isnan(float(float16(NAN))));
  EXPECT_EQ(float(float16(0.5f)), 0.5f);
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(float(bfloat16(3.140625f)), 3.140625f);
  EXPECT_EQ(bfloat16(1.00390625f).bits, 0x3f80);  // halfway between 1 and 1+2^-7: to even
}

TEST(Shape, ScalarZeroSizeAndUnknown) {
  Shape scalar;
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.size(), 1);
  EXPECT_EQ(scalar.str(), "()");
  Shape empty{3, 0, 2};
  EXPECT_EQ(empty.size(), 0);
  EXPECT_TRUE(empty.is_known());
  EXPECT_FALSE(Shape::unknown().is_known());
  EXPECT_NE(Shape::unknown(), scalar);
  EXPECT_EQ(Shape{5}.str(), "(5,)");
  Shape big;  // past the inline capacity
  for (int i = 0; i < 10; ++i) big.push_back(i + 1);
  Shape copy = big;
  EXPECT_EQ(copy, big);
  EXPECT_EQ(copy[9], 10);
  EXPECT_EQ(contiguous_strides(Shape{2, 3, 4}), (Shape{12, 4, 1}));
}

TEST(Shape, Broadcasting) {
  EXPECT_EQ(broadcast_shapes({3, 1}, {1, 4}, "t"), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {2, 2}, "t"), (Shape{2, 2}));
  EXPECT_EQ(broadcast_shapes({0, 1}, {1, 5}, "t"), (Shape{0, 5}));
  expect_error(
      ErrorKind::kValueError,
      [] {
        broadcast_shapes({2, 3}, {4}, "add");
      },
      "[add]");
  EXPECT_EQ(normalize_axis(-1, 3, "t"), 2);
  expect_error(
      ErrorKind::kAxisError, [] { normalize_axis(3, 3, "sum"); }, "axis 3");
}

TEST(Shape, CheckedSize) {
  EXPECT_EQ(checked_size({2, 3, 4}, 4, "t"), 24);
  EXPECT_EQ(checked_size({}, 8, "t"), 1);
  EXPECT_EQ(checked_size({0, int64_t{1} << 40}, 8, "t"), 0);
  // As NumPy: the product of the nonzero dims is checked even when another dim is 0.
  expect_error(
      ErrorKind::kValueError,
      [] {
        checked_size({int64_t{1} << 62, int64_t{1} << 62, 0}, 1, "reshape");
      },
      "array is too big");
  expect_error(
      ErrorKind::kValueError,
      [] {
        checked_size({int64_t{1} << 31, int64_t{1} << 31}, 4, "ones");
      },
      "[ones]");
  expect_error(
      ErrorKind::kValueError,
      [] {
        checked_size({3, -1}, 4, "t");
      },
      "negative");
}

TEST(Storage, UnservableSizesAreMemoryErrors) {
  // Above 2**62 bytes nothing is asked of the system allocator; 4 TB is asked and refused.
  // Either way: MemoryError, and the pool still serves afterwards.
  expect_error(
      ErrorKind::kMemoryError, [] { Storage::allocate((std::size_t{1} << 62) + 64, Device{}); },
      "unable to allocate");
  expect_error(
      ErrorKind::kMemoryError, [] { NDArray a({int64_t{1} << 40}, DType::kFloat32); },
      "unable to allocate");
  NDArray ok({1000}, DType::kFloat32);
  EXPECT_EQ(ok.size(), 1000);
}

TEST(Storage, PoolReusesAlignedBlocks) {
  void* first;
  {
    NDArray a({1000}, DType::kFloat32);
    first = a.raw_data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kAlignment, 0u);
  }
  NDArray b({1000}, DType::kFloat32);  // same size class: the cached block comes back
  EXPECT_EQ(b.raw_data(), first);
  NDArray z({0}, DType::kFloat64);
  EXPECT_TRUE(z.defined());
  // No GPU: a build without CUDA says it has none (NotImplementedError), a CUDA build on a
  // machine without one says gpu(0) is not there (ValueError).
  if (num_gpus() == 0) {
    const ErrorKind kind = gpu_unavailable_reason() == "ndx was built without CUDA"
                               ? ErrorKind::kNotImplementedError
                               : ErrorKind::kValueError;
    expect_error(
        kind, [] { NDArray g({2}, DType::kFloat32, gpu(0)); }, "gpu(0)");
  }
  expect_error(
      ErrorKind::kValueError,
      [] {
        NDArray n({2, -1});
      },
      "negative");
}

TEST(NDArray, ViewsShareMemory) {
  NDArray a = np::arange(6).reshape({2, 3});  // a view of arange's result
  EXPECT_EQ(a.dtype(), DType::kInt64);
  NDArray t = a.transpose();
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_TRUE(t.shares_storage_with(a));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  NDArray row = a[1];
  EXPECT_EQ(row.to_vector<int64_t>(), (std::vector<int64_t>{3, 4, 5}));
  NDArray col = a.slice(1, 1, std::nullopt);
  EXPECT_EQ(col.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 4, 5}));
  NDArray rev = a.slice(1, std::nullopt, std::nullopt, -1);
  EXPECT_EQ(rev.to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 0, 5, 4, 3}));
  NDArray step = np::arange(10).slice(0, 1, 8, 3);
  EXPECT_EQ(step.to_vector<int64_t>(), (std::vector<int64_t>{1, 4, 7}));
  NDArray none = np::arange(5).slice(0, 4, 1);
  EXPECT_EQ(none.size(), 0);
  // Writing through a view changes the base.
  a.slice(1, 0, 1).fill(-1);
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{-1, 1, 2, -1, 4, 5}));
  NDArray b = np::arange(3).broadcast_to({2, 3});
  EXPECT_EQ(b.strides()[0], 0);
  EXPECT_EQ(b.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  // reshape of a non-contiguous view copies.
  NDArray r = t.reshape({6});
  EXPECT_FALSE(r.shares_storage_with(a));
  EXPECT_EQ(r.to_vector<int64_t>(), (std::vector<int64_t>{-1, -1, 1, 4, 2, 5}));
  EXPECT_EQ(a.reshape({-1, 2}).shape(), (Shape{3, 2}));
  EXPECT_EQ(a.expand_dims(0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(a.swapaxes(0, 1).shape(), (Shape{3, 2}));
}

TEST(NDArray, BadViewsRaise) {
  NDArray a = np::zeros({2, 3});
  expect_error(
      ErrorKind::kValueError, [&] { a.reshape({4}); }, "cannot reshape");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        a.reshape({-1, -1});
      },
      "one unknown");
  expect_error(
      ErrorKind::kValueError, [&] { a.transpose({0}); }, "axes don't match");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        a.transpose({0, 0});
      },
      "repeated axis");
  expect_error(
      ErrorKind::kIndexError, [&] { a[2]; }, "out of bounds");
  expect_error(
      ErrorKind::kIndexError, [&] { a[0][0][0]; }, "0-dimensional");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        a.broadcast_to({3, 3});
      },
      "broadcast");
  expect_error(ErrorKind::kValueError, [&] { a.broadcast_to({3}); });
  expect_error(
      ErrorKind::kValueError, [&] { a.slice(0, 0, 1, 0); }, "step");
  expect_error(ErrorKind::kAxisError, [&] { a.slice(2, 0, 1); });
  expect_error(ErrorKind::kTypeError, [&] { a.data<int32_t>(); });
  expect_error(
      ErrorKind::kValueError, [&] { a.item<float>(); }, "size 1");
}

// NumPy's WRITEABLE and OWNDATA flags: a read-only array refuses writes; views of a read-only
// owner are read-only for good; copies are writeable (and own their data) again.
TEST(NDArray, ReadOnlyArraysRefuseWrites) {
  NDArray a = np::arange(6).reshape({2, 3}).copy();
  EXPECT_TRUE(a.owns_data());
  EXPECT_FALSE(a.reshape({6}).owns_data());
  a.set_writeable(false);
  EXPECT_FALSE(a.writeable());
  expect_error(
      ErrorKind::kValueError, [&] { a.fill(1); }, "read-only");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        a.assign(np::zeros({2, 3}, DType::kInt64));
      },
      "read-only");
  expect_error(
      ErrorKind::kValueError, [&] { a += np::arange(3); }, "output array is read-only");
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));  // untouched
  for (NDArray v : {a[1], a.transpose(), a.slice(1, 1, std::nullopt), a.broadcast_to({4, 2, 3}),
                    a.expand_dims(0), a.reshape({6})}) {
    EXPECT_FALSE(v.writeable());
    expect_error(
        ErrorKind::kValueError, [&] { v.set_writeable(true); }, "is read-only");
  }
  EXPECT_TRUE(a.copy().writeable());
  EXPECT_EQ((a + 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));  // reads
  a.set_writeable(true);  // the array itself may be made writeable again
  a.fill(7);
  EXPECT_EQ(a[0].to_vector<int64_t>(), (std::vector<int64_t>{7, 7, 7}));
  NDArray view = a.reshape({3, 2});  // a read-only view of a writeable owner: its views can
  view.set_writeable(false);         // be made writeable again, as NumPy allows
  NDArray inner = view[1];
  EXPECT_FALSE(inner.writeable());
  inner.set_writeable(true);
  inner.fill(0);
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{7, 7, 0, 0, 7, 7}));
}

TEST(NDArray, CopyAstypeAssign) {
  NDArray f = NDArray::from_vector<float>({-1.5f, 0.0f, 2.7f, 300.0f}, {4});
  EXPECT_EQ(f.astype(DType::kInt32).to_vector<int32_t>(), (std::vector<int32_t>{-1, 0, 2, 300}));
  EXPECT_EQ(f.astype(DType::kBool).to_vector<int>(), (std::vector<int>{1, 0, 1, 1}));
  EXPECT_EQ(f.astype(DType::kFloat16).to_vector<float>(),
            (std::vector<float>{-1.5f, 0.0f, 2.69921875f, 300.0f}));
  NDArray c = f.copy();
  EXPECT_FALSE(c.shares_storage_with(f));
  c.fill(7);
  EXPECT_EQ(f.to_vector<float>()[0], -1.5f);
  // Overlapping assignment reads before it writes: a[1:] = a[:-1].
  NDArray a = np::arange(5);
  a.slice(0, 1, std::nullopt).assign(a.slice(0, 0, -1));
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 2, 3}));
  // Broadcasting assignment.
  NDArray m = np::zeros({2, 3}, DType::kInt32);
  m.assign(NDArray::from_vector<int32_t>({1, 2, 3}, {3}));
  EXPECT_EQ(m.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 1, 2, 3}));
  expect_error(ErrorKind::kValueError, [&] { m.assign(np::zeros({2})); });
  // Out-of-range float -> int saturates instead of being undefined.
  NDArray big = NDArray::from_vector<double>({1e30, -1e30, NAN}, {3});
  EXPECT_EQ(big.astype(DType::kInt8).to_vector<int>(), (std::vector<int>{127, -128, 0}));
  EXPECT_EQ(NDArray::scalar(2.5).item<double>(), 2.5);
  EXPECT_EQ(np::arange(6).reshape({2, 3}).at<int>({1, 2}), 5);
}

TEST(NDArray, PrintsLikeNumPy) {
  // Expected strings are NumPy 2's str()/repr() output for the same arrays.
  NDArray f = NDArray::from_vector<float>({1.5f, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(f.str(), "[[1.5 2.  3. ]\n [4.  5.  6. ]]");
  EXPECT_EQ(f.repr(), "array([[1.5, 2. , 3. ],\n       [4. , 5. , 6. ]], dtype=float32)");
  EXPECT_EQ(np::ones({2}).str(), "[1. 1.]");
  EXPECT_EQ(NDArray::from_vector<double>({1e-5, 1}, {2}).str(), "[1.e-05 1.e+00]");
  EXPECT_EQ(NDArray::from_vector<double>({0.1, 0.25}, {2}).repr(), "array([0.1 , 0.25])");
  EXPECT_EQ(NDArray::from_vector<bool>({true, false}, {2}).str(), "[ True False]");
  EXPECT_EQ(NDArray::scalar(3.0, DType::kFloat64).str(), "3.0");
  EXPECT_EQ(NDArray::scalar(3.0, DType::kFloat32).repr(), "array(3., dtype=float32)");
  EXPECT_EQ(np::zeros({2, 0}).str(), "[]");
  EXPECT_EQ(np::zeros({2, 0}).repr(), "array([], shape=(2, 0), dtype=float32)");
  EXPECT_EQ(np::arange(3).repr(), "array([0, 1, 2])");
  EXPECT_EQ(NDArray::from_vector<int32_t>({-5, 10}, {2}).repr(), "array([-5, 10], dtype=int32)");
  EXPECT_EQ(NDArray::from_vector<float>({NAN, 1.0f, -INFINITY}, {3}).str(), "[ nan   1. -inf]");
  EXPECT_EQ(np::arange(2 * 2 * 2).reshape({2, 2, 2}).str(),
            "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
  EXPECT_EQ(np::arange(2000).str(), "[   0    1    2 ... 1997 1998 1999]");
  EXPECT_EQ(NDArray::from_vector<float>({0.1f}, {1}).astype(DType::kFloat16).str(), "[0.1]");
  std::ostringstream os;
  os << np::arange(3);
  EXPECT_EQ(os.str(), "[0 1 2]");
  // Long rows wrap at 75 columns.
  std::string wrapped = np::arange(30).str();
  EXPECT_EQ(wrapped,
            "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
            " 24 25 26 27 28 29]");
}

}  // namespace
}  // namespace ndx
