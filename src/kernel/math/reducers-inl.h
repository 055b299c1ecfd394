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
  static constexpr unsigned kTypes = kAllWithComplex;
  template <class C>
  static NDX_HD C identity() {
    return C(0);
  }
  template <class A>
  NDX_HD A operator()(A acc, A x) const {
    return add(acc, x);
  }
};

// A sum divided by the count (0 / 0 gives NaN, as NumPy's mean of nothing).
struct MeanReducer : SumReducer {
  static constexpr unsigned kTypes = kInexactTypes;
  template <class A>
  NDX_HD A finalize(A acc, int64_t count) const {
    return acc / A(count);
  }
};

struct ProdReducer {
  static constexpr unsigned kTypes = kAllWithComplex;
  template <class C>
  static NDX_HD C identity() {
    return C(1);
  }
  template <class A>
  NDX_HD A operator()(A acc, A x) const {
    return mul(acc, x);
  }
};

// max / min propagate NaN: once the accumulator is NaN it stays NaN. `fast` is the plain
// instruction, which may drop a NaN: the engine uses it where it separately checks that no
// NaN (or inf) was seen, and redoes the block with the exact combine otherwise.
// Complex input follows NumPy's lexicographic order (kernel/math/scalar-inl.h), the first
// NaN (in either part) winning.
struct MaxReducer {
  static constexpr bool kExact = true;  // any order gives the same result: no pairwise tree
  static constexpr unsigned kTypes = kAllWithComplex;
  template <class A>
  NDX_HD A fast(A acc, A x) const {
    return max(acc, x);
  }
  template <class C>
  static NDX_HD C identity() {
    if constexpr (is_complex_v<C>)
      return C(identity<typename C::value_type>(), identity<typename C::value_type>());
    else if constexpr (std::is_floating_point_v<C>)
      return -std::numeric_limits<C>::infinity();
    else
      return std::numeric_limits<C>::lowest();
  }
  // For integers and bool: the value no further element changes (the engine stops there).
  template <class C>
  static constexpr NDX_HD C absorbing() {
    return std::numeric_limits<C>::max();
  }
  template <class A>
  NDX_HD A operator()(A acc, A x) const {
    return select((acc >= x) | is_nan(acc), acc, x);
  }
};

struct MinReducer {
  static constexpr bool kExact = true;
  static constexpr unsigned kTypes = kAllWithComplex;
  template <class A>
  NDX_HD A fast(A acc, A x) const {
    return min(acc, x);
  }
  template <class C>
  static NDX_HD C identity() {
    if constexpr (is_complex_v<C>)
      return C(identity<typename C::value_type>(), identity<typename C::value_type>());
    else if constexpr (std::is_floating_point_v<C>)
      return std::numeric_limits<C>::infinity();
    else
      return std::numeric_limits<C>::max();
  }
  template <class C>
  static constexpr NDX_HD C absorbing() {
    return std::numeric_limits<C>::lowest();
  }
  template <class A>
  NDX_HD A operator()(A acc, A x) const {
    return select((acc <= x) | is_nan(acc), acc, x);
  }
};

#endif  // NDX_KERNEL_MATH_REDUCERS_INL_H_
