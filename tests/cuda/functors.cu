// The op functors compiled by nvcc: the CUDA backend runs the same math as the CPU targets.
// This file is only compiled (a CTest step when nvcc is present); it instantiates a trivial
// grid-stride kernel for every functor in float and double (and the integer ones in int32).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernel/config.h"
#include "kernel/functor_args.h"
#include "kernel/math/wrap.h"

namespace ndx::kernel::cuda {

// The vocabulary first, then what uses it (the blank line keeps clang-format from sorting).
#include "kernel/math/scalar-inl.h"

#include "kernel/math/reducers-inl.h"
#include "operator/math/binary-inl.h"
#include "operator/math/nn-inl.h"
#include "operator/math/reduce-inl.h"
#include "operator/math/unary-inl.h"

template <class F, class T, class R>
__global__ void map1(const T* x, R* y, int64_t n) {
  const F f{};
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x)
    y[i] = f(x[i]);
}
template <class F, class T, class R>
__global__ void map2(const T* a, const T* b, R* y, int64_t n) {
  const F f{};
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x)
    y[i] = f(a[i], b[i]);
}
template <class F, class T>
__global__ void map3(const T* a, const T* b, const T* c, T* y, int64_t n) {
  const F f{};
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x)
    y[i] = f(a[i], b[i], c[i]);
}
template <class R, class T>
__global__ void fold(const T* x, T* y, int64_t n) {  // one thread: enough to type-check
  const R r{};
  T acc = R::template identity<T>();
  for (int64_t i = 0; i < n; ++i) acc = r(acc, x[i]);
  *y = acc;
}

#define NDX_UNARY_FLOAT(F)                                                       \
  template __global__ void map1<F, float, float>(const float*, float*, int64_t); \
  template __global__ void map1<F, double, double>(const double*, double*, int64_t);
NDX_UNARY_FLOAT(Exp)
NDX_UNARY_FLOAT(Expm1)
NDX_UNARY_FLOAT(Log)
NDX_UNARY_FLOAT(Log1p)
NDX_UNARY_FLOAT(Log2)
NDX_UNARY_FLOAT(Log10)
NDX_UNARY_FLOAT(Sqrt)
NDX_UNARY_FLOAT(Sin)
NDX_UNARY_FLOAT(Cos)
NDX_UNARY_FLOAT(Tanh)
NDX_UNARY_FLOAT(Erf)
NDX_UNARY_FLOAT(Negative)
NDX_UNARY_FLOAT(Absolute)
NDX_UNARY_FLOAT(Sign)
NDX_UNARY_FLOAT(Square)
NDX_UNARY_FLOAT(Floor)
NDX_UNARY_FLOAT(Ceil)
NDX_UNARY_FLOAT(Relu)
NDX_UNARY_FLOAT(Sigmoid)
NDX_UNARY_FLOAT(TanhAct)
NDX_UNARY_FLOAT(SoftRelu)
NDX_UNARY_FLOAT(LogSigmoid)
NDX_UNARY_FLOAT(Reciprocal)
NDX_UNARY_FLOAT(OneOver)
NDX_UNARY_FLOAT(Tan)
NDX_UNARY_FLOAT(Cbrt)
NDX_UNARY_FLOAT(Gelu)
NDX_UNARY_FLOAT(Digamma)
NDX_UNARY_FLOAT(Erfinv)
template __global__ void map1<Negative, int32_t, int32_t>(const int32_t*, int32_t*, int64_t);
template __global__ void map1<Square, int32_t, int32_t>(const int32_t*, int32_t*, int64_t);
template __global__ void map1<LogicalNot, float, bool>(const float*, bool*, int64_t);

#define NDX_BINARY_ALL(F)                                                                      \
  template __global__ void map2<F, float, float>(const float*, const float*, float*, int64_t); \
  template __global__ void map2<F, double, double>(const double*, const double*, double*,      \
                                                   int64_t);                                   \
  template __global__ void map2<F, int32_t, int32_t>(const int32_t*, const int32_t*, int32_t*, \
                                                     int64_t);
NDX_BINARY_ALL(Add)
NDX_BINARY_ALL(Subtract)
NDX_BINARY_ALL(Multiply)
NDX_BINARY_ALL(FloorDivide)
NDX_BINARY_ALL(Mod)
NDX_BINARY_ALL(Power)
NDX_BINARY_ALL(Maximum)
NDX_BINARY_ALL(Minimum)
NDX_BINARY_ALL(Fmax)
NDX_BINARY_ALL(Fmod)
template __global__ void map2<Arctan2, float, float>(const float*, const float*, float*, int64_t);
template __global__ void map2<Gcd, int32_t, int32_t>(const int32_t*, const int32_t*, int32_t*,
                                                     int64_t);
template __global__ void map2<RightShift, uint32_t, uint32_t>(const uint32_t*, const uint32_t*,
                                                              uint32_t*, int64_t);
template __global__ void map2<TrueDivide, float, float>(const float*, const float*, float*,
                                                        int64_t);
template __global__ void map2<Less, float, bool>(const float*, const float*, bool*, int64_t);
template __global__ void map2<Equal, int32_t, bool>(const int32_t*, const int32_t*, bool*, int64_t);
template __global__ void map2<ExpMinus, float, float>(const float*, const float*, float*, int64_t);
template __global__ void map2<SquaredDiff, float, float>(const float*, const float*, float*,
                                                         int64_t);
template __global__ void map3<PowerGradB, float>(const float*, const float*, const float*, float*,
                                                 int64_t);
template __global__ void map3<MaximumGradA, double>(const double*, const double*, const double*,
                                                    double*, int64_t);
template __global__ void map3<PassWhereEqual, float>(const float*, const float*, const float*,
                                                     float*, int64_t);
template __global__ void fold<SumReducer, float>(const float*, float*, int64_t);
template __global__ void fold<MaxReducer, double>(const double*, double*, int64_t);
template __global__ void fold<MinReducer, int32_t>(const int32_t*, int32_t*, int64_t);
template __global__ void fold<ProdReducer, int64_t>(const int64_t*, int64_t*, int64_t);

}  // namespace ndx::kernel::cuda
