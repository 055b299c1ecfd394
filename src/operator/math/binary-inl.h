// The math of the elementwise binary ops and their backward ops (operator/elemwise_binary.cc):
// one functor body for every dtype, scalar and SIMD, CPU and CUDA. Integer paths wrap around
// and never divide by zero, as NumPy's do. Included inside a kernel namespace after the
// vocabulary (kernel/math/scalar-inl.h, kernel/vec-inl.h).
#if defined(NDX_OPERATOR_MATH_BINARY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_OPERATOR_MATH_BINARY_INL_H_
#undef NDX_OPERATOR_MATH_BINARY_INL_H_
#else
#define NDX_OPERATOR_MATH_BINARY_INL_H_
#endif

struct Add {
  static constexpr unsigned kTypes = kAllWithComplex;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return add(a, b);  // or for bool
  }
};
struct Subtract {
  static constexpr unsigned kTypes = kNumericTypes | kComplexTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return sub(a, b);
  }
};
struct Multiply {
  static constexpr unsigned kTypes = kAllWithComplex;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return mul(a, b);  // and for bool
  }
};
struct TrueDivide {
  static constexpr unsigned kTypes = kInexactTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return a / b;
  }
};
// a * conj(b) and a / conj(b): the products gradients are made of under the conjugate
// Wirtinger convention (PyTorch's): grad = g * conj(f'(z)). For real dtypes they are a * b
// and a / b, at the same speed.
struct MultiplyConj {
  static constexpr unsigned kTypes = kInexactTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    if constexpr (is_complex_v<T>)
      return a * std::conj(b);
    else
      return a * b;
  }
};
struct DivideConj {
  static constexpr unsigned kTypes = kInexactTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    if constexpr (is_complex_v<T>)
      return a / std::conj(b);
    else
      return a / b;
  }
};
// NumPy's npy_divmod for floats: the floor of the exact quotient, consistent with mod.
struct FloorDivide {
  static constexpr unsigned kTypes = kNumericTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b == 0) return a / b;
      const T m = fmod(a, b);
      T div = (a - m) / b;
      if (m != 0 && ((b < 0) != (m < 0))) div -= T(1);
      if (div == 0) return copysign(T(0), a / b);
      T fl = floor(div);
      if (div - fl > T(0.5)) fl += T(1);
      return fl;
    } else {
      if (b == 0) return T(0);  // NumPy gives 0 (with a warning)
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return neg(a);  // INT_MIN // -1 wraps as in NumPy
        T q = static_cast<T>(a / b);
        if ((a % b != 0) && ((a < 0) != (b < 0))) q = static_cast<T>(q - 1);
        return q;
      } else {
        return static_cast<T>(a / b);
      }
    }
  }
};
// a % b with the sign of b, as Python's %.
struct Mod {
  static constexpr unsigned kTypes = kNumericTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b == 0) return fmod(a, b);  // NaN
      T m = fmod(a, b);
      if (m != 0) {
        if ((b < 0) != (m < 0)) m += b;
      } else {
        m = copysign(T(0), b);
      }
      return m;
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
        T r = static_cast<T>(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
      } else {
        return static_cast<T>(a % b);
      }
    }
  }
};
// Complex power as NumPy computes it (npymath's cpow), so that Gaussian integers stay exact
// ((1j) ** 2 is -1, where exp(2 log 1j) is -1 + 1.2e-16j): x ** 0 is 1; 0 ** b is 0 when
// b's real part is positive and NaN otherwise (NumPy 2.4's results); a whole real exponent under
// 100 in magnitude multiplies by repeated squaring (the schoolbook product, then 1 / x by Smith's
// division for a negative one); any other exponent goes to the library's pow.
template <class C>
NDX_HD C schoolbook_product(C a, C b) {
  return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}
