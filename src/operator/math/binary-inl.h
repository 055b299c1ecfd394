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
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return add(a, b);  // or for bool
  }
};
struct Subtract {
  static constexpr unsigned kTypes = kNumericTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return sub(a, b);
  }
};
struct Multiply {
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return mul(a, b);  // and for bool
  }
};
struct TrueDivide {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
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
// Integers: exponentiation by squaring, wrapping. Negative exponents are rejected by the op
// before the kernel runs (they would give 0 here).
struct Power {
  static constexpr unsigned kTypes = kNumericTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
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
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return select((a >= b) | is_nan(a), a, b);
  }
};
struct Minimum {
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return select((a <= b) | is_nan(a), a, b);
  }
};

#define NDX_COMPARE_(Name, op)               \
  struct Name {                              \
    template <class T>                       \
    NDX_HD bool operator()(T a, T b) const { \
      return a op b;                         \
    }                                        \
  };
NDX_COMPARE_(Equal, ==)
NDX_COMPARE_(NotEqual, !=)
NDX_COMPARE_(Less, <)
NDX_COMPARE_(LessEqual, <=)
NDX_COMPARE_(Greater, >)
NDX_COMPARE_(GreaterEqual, >=)
#undef NDX_COMPARE_

// ---- backward: gradient of each input from (ograd, a, b), before summing to its shape ----
struct ModGradB {  // d(a % b)/db = -floor(a / b)
  static constexpr unsigned kTypes = kFloatTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T g, T a, T b) const {
    return -g * FloorDivide()(a, b);
  }
};
struct PowerGradA {  // b * a^(b-1)
  static constexpr unsigned kTypes = kFloatTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T g, T a, T b) const {
    return g * b * pow(a, b - T(1));
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
