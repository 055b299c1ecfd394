// The GPU twins of the kernel engine's entries, declared for the host compiler: a kernel
// file names `NDX_ELEMENTWISE(Exp)` / `NDX_REDUCE(SumReducer)` and gets the CPU instance for
// this processor plus, in a CUDA build, the CUDA instance compiled from the same functor by
// the .cu file of the family (src/kernel/cuda/). Every functor a GPU runs is listed here once:
// the .cu files instantiate the engines from these lists.
#pragma once
#include "kernel/conv_geom.h"
#include "kernel/elementwise.h"
#include "kernel/functor_traits.h"
#include "kernel/reduce.h"

// One entry per line, left alone: clang-format does not settle on one layout for these lists.
// clang-format off
#define NDX_UNARY_FUNCTORS(X) \
  X(Negative) \
  X(Absolute) \
  X(Sign) \
  X(Square) \
  X(Floor) \
  X(Ceil) \
  X(LogicalNot) \
  X(Sqrt) \
  X(Exp) \
  X(Log) \
  X(Expm1) \
  X(Log1p) \
  X(Log2) \
  X(Log10) \
  X(Sin) \
  X(Cos) \
  X(Tanh) \
  X(Erf) \
  X(Arcsin) \
  X(Arccos) \
  X(Arctan) \
  X(Arcsinh) \
  X(Arccosh) \
  X(Arctanh) \
  X(Sinh) \
  X(Tan) \
  X(Cosh) \
  X(Cbrt) \
  X(Exp2) \
  X(Scale) \
  X(Sinc) \
  X(Positive) \
  X(Reciprocal) \
  X(Rint) \
  X(Trunc) \
  X(Round) \
  X(IsNan) \
  X(IsInf) \
  X(IsFinite) \
  X(IsPosInf) \
  X(IsNegInf) \
  X(Signbit) \
  X(BitwiseNot) \
  X(BitwiseCount) \
  X(NanToNum) \
  X(FrexpMantissa) \
  X(FrexpExponent) \
  X(ModfFraction) \
  X(ComplexAbsolute) \
  X(RealPart) \
  X(ImagPart) \
  X(Conjugate) \
  X(Angle) \
  X(TimesI) \
  X(Relu6) \
  X(Softsign) \
  X(Silu) \
  X(Gelu) \
  X(Mish) \
  X(Gammaln) \
  X(Gamma) \
  X(Digamma) \
  X(DigammaGrad) \
  X(Erfinv)
#define NDX_BINARY_FUNCTORS(X) \
  X(Add) \
  X(Subtract) \
  X(Multiply) \
  X(TrueDivide) \
  X(MultiplyConj) \
  X(DivideConj) \
  X(FloorDivide) \
  X(Mod) \
  X(Power) \
  X(Maximum) \
  X(Minimum) \
  X(Clip) \
  X(Equal) \
  X(NotEqual) \
  X(Less) \
  X(LessEqual) \
  X(Greater) \
  X(GreaterEqual) \
  X(LogicalAnd) \
  X(LogicalOr) \
  X(LogicalXor) \
  X(Arctan2) \
  X(Hypot) \
  X(Nextafter) \
  X(NextafterNarrow) \
  X(Copysign) \
  X(Logaddexp) \
  X(Logaddexp2) \
  X(Heaviside) \
  X(Ldexp) \
  X(Fmax) \
  X(Fmin) \
  X(Fmod) \
  X(Gcd) \
  X(Lcm) \
  X(BitwiseAnd) \
  X(BitwiseOr) \
  X(BitwiseXor) \
  X(LeftShift) \
  X(RightShift) \
  X(Where) \
  X(ModGradB) \
  X(PowerGradA) \
  X(PowerGradB) \
  X(MaximumGradA) \
  X(MaximumGradB) \
  X(MinimumGradA) \
  X(MinimumGradB) \
  X(PassGrad)
