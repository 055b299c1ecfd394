// The C++ API: NumPy's names over the registered ops, usable without Python.
//
//   auto a = ndx::np::ones({2, 3});
//   auto b = ndx::np::arange(6).reshape({2, 3});
//   std::cout << ndx::np::sum(a + b * 2.0, 1) << "\n";
#pragma once
#include <initializer_list>
#include <optional>
#include <vector>

#include "ndx/ndarray.h"

namespace ndx::np {

using OptDType = std::optional<DType>;

// ---- creation (dtype None: float32, ndx's default float) ----
NDArray zeros(const Shape& shape, OptDType dtype = std::nullopt, Device device = cpu());
NDArray ones(const Shape& shape, OptDType dtype = std::nullopt, Device device = cpu());
NDArray empty(const Shape& shape, OptDType dtype = std::nullopt, Device device = cpu());
NDArray full(const Shape& shape, double fill_value, OptDType dtype = std::nullopt,
             Device device = cpu());
NDArray zeros_like(const NDArray& a);
NDArray ones_like(const NDArray& a);
// arange(stop) and arange(start, stop, step): integer arguments give int64, as NumPy does;
// float arguments give the default float dtype.
NDArray arange_int64(int64_t start, int64_t stop, int64_t step);
template <typename I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
NDArray arange(I stop) {
  return arange_int64(0, stop, 1);
}
template <typename I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
NDArray arange(I start, I stop, I step = 1) {
  return arange_int64(start, stop, step);
}
NDArray arange(double start, double stop, double step = 1, OptDType dtype = std::nullopt);
NDArray linspace(double start, double stop, int64_t num = 50, bool endpoint = true,
                 OptDType dtype = std::nullopt);
NDArray eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0,
            OptDType dtype = std::nullopt);
template <typename T>
NDArray array(const std::vector<T>& values, std::optional<Shape> shape = std::nullopt) {
  return NDArray::from_vector(values, shape ? *shape : Shape{static_cast<int64_t>(values.size())});
}
template <typename T>
NDArray array(std::initializer_list<T> values) {
  return array(std::vector<T>(values));
}

// ---- elementwise unary ----
NDArray negative(const NDArray& x);
NDArray abs(const NDArray& x);
NDArray absolute(const NDArray& x);
NDArray sign(const NDArray& x);
NDArray sqrt(const NDArray& x);
NDArray square(const NDArray& x);
NDArray exp(const NDArray& x);
NDArray log(const NDArray& x);
NDArray sin(const NDArray& x);
NDArray cos(const NDArray& x);
NDArray tanh(const NDArray& x);
NDArray floor(const NDArray& x);
NDArray ceil(const NDArray& x);
NDArray logical_not(const NDArray& x);

// ---- elementwise binary (broadcasting, NumPy 2 promotion) ----
#define NDX_NP_BINARY(name) NDArray name(const NDArray& x1, const NDArray& x2);
NDX_NP_BINARY(add)
NDX_NP_BINARY(subtract)
NDX_NP_BINARY(multiply)
NDX_NP_BINARY(true_divide)
NDX_NP_BINARY(divide)
NDX_NP_BINARY(floor_divide)
NDX_NP_BINARY(mod)
NDX_NP_BINARY(remainder)
NDX_NP_BINARY(power)
NDX_NP_BINARY(maximum)
NDX_NP_BINARY(minimum)
NDX_NP_BINARY(equal)
NDX_NP_BINARY(not_equal)
NDX_NP_BINARY(less)
NDX_NP_BINARY(less_equal)
NDX_NP_BINARY(greater)
NDX_NP_BINARY(greater_equal)
#undef NDX_NP_BINARY

// A C++ number as an operand: a 0-d array typed by NEP 50's weak-scalar rule against `like`
// (float32 array + 2.5 stays float32; int8 array + 1 stays int8).
template <typename S>
NDArray weak_scalar(S value, const NDArray& like) {
  ScalarKind kind = std::is_same_v<S, bool> ? ScalarKind::kBool
                    : std::is_integral_v<S> ? ScalarKind::kInt
                                            : ScalarKind::kFloat;
  return NDArray::scalar(static_cast<double>(value), promote_with_scalar(like.dtype(), kind),
                         like.device());
}

// ---- reductions ----
NDArray sum(const NDArray& a, std::optional<Shape> axis = std::nullopt, bool keepdims = false,
            OptDType dtype = std::nullopt);
