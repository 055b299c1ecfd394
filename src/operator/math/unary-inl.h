// The math of the elementwise unary ops (operator/elemwise_unary.cc): one functor body for
// every dtype, for scalars and SIMD vectors, for the CPU targets and CUDA. Included inside a
// kernel namespace after the vocabulary (kernel/math/scalar-inl.h, kernel/vec-inl.h).
#if defined(NDX_OPERATOR_MATH_UNARY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_OPERATOR_MATH_UNARY_INL_H_
#undef NDX_OPERATOR_MATH_UNARY_INL_H_
#else
#define NDX_OPERATOR_MATH_UNARY_INL_H_
#endif

struct Negative {
  static constexpr unsigned kTypes = kNumericTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return neg(x);
  }
};
struct Absolute {
  template <class T>
  NDX_HD T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>)
      return x;
    else
      return abs(x);
  }
};
// -1, 0 or 1; NaN stays NaN, and -0.0 gives 0.0 as in NumPy.
struct Sign {
  static constexpr unsigned kTypes = kNumericTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return x > T(0) ? T(1) : T(0);
    else
      return select(x > T(0), T(1), select(x < T(0), T(-1), select(x == T(0), T(0), x)));
  }
};
struct Square {
  static constexpr unsigned kTypes = kNumericTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return mul(x, x);
  }
};
// floor and ceil leave integers (and bool) as they are.
struct Floor {
  template <class T>
  NDX_HD T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return x;
    else
      return floor(x);
  }
};
struct Ceil {
  template <class T>
  NDX_HD T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return x;
    else
      return ceil(x);
  }
};
struct LogicalNot {
  template <class T>
  NDX_HD bool operator()(T x) const {
    return x == T(0);
  }
};

#define NDX_FLOAT_UNARY_(Name, fn)                  \
  struct Name {                                     \
    static constexpr unsigned kTypes = kFloatTypes; \
    template <class T>                              \
    NDX_HD T operator()(T x) const {                \
      return fn(x);                                 \
    }                                               \
  };
NDX_FLOAT_UNARY_(Sqrt, sqrt)
NDX_FLOAT_UNARY_(Exp, exp)
NDX_FLOAT_UNARY_(Log, log)
NDX_FLOAT_UNARY_(Expm1, expm1)
NDX_FLOAT_UNARY_(Log1p, log1p)
NDX_FLOAT_UNARY_(Log2, log2)
NDX_FLOAT_UNARY_(Log10, log10)
NDX_FLOAT_UNARY_(Sin, sin)
NDX_FLOAT_UNARY_(Cos, cos)
NDX_FLOAT_UNARY_(Tanh, tanh)
NDX_FLOAT_UNARY_(Erf, erf)
#undef NDX_FLOAT_UNARY_

#endif  // NDX_OPERATOR_MATH_UNARY_INL_H_