template <class C>
NDX_HD C smith_reciprocal(C b) {
  using R = typename C::value_type;
  const R br = b.real(), bi = b.imag();
  const R abs_r = br < R(0) ? -br : br, abs_i = bi < R(0) ? -bi : bi;
  if (abs_r >= abs_i) {
    if (abs_r == R(0)) return C(R(1) / abs_r, R(0) / abs_i);  // inf / NaN, as NumPy's
    const R ratio = bi / br, scale = R(1) / (br + bi * ratio);
    return C(scale, -ratio * scale);
  }
  const R ratio = br / bi, scale = R(1) / (bi + br * ratio);
  return C(ratio * scale, -scale);
}
template <class C>
NDX_HD C complex_power(C a, C b) {
  using R = typename C::value_type;
  const R br = b.real(), bi = b.imag();
  if (br == R(0) && bi == R(0)) return C(1);
  if (a.real() == R(0) && a.imag() == R(0)) {
    if (br > R(0)) return C(0);
    const R nan = std::numeric_limits<R>::quiet_NaN();
    return C(nan, nan);
  }
  if (bi == R(0) && br > R(-100) && br < R(100) && static_cast<R>(static_cast<int>(br)) == br) {
    const int n = static_cast<int>(br);
    if (n == 1) return a;  // (1, 2 and 3 unrolled as NumPy does: the same signed zeros)
    if (n == 2) return schoolbook_product(a, a);
    if (n == 3) return schoolbook_product(a, schoolbook_product(a, a));
    C result(1), square = a;
    for (int e = n < 0 ? -n : n;;) {
      if (e & 1) result = schoolbook_product(result, square);
      e >>= 1;
      if (e == 0) break;
      square = schoolbook_product(square, square);
    }
    return n < 0 ? smith_reciprocal(result) : result;
  }
  return std::pow(a, b);
}

// Integers: exponentiation by squaring, wrapping. Negative exponents are rejected by the op
// before the kernel runs (they would give 0 here).
struct Power {
  static constexpr unsigned kTypes = kNumericTypes | kComplexTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    if constexpr (is_complex_v<T>) {
      return complex_power(a, b);
    } else if constexpr (std::is_floating_point_v<T>) {
      return pow(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) return T(0);
      }
      T result = 1, base = a;
      for (T e = b; e > 0; e = static_cast<T>(e >> 1)) {
        if (e & 1) result = mul(result, base);
        base = mul(base, base);
      }
      return result;
    }
  }
};
// maximum / minimum propagate NaN from either side.
struct Maximum {
  static constexpr unsigned kTypes = kAllWithComplex;  // NumPy's complex order
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return select((a >= b) | is_nan(a), a, b);
  }
};
struct Minimum {
  static constexpr unsigned kTypes = kAllWithComplex;  // NumPy's complex order
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return select((a <= b) | is_nan(a), a, b);
  }
};
// clip(x, lo, hi) = minimum(maximum(x, lo), hi), NumPy's definition, in one pass: NaN in x or
// a bound gives NaN, and lo > hi gives hi.
// Complex input: NumPy's clip orders by real part, then imaginary part, plainly (its
// comparison operators' rule for NaN parts does not apply), so a bound with a NaN part loses
// to a value whose real part is beyond it.
struct Clip {
  static constexpr unsigned kTypes = kAllWithComplex;
  template <class T>
  NDX_HD T operator()(T x, T lo, T hi) const {
    if constexpr (is_complex_v<T>) {
      const T m = is_nan(x) || lexicographic_less(lo, x) ? x : lo;
      return is_nan(m) || lexicographic_less(m, hi) ? m : hi;
    } else {
      const T m = select((x >= lo) | is_nan(x), x, lo);
      return select((m <= hi) | is_nan(m), m, hi);
    }
  }
  template <class T>
  static NDX_HD bool lexicographic_less(const T& a, const T& b) {
    return a.real() == b.real() ? a.imag() < b.imag() : a.real() < b.real();
  }
};

#define NDX_COMPARE_(Name, op)                                   \
  struct Name {                                                  \
    static constexpr unsigned kTypes = kAllWithComplex;          \
    template <class T>                                           \
    NDX_HD bool operator()(T a, T b) const {                     \
      return a op b; /* complex: lexicographic (scalar-inl.h) */ \
    }                                                            \
  };
struct Equal {
  static constexpr unsigned kTypes = kAllWithComplex;
  template <class T>
  NDX_HD bool operator()(T a, T b) const {
    return a == b;
  }
};
struct NotEqual {
  static constexpr unsigned kTypes = kAllWithComplex;
  template <class T>
  NDX_HD bool operator()(T a, T b) const {
    return a != b;
  }
};
NDX_COMPARE_(Less, <)
NDX_COMPARE_(LessEqual, <=)
NDX_COMPARE_(Greater, >)
NDX_COMPARE_(GreaterEqual, >=)
#undef NDX_COMPARE_
#define NDX_COMPARE_(Name, op)                          \
  struct Name {                                         \
    static constexpr unsigned kTypes = kAllWithComplex; \
    template <class T>                                  \
    NDX_HD bool operator()(T a, T b) const {            \
      return (a != T(0)) op(b != T(0));                 \
    }                                                   \
  };
