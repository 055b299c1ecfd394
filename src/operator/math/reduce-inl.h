// The math of the reductions (operator/reduce.cc) beyond the reducers of
// kernel/math/reducers-inl.h: the elementwise pieces of the backward ops.
#if defined(NDX_OPERATOR_MATH_REDUCE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_OPERATOR_MATH_REDUCE_INL_H_
#undef NDX_OPERATOR_MATH_REDUCE_INL_H_
#else
#define NDX_OPERATOR_MATH_REDUCE_INL_H_
#endif

// g / n: the backward of mean (n is FunctorArgs::a).
struct DivideBy {
  static constexpr unsigned kTypes = kNumericTypes | kComplexTypes;
  double n = 1;
  DivideBy() = default;
  explicit DivideBy(const FunctorArgs& a) : n(a.a) {}
  template <class T>
  NDX_HD T operator()(T g) const {
    return g / T(n);
  }
};

// The backward of max / min: g where x is the result, else 0.
struct PassWhereEqual {
  static constexpr unsigned kTypes = kNumericTypes;
  template <class T>
  NDX_HD T operator()(T g, T x, T y) const {
    return select(x == y, g, T(0));
  }
};

// Pieces of the backward of prod, which must stay exact where inputs are zero: the product
// of the nonzero inputs and the count of zeros per result, then the gradient from both.
struct OneIfZero {
  static constexpr unsigned kTypes = kNumericTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return select(x == T(0), T(1), x);
  }
};
struct IsZeroCount {
  static constexpr unsigned kTypes = kNumericTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return select(x == T(0), T(1), T(0));
  }
};
// g * (product of the other inputs): nzp / x without zeros, nzp at the single zero, else 0.
struct ProdGrad {
  static constexpr unsigned kTypes = kNumericTypes;
  static constexpr bool kScalarOnly = true;
  template <class T>
  NDX_HD T operator()(T g, T x, T nonzero_product, T zeros) const {
    T others = T(0);
    if (zeros == T(0)) {
      if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
        others = x == T(-1) ? neg(nonzero_product) : static_cast<T>(nonzero_product / x);
      else
        others = nonzero_product / x;
    } else if (zeros == T(1) && x == T(0)) {
      others = nonzero_product;
    }
    return mul(g, others);
  }
};

#endif  // NDX_OPERATOR_MATH_REDUCE_INL_H_
