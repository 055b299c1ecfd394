// The monoids reductions are made of: a scalar identity and a combine written once for
// scalars and vectors (see kernel/reduce-inl.h). Optional members: finalize(acc, count).
// Included inside each kernel namespace, like kernel/math/scalar-inl.h (and usable by CUDA).
#if defined(NDX_KERNEL_MATH_REDUCERS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_KERNEL_MATH_REDUCERS_INL_H_
#undef NDX_KERNEL_MATH_REDUCERS_INL_H_
#else
#define NDX_KERNEL_MATH_REDUCERS_INL_H_
#endif

struct SumReducer {
  template <class C>
  static NDX_HD C identity() {
    return C(0);
  }
  template <class A>
  NDX_HD A operator()(A acc, A x) const {
    return add(acc, x);
  }
};

struct ProdReducer {
  template <class C>
  static NDX_HD C identity() {
    return C(1);
  }
  template <class A>
  NDX_HD A operator()(A acc, A x) const {
    return mul(acc, x);
  }
};

// max / min propagate NaN: once the accumulator is NaN it stays NaN.
struct MaxReducer {
  template <class C>
  static NDX_HD C identity() {
    if constexpr (std::is_floating_point_v<C>)
      return -std::numeric_limits<C>::infinity();
    else
      return std::numeric_limits<C>::lowest();
  }
  template <class A>
  NDX_HD A operator()(A acc, A x) const {
    return select((acc >= x) | is_nan(acc), acc, x);
  }
};

struct MinReducer {
  template <class C>
  static NDX_HD C identity() {
    if constexpr (std::is_floating_point_v<C>)
      return std::numeric_limits<C>::infinity();
    else
      return std::numeric_limits<C>::max();
  }
  template <class A>
  NDX_HD A operator()(A acc, A x) const {
    return select((acc <= x) | is_nan(acc), acc, x);
  }
};

#endif  // NDX_KERNEL_MATH_REDUCERS_INL_H_