NDX_COMPARE_(LogicalAnd, &&)
NDX_COMPARE_(LogicalOr, ||)
NDX_COMPARE_(LogicalXor, !=)
#undef NDX_COMPARE_

// ---- float math of two arguments ----
#define NDX_FLOAT_BINARY_SCALAR_(Name, fn)          \
  struct Name {                                     \
    static constexpr unsigned kTypes = kFloatTypes; \
    static constexpr bool kScalarOnly = true;       \
    template <class T>                              \
    NDX_HD T operator()(T a, T b) const {           \
      return fn(a, b);                              \
    }                                               \
  };
NDX_FLOAT_BINARY_SCALAR_(Hypot, hypot)
NDX_FLOAT_BINARY_SCALAR_(Nextafter, nextafter)
#undef NDX_FLOAT_BINARY_SCALAR_
// nextafter for a narrower float format computed in float (float16: 10 mantissa bits and
// exponents from -14; bfloat16: 7 and -126): one step of that format's spacing at x1.
struct NextafterNarrow {
  static constexpr unsigned kTypes = kFloatTypes;
  static constexpr bool kScalarOnly = true;
  int bits, emin;
  double largest;
  explicit NextafterNarrow(const FunctorArgs& f)
      : bits(static_cast<int>(f.a)), emin(static_cast<int>(f.b)), largest(f.c) {}
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    if (is_nan(a) || is_nan(b)) return a + b;
    if (a == b) return b;
    if (a == T(0)) return copysign(static_cast<T>(std::ldexp(1.0, emin - bits)), b);
    if (is_inf(a)) return static_cast<T>(a > T(0) ? largest : -largest);
    int e;
    std::frexp(a, &e);               // |a| = m 2^e, m in [0.5, 1)
    if (e < emin + 1) e = emin + 1;  // subnormals share the smallest normal spacing
    double step = std::ldexp(1.0, e - 1 - bits);
    const bool toward_zero = (b > a) != (a > T(0));
    if (toward_zero && abs(a) == static_cast<T>(std::ldexp(0.5, e)) && e > emin + 1) step /= 2;
    const double r = static_cast<double>(a) + (b > a ? step : -step);
    if (r > largest || r < -largest) return copysign(std::numeric_limits<T>::infinity(), a);
    return static_cast<T>(r);
  }
};
struct Arctan2 {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T y, T x) const {
    return atan2(y, x);
  }
};
struct Copysign {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return copysign(a, b);
  }
};
// log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); a + log 2 where a == b (infinities too).
struct Logaddexp {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    const T r = max(a, b) + log1p(exp(-abs(a - b)));
    return select(a == b, a + T(0.69314718055994530942), r);
  }
};
// log2(2^a + 2^b) the same way, in base 2.
struct Logaddexp2 {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    const T r =
        max(a, b) + log1p(exp(-abs(a - b) * T(0.69314718055994530942))) * T(1.44269504088896340736);
    return select(a == b, a + T(1), r);
  }
};
// 0 for a < 0, 1 for a > 0, b at 0; NaN stays NaN.
struct Heaviside {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return select(a < T(0), T(0), select(a > T(0), T(1), select(a == T(0), b, a)));
  }
};
// a * 2^b, the exponent (an integer array cast into the compute type) clamped to a range
// where the result is already 0 or inf.
struct Ldexp {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return ldexp(a, max(min(b, T(100000)), T(-100000)));
  }
};
// fmax / fmin ignore a NaN on one side.
struct Fmax {
  static constexpr unsigned kTypes = kAllWithComplex;  // NumPy's complex order
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return select((a >= b) | is_nan(b), a, b);
  }
};
struct Fmin {
  static constexpr unsigned kTypes = kAllWithComplex;  // NumPy's complex order
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return select((a <= b) | is_nan(b), a, b);
  }
};
// C's remainder: the sign of a; integer division by zero gives 0.
struct Fmod {
  static constexpr unsigned kTypes = kNumericTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return fmod(a, b);
    } else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed_v<T>)
        if (b == T(-1)) return T(0);
      return static_cast<T>(a % b);
    }
  }
};

