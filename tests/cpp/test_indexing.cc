// ndx::getitem / setitem in C++: basic keys give views, array keys give copies laid out as
// NumPy lays them out (expected values computed by hand).
#include "ndx/indexing.h"
#include "test_util.h"

namespace ndx {
namespace {
using test::expect_error;
using I = IndexItem;

NDArray idx(std::vector<int64_t> v) {
  return NDArray::from_vector(v, Shape{static_cast<int64_t>(v.size())});
}

TEST(Indexing, BasicKeysAreViews) {
  NDArray a = np::arange(24).reshape({2, 3, 4});
  NDArray v = getitem(a, {I::integer(1), I::slice(std::nullopt, std::nullopt, 2), I::newaxis()});
  EXPECT_EQ(v.shape(), (Shape{2, 1, 4}));  // rows 0 and 2 of a[1], with a new axis
  EXPECT_TRUE(v.shares_storage_with(a));
  EXPECT_EQ(v.to_vector<int64_t>(), (std::vector<int64_t>{12, 13, 14, 15, 20, 21, 22, 23}));
  EXPECT_EQ(getitem(a, {I::ellipsis(), I::integer(-1)}).to_vector<int64_t>(),
            (std::vector<int64_t>{3, 7, 11, 15, 19, 23}));
}

TEST(Indexing, IntegerArraysAndMasks) {
  NDArray a = np::arange(12).reshape({3, 4});
  // a[[2, 0]] -> rows 2 and 0
  EXPECT_EQ(getitem(a, {I::array_index(idx({2, 0}))}).to_vector<int64_t>(),
            (std::vector<int64_t>{8, 9, 10, 11, 0, 1, 2, 3}));
  // a[[0, 2], [1, 3]] -> elements (0,1) and (2,3)
  EXPECT_EQ(
      getitem(a, {I::array_index(idx({0, 2})), I::array_index(idx({1, 3}))}).to_vector<int64_t>(),
      (std::vector<int64_t>{1, 11}));
  // a[:, [3, 0]] keeps the column dim in place
  NDArray cols = getitem(a, {I::slice(std::nullopt, std::nullopt), I::array_index(idx({3, 0}))});
  EXPECT_EQ(cols.shape(), (Shape{3, 2}));
  EXPECT_EQ(cols.to_vector<int64_t>(), (std::vector<int64_t>{3, 0, 7, 4, 11, 8}));
  // a[a > 6]
  NDArray mask = np::greater(a, NDArray::scalar(6, DType::kInt64));
  EXPECT_EQ(getitem(a, {I::array_index(mask)}).to_vector<int64_t>(),
            (std::vector<int64_t>{7, 8, 9, 10, 11}));
  // a[a % 2 == 1] = -1
  NDArray b = a.copy();
  NDArray odd =
      np::equal(np::mod(b, NDArray::scalar(2, DType::kInt64)), NDArray::scalar(1, DType::kInt64));
  setitem(b, {I::array_index(odd)}, NDArray::scalar(-1, DType::kInt64));
  EXPECT_EQ(b.to_vector<int64_t>(),
            (std::vector<int64_t>{0, -1, 2, -1, 4, -1, 6, -1, 8, -1, 10, -1}));
  // a[[0, 1], 1:3] = [[10, 20]] broadcasts over the selected rows
  NDArray c = a.copy();
  setitem(c, {I::array_index(idx({0, 1})), I::slice(1, 3)},
          NDArray::from_vector<int64_t>({10, 20}, {1, 2}));
  EXPECT_EQ(c.to_vector<int64_t>(),
            (std::vector<int64_t>{0, 10, 20, 3, 4, 10, 20, 7, 8, 9, 10, 11}));
}

TEST(Indexing, BadKeysRaise) {
  NDArray a = np::zeros({3, 4});
  expect_error(
      ErrorKind::kIndexError, [&] { getitem(a, {I::array_index(idx({3}))}); }, "out of bounds");
  expect_error(
      ErrorKind::kIndexError, [&] { getitem(a, {I::array_index(np::ones({2}))}); },
      "integer (or boolean)");
  expect_error(
      ErrorKind::kIndexError, [&] { getitem(a, {I::array_index(np::zeros({2}, DType::kBool))}); },
      "boolean index did not match");
  expect_error(
      ErrorKind::kIndexError,
      [&] {
        getitem(a, {I::array_index(idx({0, 1})), I::array_index(idx({0, 1, 2}))});
      },
      "shape mismatch");
  expect_error(
      ErrorKind::kIndexError,
      [&] {
        getitem(a, {I::integer(0), I::integer(0), I::integer(0)});
      },
      "too many indices");
  expect_error(
      ErrorKind::kIndexError,
      [&] {
        getitem(a, {I::ellipsis(), I::ellipsis()});
      },
      "single ellipsis");
}

}  // namespace
}  // namespace ndx