#define NDX_NN_FUNCTORS(X) \
  X(Relu) \
  X(ReluGrad) \
  X(SigmoidGrad) \
  X(TanhGrad) \
  X(Sigmoid) \
  X(TanhAct) \
  X(SoftRelu) \
  X(LogSigmoid) \
  X(ExpMinus) \
  X(DivideRows) \
  X(LogSoftmaxOut) \
  X(SquaredDiff) \
  X(SqrtPlusEps) \
  X(InvSqrtPlusEps) \
  X(NormalizeDiv) \
  X(NormalizeMul) \
  X(Momentum) \
  X(XHatDiv) \
  X(XHatMul) \
  X(Product) \
  X(NormGrad) \
  X(ScaledProduct) \
  X(OneOver) \
  X(Plus) \
  X(DivideBoth) \
  X(DivideBy) \
  X(PassWhereEqual) \
  X(OneIfZero) \
  X(IsZeroCount) \
  X(ProdGrad) \
  X(SgdStep) \
  X(SgdMomentum) \
  X(AdamMean) \
  X(AdamVar) \
  X(AdamStep) \
  X(LeakyRelu) \
  X(LeakyReluGrad) \
  X(Prelu) \
  X(PreluGrad) \
  X(PreluGradGamma) \
  X(Elu) \
  X(EluGrad) \
  X(Selu) \
  X(SeluGrad) \
  X(GeluErf) \
  X(GeluErfGrad) \
  X(GeluTanh) \
  X(GeluTanhGrad)
#define NDX_REDUCERS(X) \
  X(SumReducer) \
  X(MeanReducer) \
  X(ProdReducer) \
  X(MaxReducer) \
  X(MinReducer)
// clang-format on

