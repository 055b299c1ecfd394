// Element types: one table of traits, NumPy 2 promotion (NEP 50), and the two 16-bit floats.
#pragma once
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <ostream>
#include <string_view>
#include <type_traits>

#include "ndx/error.h"

namespace ndx {

enum class DType : int8_t {
  kUnknown = -1,
  kBool = 0,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,   // two float32: real, imaginary (std::complex<float>'s layout, as NumPy's)
  kComplex128,  // two float64
};
inline constexpr int kNumDTypes = 15;

enum class DTypeKind : char {
  kBool = 'b',
  kSigned = 'i',
  kUnsigned = 'u',
  kFloat = 'f',
  kComplex = 'c'
};

struct DTypeInfo {
  std::string_view name;  // NumPy's name: "float32"
  int size;               // bytes
  DTypeKind kind;
};

const DTypeInfo& dtype_info(DType t);
inline std::string_view dtype_name(DType t) { return dtype_info(t).name; }
inline int dtype_size(DType t) { return dtype_info(t).size; }
inline bool is_float(DType t) {
  return t != DType::kUnknown && dtype_info(t).kind == DTypeKind::kFloat;
}
inline bool is_integer(DType t) {
  if (t == DType::kUnknown) return false;
  auto k = dtype_info(t).kind;
  return k == DTypeKind::kSigned || k == DTypeKind::kUnsigned;
}
inline bool is_unsigned(DType t) {
  return t != DType::kUnknown && dtype_info(t).kind == DTypeKind::kUnsigned;
}
inline bool is_complex(DType t) { return t == DType::kComplex64 || t == DType::kComplex128; }
// Float or complex: the dtypes NumPy calls inexact.
inline bool is_inexact(DType t) { return is_float(t) || is_complex(t); }
// complex64 -> float32, complex128 -> float64; other dtypes are returned unchanged.
inline DType real_dtype(DType t) {
  return t == DType::kComplex64 ? DType::kFloat32 : t == DType::kComplex128 ? DType::kFloat64 : t;
}
// The complex dtype holding a float dtype's values: float64 -> complex128, the others
// (float16, bfloat16, float32) -> complex64, as NumPy has no smaller complex type.
inline DType complex_dtype(DType f) {
  if (is_complex(f)) return f;
  return f == DType::kFloat64 ? DType::kComplex128 : DType::kComplex64;
}
// Parses NumPy's names ("float32", "int64", "bool", "bfloat16"); throws TypeError otherwise.
DType dtype_from_name(std::string_view name);
std::ostream& operator<<(std::ostream& os, DType t);

// NumPy 2 promotion of two array dtypes: int8 + uint8 -> int16, int64 + uint64 -> float64,
// float16 + int16 -> float32, bfloat16 + float16 -> float32; with a complex dtype the result
// is the complex type of the promoted component floats (int32 + complex64 -> complex128).
DType promote_types(DType a, DType b);
// NEP 50: a Python scalar is "weak" and only lifts the category (bool < int < float <
// complex). A Python complex with a real array gives the complex type of the array's float
// dtype (of the default float dtype for integer and bool arrays).
enum class ScalarKind { kBool, kInt, kFloat, kComplex };
DType promote_with_scalar(DType array_dtype, ScalarKind scalar);

// NumPy's casting rules. kSafe: every value survives (can_cast(a, b) iff promote_types(a, b)
// is b); kSameKind: safe, or towards a kind at least as high (bool < unsigned < signed < float
// < complex),
// any size; kNo / kEquiv: the same dtype (ndx has one byte order).
enum class Casting : int8_t { kNo, kEquiv, kSafe, kSameKind, kUnsafe };
bool can_cast(DType from, DType to, Casting casting = Casting::kSafe);
// "no", "equiv", "safe", "same_kind", "unsafe"; anything else is a ValueError naming `op`.
Casting casting_from_name(std::string_view name, std::string_view op);
std::string_view casting_name(Casting casting);

// The float dtype ndx picks where NumPy would pick float64 (float32 unless switched).
DType default_float_dtype();
void set_default_float_dtype(DType t);
// The float dtype an integer or bool input turns into for math such as sqrt or true_divide.
// Complex dtypes stay complex.
inline DType float_result_type(DType t) { return is_inexact(t) ? t : default_float_dtype(); }

// ---- 16-bit floats: storage types that compute in float ----
// The dtype values of t are computed and accumulated in: float32 for the 16-bit floats
// (float16, bfloat16), t itself for every other dtype.
inline DType compute_dtype(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 ? DType::kFloat32 : t;
}
namespace detail {
uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(x >> 16);
}
inline float bf16_bits_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

// v as a float rounded to odd: an inexact result keeps its last bit set. Rounding that float
// again to a 16-bit float gives v's correctly rounded value (the float keeps 13 bits more than
// half and 16 more than bfloat16, at least the 2 that round-to-odd needs); rounding v to the
// nearest float first rounded twice, and 50 in a million float64 -> float16 casts of values in
// [-100, 100] were an ulp off NumPy's, which rounds a double to half in one step.
template <typename T>
inline float narrowing_float(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    const double d = static_cast<double>(v);
    const float f = static_cast<float>(d);
    if (static_cast<double>(f) == d || d != d) return f;
    uint32_t bits = std::bit_cast<uint32_t>(f);
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) --bits;  // toward zero (and inf to max)
    return std::bit_cast<float>(bits | 1u);
  }
}
}  // namespace detail

