// The scalar half of the vocabulary op functors are written in (select, is_nan, max, exp,
// add with integer wrap-around, ...). It has no namespace of its own: it is included inside
// each kernel namespace (every Highway target of a kernel file, and the CUDA backend), so a
// functor's unqualified calls find these overloads beside the vector ones of kernel/vec-inl.h.
// Needs <cmath>, <cstdint>, <limits>, <type_traits> and kernel/math/wrap.h included before.
#if defined(NDX_KERNEL_MATH_SCALAR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_KERNEL_MATH_SCALAR_INL_H_
#undef NDX_KERNEL_MATH_SCALAR_INL_H_
#else
#define NDX_KERNEL_MATH_SCALAR_INL_H_
#endif

template <class T>
NDX_HD T select(bool c, T a, T b) {
  return c ? a : b;
}
// A complex number is NaN (or infinite) when either part is, as NumPy's isnan / isinf.
template <class T>
NDX_HD bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;
  else if constexpr (is_complex_v<T>)
    return is_nan(x.real()) || is_nan(x.imag());
  else
    return false;
}
template <class T>
NDX_HD bool is_inf(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x == std::numeric_limits<T>::infinity() || x == -std::numeric_limits<T>::infinity();
  else if constexpr (is_complex_v<T>)
    return is_inf(x.real()) || is_inf(x.imag());
  else
    return false;
}

// NumPy orders complex numbers lexicographically, real part first; an ordering between real
// parts holds only when neither imaginary part is NaN (its CLT / CLE / CGT / CGE), so every
// comparison with a NaN part is false. With these, maximum, minimum, fmax, fmin, clip, the
// comparisons and max / min / argmax reductions take complex input through their real-number
// bodies (select((a >= b) | is_nan(a), a, b) is NumPy's complex maximum).
template <class T>
NDX_HD bool operator<(const std::complex<T>& a, const std::complex<T>& b) {
  return (a.real() < b.real() && !is_nan(a.imag()) && !is_nan(b.imag())) ||
         (a.real() == b.real() && a.imag() < b.imag());
}
template <class T>
NDX_HD bool operator<=(const std::complex<T>& a, const std::complex<T>& b) {
  return (a.real() < b.real() && !is_nan(a.imag()) && !is_nan(b.imag())) ||
         (a.real() == b.real() && a.imag() <= b.imag());
}
template <class T>
NDX_HD bool operator>(const std::complex<T>& a, const std::complex<T>& b) {
  return b < a;
}
template <class T>
NDX_HD bool operator>=(const std::complex<T>& a, const std::complex<T>& b) {
  return b <= a;
}
// max / min return b when either is NaN, as the SIMD instructions do; functors that propagate
// NaN test for it with is_nan.
template <class T>
NDX_HD T max(T a, T b) {
  return a > b ? a : b;
}
template <class T>
NDX_HD T min(T a, T b) {
  return a < b ? a : b;
}

// a * b + c, rounded once where the vector form (Highway's MulAdd) fuses it: a functor adding
// two products calls it, so that the compiler's contraction cannot fuse one product in the
// vector lanes and the other in the scalar tail (the results would differ in the last bit).
template <class T>
NDX_HD T mul_add(T a, T b, T c) {
#if defined(__CUDA_ARCH__) || (defined(HWY_NATIVE_FMA) && HWY_NATIVE_FMA)
  if constexpr (std::is_floating_point_v<T>) return fma(a, b, c);
#endif
  return a * b + c;
}

// exp of an argument that is normally <= 0 (softmax's x - max): exp itself here; the vector
// form (kernel/vec-inl.h) is a shorter float32 exp for that range.
template <class T>
NDX_HD T exp_nonpositive(T x) {
  return exp(x);
}

// Integer arithmetic wraps around as NumPy's does (kernel/math/wrap.h).
template <class T>
NDX_HD T add(T a, T b) {
  return wrap_add(a, b);
}
template <class T>
NDX_HD T sub(T a, T b) {
  return wrap_sub(a, b);
}
template <class T>
NDX_HD T mul(T a, T b) {
  return wrap_mul(a, b);
}
template <class T>
NDX_HD T neg(T a) {
  // integers wrap (-INT_MIN == INT_MIN); floats flip the sign bit, so -(+0.0) is -0.0 as IEEE
  // and the Array API require (0 - x would give +0.0)
  if constexpr (std::is_integral_v<T>)
    return sub(T(0), a);
  else
    return -a;
}
template <class T>
NDX_HD T abs(T x) {
  if constexpr (std::is_unsigned_v<T>)
    return x;
  else if constexpr (std::is_floating_point_v<T>)
    return std::fabs(x);
  else
    return x < 0 ? neg(x) : x;
}

#define NDX_SCALAR_FN_(name, expr)                    \
  NDX_HD float name(float x) { return std::expr(x); } \
  NDX_HD double name(double x) { return std::expr(x); }
NDX_SCALAR_FN_(floor, floor)
NDX_SCALAR_FN_(ceil, ceil)
NDX_SCALAR_FN_(trunc, trunc)
NDX_SCALAR_FN_(rint, nearbyint)
NDX_SCALAR_FN_(sqrt, sqrt)
NDX_SCALAR_FN_(exp, exp)
NDX_SCALAR_FN_(expm1, expm1)
NDX_SCALAR_FN_(log, log)
NDX_SCALAR_FN_(log1p, log1p)
NDX_SCALAR_FN_(log2, log2)
NDX_SCALAR_FN_(log10, log10)
NDX_SCALAR_FN_(sin, sin)
NDX_SCALAR_FN_(cos, cos)
NDX_SCALAR_FN_(tan, tan)
NDX_SCALAR_FN_(tanh, tanh)
NDX_SCALAR_FN_(sinh, sinh)
NDX_SCALAR_FN_(cosh, cosh)
NDX_SCALAR_FN_(asin, asin)
NDX_SCALAR_FN_(acos, acos)
NDX_SCALAR_FN_(atan, atan)
NDX_SCALAR_FN_(asinh, asinh)
NDX_SCALAR_FN_(acosh, acosh)
NDX_SCALAR_FN_(atanh, atanh)
NDX_SCALAR_FN_(erf, erf)
NDX_SCALAR_FN_(cbrt, cbrt)
NDX_SCALAR_FN_(exp2, exp2)
#undef NDX_SCALAR_FN_
#define NDX_SCALAR_FN2_(name, expr)                               \
  NDX_HD float name(float a, float b) { return std::expr(a, b); } \
  NDX_HD double name(double a, double b) { return std::expr(a, b); }
NDX_SCALAR_FN2_(pow, pow)
NDX_SCALAR_FN2_(fmod, fmod)
NDX_SCALAR_FN2_(copysign, copysign)
NDX_SCALAR_FN2_(atan2, atan2)
NDX_SCALAR_FN2_(hypot, hypot)
NDX_SCALAR_FN2_(nextafter, nextafter)
#undef NDX_SCALAR_FN2_
// a * 2^b for an integer-valued b (clamped by the caller to where the result is 0 or inf).
NDX_HD float ldexp(float a, float b) { return std::ldexp(a, static_cast<int>(b)); }
NDX_HD double ldexp(double a, double b) { return std::ldexp(a, static_cast<int>(b)); }

#endif  // NDX_KERNEL_MATH_SCALAR_INL_H_