namespace ndx::kernel::gpu {
// A name in two lists would be instantiated by two .cu files from two different functors
// (and by two CPU files the same way): duplicate enumerators make that a compile error.
#define NDX_ENUMERATOR_(F) k##F,
enum class FunctorName {
  NDX_UNARY_FUNCTORS(NDX_ENUMERATOR_) NDX_BINARY_FUNCTORS(NDX_ENUMERATOR_)
      NDX_NN_FUNCTORS(NDX_ENUMERATOR_) NDX_REDUCERS(NDX_ENUMERATOR_)
};
#undef NDX_ENUMERATOR_

template <class F>
void elementwise(const ElementwiseArgs& a);
template <class R>
void reduce(const ReduceArgs& a);
#define NDX_DECLARE_(F) struct F;
NDX_UNARY_FUNCTORS(NDX_DECLARE_)
NDX_BINARY_FUNCTORS(NDX_DECLARE_)
NDX_NN_FUNCTORS(NDX_DECLARE_)
NDX_REDUCERS(NDX_DECLARE_)
#undef NDX_DECLARE_

// dst (req) src broadcast and cast, any strides, both on the same GPU; and fills.
void copy(const TBlob& src, const TBlob& dst, OpReqType req);
void fill(const TBlob& dst, double value);
// Softmax (or log-softmax) of each of `rows` contiguous rows of n float32 / float64 values.
void softmax_rows(bool log_softmax, const TBlob& x, const TBlob& y, int64_t rows, int64_t n);
// Convolution's patch matrices for all g.n images ([n][c * kh * kw][oh * ow], contiguous) and
// their adjoint (x written, not added to); pooling (kind 0 max, 1 avg, 2 sum) and its gradient
// (dx written). float32 / float64, contiguous NCHW.
void im2col(const ConvGeom& g, DType t, const void* x, void* col, int device);
void col2im(const ConvGeom& g, DType t, const void* col, void* x, int device);
void pool(const ConvGeom& g, int kind, bool include_pad, DType t, const void* x, void* y,
          int device);
void pool_backward(const ConvGeom& g, int kind, bool include_pad, DType t, const void* dy,
                   const void* x, void* dx, int device);
// y[o][j][i] (= or +=) x[o][idx[o * m + j]][i] for x of shape (outer, n, inner) and y of
// (outer, m, inner), contiguous; idx: int64 on the device, each in [0, n).
void gather(const TBlob& x, const int64_t* idx, const TBlob& y, int64_t outer, int64_t n, int64_t m,
            int64_t inner, bool add);
// dx[o][rows[o][u]][i] += the sum of g[o][order[o][q]][i] for q in [start[o][u], start[o][u+1]):
// gather's gradient with the j's grouped by row (see gpu::scatter_plan); dx zeroed or not.
void scatter_sum(const TBlob& g, const int64_t* rows, const int64_t* start, const int64_t* order,
                 const TBlob& dx, int64_t outer, int64_t n, int64_t m, int64_t inner,
                 int64_t distinct);
// pick along the middle axis of x (outer, n, inner): y (outer, inner) (req) x[o][k[o][i]][i]; with
// backward, x is the gradient (outer, inner) added into y (outer, n, inner) at those spots.
void pick(const TBlob& x, const int64_t* k, const TBlob& y, int64_t n, int64_t inner, bool add,
          bool backward);
// one_hot: y[r][d] (= or +=) on where idx[r] == d, else off; y (rows, depth) contiguous, idx
// int64 on the device (any value: those outside [0, depth) give rows of off).
void one_hot(const int64_t* idx, int64_t rows, int64_t depth, double on, double off, const TBlob& y,
             bool add);
// argmax (max) or argmin of contiguous x seen as (outer, n, inner), along n, into out[o][i]
// (int64 on the device): the first occurrence, a NaN winning as in NumPy.
void arg_reduce(const TBlob& x, bool max, int64_t outer, int64_t n, int64_t inner, int64_t* out);
// Advanced indexing's blocks: block b lies at byte offset offsets[b] of base and has shape
// `rest` with element strides `rest_strides`; the buffer holds block positions[b] (b when
// positions is null) contiguously. Gathers into the buffer (to_buffer) or scatters from it.
void index_blocks(char* base, const int64_t* offsets, const int64_t* positions, int64_t count,
                  const Shape& rest, const Shape& rest_strides, int64_t itemsize, char* buffer,
                  bool to_buffer, int device);
// The creation ops whose values follow from the index: y[i] (= or +=) start + i * step
// (kind kArange), linspace's samples (kLinspace: the last is `stop` when pinned, integers
// floored), eye's diagonal k (kEye, `cols` columns). y contiguous.
enum class IndexFill { kArange, kLinspace, kEye };
struct IndexFillArgs {
  IndexFill kind = IndexFill::kArange;
  double start = 0, step = 0, stop = 0;
  bool pin_last = false, floor = false;
  int64_t cols = 1, k = 0;
  // Integer arange: values wrap into [wrap_low, wrap_low + wrap_span), as NumPy's do (0: none).
  double wrap_low = 0, wrap_span = 0;
  // Float arange as NumPy fills it: value 1 is `second` (pin_second), and with `single` the
  // values start + i * step are computed in float32 arithmetic.
  double second = 0;
  bool pin_second = false, single = false;
};
void index_fill(const TBlob& y, const IndexFillArgs& a, bool add);
// The Philox streams of kernel/random.h on a GPU, element for element the CPU's draws (out
// contiguous, of a float dtype).
void bernoulli_scaled(const TBlob& out, double p, double scale, uint64_t seed);
void normal(const TBlob& out, double loc, double scale, uint64_t seed);
void uniform(const TBlob& out, double low, double high, uint64_t seed);
}  // namespace ndx::kernel::gpu

#ifdef NDX_CUDA
#define NDX_GPU_ENTRY(entry, F) &::ndx::kernel::gpu::entry<::ndx::kernel::gpu::F>
#else
#define NDX_GPU_ENTRY(entry, F) nullptr
#endif

#define NDX_ELEMENTWISE(F)                                                                  \
  ::ndx::kernel::ElementwiseFn(NDX_DISPATCH(elementwise, F), NDX_GPU_ENTRY(elementwise, F), \
                               ::ndx::kernel::types_of<::ndx::kernel::HWY_NAMESPACE::F>(),  \
                               NDX_DISPATCH(elementwise_block, F),                          \
                               NDX_DISPATCH_NONFLOAT(elementwise, F))
#define NDX_REDUCE(R)                                                        \
  ::ndx::kernel::ReduceFn(NDX_DISPATCH(reduce, R), NDX_GPU_ENTRY(reduce, R), \
                          NDX_DISPATCH_NONFLOAT(reduce, R))