struct float16 {
  uint16_t bits = 0;
  float16() = default;
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  float16(T v) : bits(detail::float_to_half_bits(detail::narrowing_float(v))) {}
  operator float() const { return detail::half_bits_to_float(bits); }
};

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  bfloat16(T v) : bits(detail::float_to_bf16_bits(detail::narrowing_float(v))) {}
  operator float() const { return detail::bf16_bits_to_float(bits); }
};

// The type kernels do arithmetic in: float for the 16-bit floats, the type itself otherwise.
template <typename T>
struct ComputeType {
  using type = T;
};
template <>
struct ComputeType<float16> {
  using type = float;
};
template <>
struct ComputeType<bfloat16> {
  using type = float;
};
template <typename T>
using compute_t = typename ComputeType<T>::type;

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;
template <typename T>
inline constexpr bool is_complex_v = false;
template <typename T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

template <typename T>
struct DTypeOf;
#define NDX_DTYPE_OF(CT, ENUM)                  \
  template <>                                   \
  struct DTypeOf<CT> {                          \
    static constexpr DType value = DType::ENUM; \
  };
NDX_DTYPE_OF(bool, kBool)
NDX_DTYPE_OF(int8_t, kInt8)
NDX_DTYPE_OF(int16_t, kInt16)
NDX_DTYPE_OF(int32_t, kInt32)
NDX_DTYPE_OF(int64_t, kInt64)
NDX_DTYPE_OF(uint8_t, kUInt8)
NDX_DTYPE_OF(uint16_t, kUInt16)
NDX_DTYPE_OF(uint32_t, kUInt32)
NDX_DTYPE_OF(uint64_t, kUInt64)
NDX_DTYPE_OF(float16, kFloat16)
NDX_DTYPE_OF(bfloat16, kBFloat16)
NDX_DTYPE_OF(float, kFloat32)
NDX_DTYPE_OF(double, kFloat64)
NDX_DTYPE_OF(complex64, kComplex64)
NDX_DTYPE_OF(complex128, kComplex128)
#undef NDX_DTYPE_OF
template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

[[noreturn]] void unsupported_dtype(const char* where, DType t);

#define NDX_DTYPE_CASE(ENUM, CT, T, ...) \
  case ::ndx::DType::ENUM: {             \
    using T = CT;                        \
    __VA_ARGS__;                         \
    break;                               \
  }

// Runs the body with T bound to the C++ type of `dtype`, for every real dtype: kernels that
// take complex dtypes opt in with NDX_DTYPE_SWITCH_COMPLEX; the others raise a TypeError.
#define NDX_DTYPE_SWITCH(dtype, T, ...)                        \
  switch (dtype) {                                             \
    NDX_DTYPE_CASE(kBool, bool, T, __VA_ARGS__)                \
    NDX_DTYPE_CASE(kInt8, int8_t, T, __VA_ARGS__)              \
    NDX_DTYPE_CASE(kInt16, int16_t, T, __VA_ARGS__)            \
    NDX_DTYPE_CASE(kInt32, int32_t, T, __VA_ARGS__)            \
    NDX_DTYPE_CASE(kInt64, int64_t, T, __VA_ARGS__)            \
    NDX_DTYPE_CASE(kUInt8, uint8_t, T, __VA_ARGS__)            \
    NDX_DTYPE_CASE(kUInt16, uint16_t, T, __VA_ARGS__)          \
    NDX_DTYPE_CASE(kUInt32, uint32_t, T, __VA_ARGS__)          \
    NDX_DTYPE_CASE(kUInt64, uint64_t, T, __VA_ARGS__)          \
    NDX_DTYPE_CASE(kFloat16, ::ndx::float16, T, __VA_ARGS__)   \
    NDX_DTYPE_CASE(kBFloat16, ::ndx::bfloat16, T, __VA_ARGS__) \
    NDX_DTYPE_CASE(kFloat32, float, T, __VA_ARGS__)            \
    NDX_DTYPE_CASE(kFloat64, double, T, __VA_ARGS__)           \
    default:                                                   \
      ::ndx::unsupported_dtype(__func__, dtype);               \
  }

// Every dtype, complex64 and complex128 included.
#define NDX_DTYPE_SWITCH_COMPLEX(dtype, T, ...)                    \
  switch (dtype) {                                                 \
    NDX_DTYPE_CASE(kComplex64, ::ndx::complex64, T, __VA_ARGS__)   \
    NDX_DTYPE_CASE(kComplex128, ::ndx::complex128, T, __VA_ARGS__) \
    default:                                                       \
      NDX_DTYPE_SWITCH(dtype, T, __VA_ARGS__)                      \
  }

// Only the float dtypes (kernels of ops that are defined for floats only).
#define NDX_FLOAT_SWITCH(dtype, T, ...)                        \
  switch (dtype) {                                             \
    NDX_DTYPE_CASE(kFloat16, ::ndx::float16, T, __VA_ARGS__)   \
    NDX_DTYPE_CASE(kBFloat16, ::ndx::bfloat16, T, __VA_ARGS__) \
    NDX_DTYPE_CASE(kFloat32, float, T, __VA_ARGS__)            \
    NDX_DTYPE_CASE(kFloat64, double, T, __VA_ARGS__)           \
    default:                                                   \
      ::ndx::unsupported_dtype(__func__, dtype);               \
  }

}  // namespace ndx