NDArray sum(const NDArray& a, int64_t axis, bool keepdims = false);
NDArray mean(const NDArray& a, std::optional<Shape> axis = std::nullopt, bool keepdims = false,
             OptDType dtype = std::nullopt);
NDArray mean(const NDArray& a, int64_t axis, bool keepdims = false);
NDArray prod(const NDArray& a, std::optional<Shape> axis = std::nullopt, bool keepdims = false,
             OptDType dtype = std::nullopt);
NDArray max(const NDArray& a, std::optional<Shape> axis = std::nullopt, bool keepdims = false);
NDArray max(const NDArray& a, int64_t axis, bool keepdims = false);
NDArray min(const NDArray& a, std::optional<Shape> axis = std::nullopt, bool keepdims = false);
NDArray min(const NDArray& a, int64_t axis, bool keepdims = false);
NDArray argmax(const NDArray& a, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
NDArray argmin(const NDArray& a, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);

// ---- shapes ----
NDArray reshape(const NDArray& a, const Shape& newshape);
NDArray transpose(const NDArray& a, std::optional<Shape> axes = std::nullopt);
NDArray expand_dims(const NDArray& a, int64_t axis);
NDArray squeeze(const NDArray& a, std::optional<Shape> axis = std::nullopt);
NDArray broadcast_to(const NDArray& a, const Shape& shape);
NDArray swapaxes(const NDArray& a, int64_t axis1, int64_t axis2);
NDArray concatenate(const std::vector<NDArray>& arrays, std::optional<int64_t> axis = 0);
NDArray stack(const std::vector<NDArray>& arrays, int64_t axis = 0);
std::vector<NDArray> split(const NDArray& a, int64_t sections, int64_t axis = 0);
std::vector<NDArray> split(const NDArray& a, const std::vector<int64_t>& indices, int64_t axis = 0);

// ---- linear algebra (OpenBLAS) ----
NDArray matmul(const NDArray& a, const NDArray& b);
NDArray dot(const NDArray& a, const NDArray& b);

}  // namespace ndx::np

namespace ndx {

// Arithmetic operators, as NumPy's: broadcasting, promotion, weak scalars.
NDArray operator-(const NDArray& x);
#define NDX_NP_OPERATOR(op, fn)                                                           \
  inline NDArray operator op(const NDArray& a, const NDArray& b) { return np::fn(a, b); } \
  template <typename S, typename = std::enable_if_t<std::is_arithmetic_v<S>>>             \
  NDArray operator op(const NDArray& a, S s) {                                            \
    return np::fn(a, np::weak_scalar(s, a));                                              \
  }                                                                                       \
  template <typename S, typename = std::enable_if_t<std::is_arithmetic_v<S>>>             \
  NDArray operator op(S s, const NDArray& a) {                                            \
    return np::fn(np::weak_scalar(s, a), a);                                              \
  }
NDX_NP_OPERATOR(+, add)
NDX_NP_OPERATOR(-, subtract)
NDX_NP_OPERATOR(*, multiply)
NDX_NP_OPERATOR(/, true_divide)
NDX_NP_OPERATOR(%, mod)
#undef NDX_NP_OPERATOR

// In-place operators write into `a` (its dtype is kept, as NumPy's a += b with
// casting='same_kind').
NDArray& operator+=(NDArray& a, const NDArray& b);
NDArray& operator-=(NDArray& a, const NDArray& b);
NDArray& operator*=(NDArray& a, const NDArray& b);
NDArray& operator/=(NDArray& a, const NDArray& b);
template <typename S, typename = std::enable_if_t<std::is_arithmetic_v<S>>>
NDArray& operator+=(NDArray& a, S s) {
  return a += np::weak_scalar(s, a);
}
template <typename S, typename = std::enable_if_t<std::is_arithmetic_v<S>>>
NDArray& operator-=(NDArray& a, S s) {
  return a -= np::weak_scalar(s, a);
}
template <typename S, typename = std::enable_if_t<std::is_arithmetic_v<S>>>
NDArray& operator*=(NDArray& a, S s) {
  return a *= np::weak_scalar(s, a);
}
template <typename S, typename = std::enable_if_t<std::is_arithmetic_v<S>>>
NDArray& operator/=(NDArray& a, S s) {
  return a /= np::weak_scalar(s, a);
}

}  // namespace ndx