// ---- integers ----
// gcd and lcm of the magnitudes in the unsigned type, as NumPy's: |INT_MIN| is 2^(bits - 1)
// there, not INT_MIN, whose remainders made the signed gcd(INT_MIN, 15) -1 and lcm's division
// INT_MIN / -1 trap (SIGFPE). Products wrap; 8- and 16-bit ones are taken in 32 bits so that
// they do not overflow int.
template <class T>
using MagnitudeOf = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
template <class T>
NDX_HD MagnitudeOf<T> magnitude(T v) {
  using U = std::make_unsigned_t<T>;
  const U u = static_cast<U>(v);  // (unsigned arithmetic is modular: 0 - u is |v| for v < 0)
  if constexpr (std::is_signed_v<T>) {
    if (v < T(0)) return static_cast<MagnitudeOf<T>>(static_cast<U>(U(0) - u));
  }
  return static_cast<MagnitudeOf<T>>(u);
}
template <class M>
NDX_HD M gcd_of_magnitudes(M a, M b) {
  while (b != M(0)) {
    const M r = a % b;
    a = b;
    b = r;
  }
  return a;
}
struct Gcd {
  static constexpr unsigned kTypes = kIntTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return static_cast<T>(gcd_of_magnitudes(magnitude(a), magnitude(b)));
  }
};
struct Lcm {
  static constexpr unsigned kTypes = kIntTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    const auto ma = magnitude(a), mb = magnitude(b);
    const auto g = gcd_of_magnitudes(ma, mb);
    return g == 0 ? T(0) : static_cast<T>(ma / g * mb);
  }
};
#define NDX_BITWISE_(Name, op)                                 \
  struct Name {                                                \
    static constexpr unsigned kTypes = kIntTypes | kBoolTypes; \
    template <class T>                                         \
    NDX_HD T operator()(T a, T b) const {                      \
      return static_cast<T>(a op b);                           \
    }                                                          \
  };
NDX_BITWISE_(BitwiseAnd, &)
NDX_BITWISE_(BitwiseOr, |)
NDX_BITWISE_(BitwiseXor, ^)
#undef NDX_BITWISE_
// Shifts by the type's width or more (or by a negative count) give 0, or -1 for negative a
// shifted right, as NumPy's.
struct LeftShift {
  static constexpr unsigned kTypes = kIntTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(b) >= sizeof(T) * 8) return T(0);
    return static_cast<T>(static_cast<U>(a) << static_cast<U>(b));
  }
};
struct RightShift {
  static constexpr unsigned kTypes = kIntTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    if (static_cast<U>(b) >= sizeof(T) * 8) {
      if constexpr (std::is_signed_v<T>)
        return a < T(0) ? T(-1) : T(0);
      else
        return T(0);
    }
    return static_cast<T>(a >> static_cast<U>(b));
  }
};

// where(c, x, y): x where c is nonzero, else y (c arrives as 0 / 1 in the compute type).
struct Where {
  static constexpr unsigned kTypes = kAllWithComplex;
  template <class T>
  NDX_HD T operator()(T c, T x, T y) const {
    return select(c != T(0), x, y);
  }
};

// ---- backward: gradient of each input from (ograd, a, b), before summing to its shape ----
struct ModGradB {  // d(a % b)/db = -floor(a / b)
  static constexpr unsigned kTypes = kFloatTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T g, T a, T b) const {
    return -g * FloorDivide()(a, b);
  }
};
struct PowerGradA {  // b * a^(b-1) (0 where b == 0: a^0 is constant, 0^-1 would give NaN)
  static constexpr unsigned kTypes = kFloatTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T g, T a, T b) const {
    return b == T(0) ? T(0) : g * b * pow(a, b - T(1));
  }
};
struct PowerGradB {  // a^b log a (0 at a == 0)
  static constexpr unsigned kTypes = kFloatTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T g, T a, T b) const {
    return a == T(0) ? T(0) : g * pow(a, b) * log(a);
  }
};
// Ties send the gradient to a (maximum / minimum pick a on ties).
struct MaximumGradA {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T a, T b) const {
    return select(a >= b, g, T(0));
  }
};
struct MaximumGradB {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T a, T b) const {
    return select(a >= b, T(0), g);
  }
};
struct MinimumGradA {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T a, T b) const {
    return select(a <= b, g, T(0));
  }
};
struct MinimumGradB {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T a, T b) const {
    return select(a <= b, T(0), g);
  }
};
// Backward ops whose gradient passes ograd through unchanged.
struct PassGrad {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T, T) const {
    return g;
  }
};

#endif  // NDX_OPERATOR_MATH_BINARY_INL_H_
