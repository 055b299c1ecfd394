// What the engines read off a functor at compile time (the dtypes it takes, its arity and result
// type, how it is built from FunctorArgs) and the compute type a dtype runs in: shared by the CPU
// engines (kernel/elementwise-inl.h, kernel/reduce-inl.h, per SIMD target) and the CUDA ones
// (kernel/cuda/), so both read a functor the same way.
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernel/config.h"
#include "kernel/functor_args.h"
#include "ndx/dtype.h"

namespace ndx::kernel {

// The dtype categories a functor takes (its optional kTypes; every dtype by default).
template <class F>
constexpr unsigned types_of() {
  if constexpr (requires { F::kTypes; })
    return F::kTypes;
  else
    return kAllTypes;
}
template <class C>
constexpr unsigned category_of() {
  if constexpr (std::is_same_v<C, bool>)
    return kBoolTypes;
  else if constexpr (is_complex_v<C>)
    return kComplexTypes;
  else if constexpr (std::is_integral_v<C>)
    return kIntTypes;
  else
    return kFloatTypes;
}

// How many arguments of type C the functor takes (0: none of 1..5).
template <class F, class C>
constexpr int arity() {
  if constexpr (std::is_invocable_v<const F&, C>)
    return 1;
  else if constexpr (std::is_invocable_v<const F&, C, C>)
    return 2;
  else if constexpr (std::is_invocable_v<const F&, C, C, C>)
    return 3;
  else if constexpr (std::is_invocable_v<const F&, C, C, C, C>)
    return 4;
  else if constexpr (std::is_invocable_v<const F&, C, C, C, C, C>)
    return 5;
  else
    return 0;
}

// The functor's result type for sizeof...(I) arguments of type C.
template <class F, class C, size_t... I>
auto result_of(std::index_sequence<I...>)
    -> std::decay_t<decltype(std::declval<const F&>()((static_cast<void>(I), C())...))>;

// A functor with a constructor taking FunctorArgs gets them; others are default-constructed.
template <class F>
inline F make_functor(const FunctorArgs& a) {
  if constexpr (std::is_constructible_v<F, const FunctorArgs&>)
    return F(a);
  else
    return F{};
}

// body(C{}) for the C++ type a compute dtype runs in (float16 and bfloat16 compute as float).
template <class Body>
inline void with_compute_type(DType t, const char* where, Body body) {
  switch (t) {
    case DType::kBool:
      return body(bool{});
    case DType::kInt8:
      return body(int8_t{});
    case DType::kInt16:
      return body(int16_t{});
    case DType::kInt32:
      return body(int32_t{});
    case DType::kInt64:
      return body(int64_t{});
    case DType::kUInt8:
      return body(uint8_t{});
    case DType::kUInt16:
      return body(uint16_t{});
    case DType::kUInt32:
      return body(uint32_t{});
    case DType::kUInt64:
      return body(uint64_t{});
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
      return body(float{});
    case DType::kFloat64:
      return body(double{});
    default:
      unsupported_dtype(where, t);
  }
}

// with_compute_type that also takes complex64 / complex128 (the CPU engines, whose functors
// opt in to complex through kTypes).
template <class Body>
inline void with_any_compute_type(DType t, const char* where, Body body) {
  if (t == DType::kComplex64) return body(complex64{});
  if (t == DType::kComplex128) return body(complex128{});
  with_compute_type(t, where, body);
}

}  // namespace ndx::kernel
