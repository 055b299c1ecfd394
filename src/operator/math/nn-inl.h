// The math of the neural-network ops (operator/nn.cc): activations, the softmax row ops,
// and the elementwise pieces of layer_norm, batch_norm and dropout. Included inside a kernel
// namespace after the vocabulary (kernel/math/scalar-inl.h, kernel/vec-inl.h).
#if defined(NDX_OPERATOR_MATH_NN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_OPERATOR_MATH_NN_INL_H_
#undef NDX_OPERATOR_MATH_NN_INL_H_
#else
#define NDX_OPERATOR_MATH_NN_INL_H_
#endif

// ---- activations ----
struct Relu {  // NaN passes through
  static constexpr unsigned kTypes = kNumericTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return select((x > T(0)) | is_nan(x), x, T(0));
  }
};
// 1 / (1 + exp(-x)) without overflow: e = exp(-|x|), then 1 / (1 + e) or e / (1 + e).
struct Sigmoid {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    const T e = exp(-abs(x));
    const T r = T(1) / (T(1) + e);
    return select(x >= T(0), r, e * r);
  }
};
struct TanhAct {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return tanh(x);
  }
};
// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)); NaN stays NaN.
struct SoftRelu {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return max(x, T(0)) + log1p(exp(-abs(x)));
  }
};
// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)).
struct LogSigmoid {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return min(x, T(0)) - log1p(exp(-abs(x)));
  }
};

// ---- the activations' gradients, each the composed formula in one pass ----
// relu's: g * (x > 0), as g times a 1 or 0 of g's type (so -0, inf * 0 = NaN as composed).
struct ReluGrad {
  static constexpr unsigned kTypes = kNumericTypes;
  template <class T>
  NDX_HD T operator()(T g, T x) const {
    return mul(g, select(x > T(0), T(1), T(0)));
  }
};
// sigmoid's from its output y: g * (y * (1 - y)).
struct SigmoidGrad {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T y) const {
    return g * (y * (T(1) - y));
  }
};
// tanh's from its output y: g * (1 - y^2).
struct TanhGrad {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T y) const {
    return g * (T(1) - y * y);
  }
};

// ---- leaky_relu's family (MXNet's LeakyReLU act_types) and their derivatives ----
// The forward functors take x; the backward ones (g, x[, gamma]) return g * d out / d x. They
// are not in kernel/gpu.h's lists: the op runs on the CPU (GPU arrays take the host fallback).
// x > 0 ? x : slope * x (FunctorArgs::a = slope); NaN stays NaN.
struct LeakyRelu {
  static constexpr unsigned kTypes = kFloatTypes;
  double slope = 0;
  LeakyRelu() = default;
  explicit LeakyRelu(const FunctorArgs& a) : slope(a.a) {}
  template <class T>
  NDX_HD T operator()(T x) const {
    return select(x > T(0), x, x * T(slope));
  }
};
struct LeakyReluGrad {  // g * (x > 0 ? 1 : slope)
  static constexpr unsigned kTypes = kFloatTypes;
  double slope = 0;
  LeakyReluGrad() = default;
  explicit LeakyReluGrad(const FunctorArgs& a) : slope(a.a) {}
  template <class T>
  NDX_HD T operator()(T g, T x) const {
    return select(x > T(0), g, g * T(slope));
  }
};
// prelu: the slope is an input (gamma, broadcast along the channel axis).
struct Prelu {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x, T gamma) const {
    return select(x > T(0), x, x * gamma);
  }
};
struct PreluGrad {  // d / d x: g * (x > 0 ? 1 : gamma)
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T x, T gamma) const {
    return select(x > T(0), g, g * gamma);
  }
};
struct PreluGradGamma {  // d / d gamma, before the sum over the other axes: g * min(x, 0)
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T x) const {
    return select(x > T(0), T(0), g * x);
  }
};
// x > 0 ? x : slope * (exp(x) - 1), FunctorArgs::a = slope.
struct Elu {
  static constexpr unsigned kTypes = kFloatTypes;
  double slope = 0;
  Elu() = default;
  explicit Elu(const FunctorArgs& a) : slope(a.a) {}
  template <class T>
  NDX_HD T operator()(T x) const {
    return select(x > T(0), x, T(slope) * expm1(x));
  }
};
struct EluGrad {  // g * (x > 0 ? 1 : slope * exp(x))
  static constexpr unsigned kTypes = kFloatTypes;
  double slope = 0;
  EluGrad() = default;
  explicit EluGrad(const FunctorArgs& a) : slope(a.a) {}
  template <class T>
  NDX_HD T operator()(T g, T x) const {
    return select(x > T(0), g, g * (T(slope) * exp(x)));
  }
};
// lambda * (x > 0 ? x : alpha * (exp(x) - 1)) with SELU's fixed lambda and alpha.
struct Selu {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return T(1.0507009873554804934) * select(x > T(0), x, T(1.6732632423543772848) * expm1(x));
  }
};
struct SeluGrad {  // g * lambda * (x > 0 ? 1 : alpha * exp(x))
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T x) const {
    return T(1.0507009873554804934) * select(x > T(0), g, g * (T(1.6732632423543772848) * exp(x)));
  }
};
// 0.5 x (1 + erf(x / sqrt 2)) (unary-inl.h's Gelu, named apart: both headers share a namespace).
struct GeluErf {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return T(0.5) * x * (T(1) + erf(x * T(0.70710678118654752440)));
  }
};
struct GeluErfGrad {  // g * (Phi(x) + x phi(x)), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T x) const {
    const T cdf = T(0.5) * (T(1) + erf(x * T(0.70710678118654752440)));
    const T pdf = T(0.39894228040143267794) * exp(T(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};
// 0.5 x (1 + tanh(c (x + k x^3))), c = sqrt(2 / pi), k = 0.044715: GELU's tanh approximation.
struct GeluTanh {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    const T u = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
    return T(0.5) * x * (T(1) + tanh(u));
  }
};
struct GeluTanhGrad {  // g * (0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2)), t = tanh(u)
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T g, T x) const {
    const T c = T(0.79788456080286535588);
    const T t = tanh(c * (x + T(0.044715) * x * x * x));
    const T du = c * (T(1) + T(3 * 0.044715) * x * x);
    return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du);
  }
};

// ---- softmax / log_softmax: row ops (kernel/rowwise-inl.h) and the same pieces as
// elementwise functors for axes other than the last ----
struct Softmax {
  using R1 = MaxReducer;
  using R2 = SumReducer;
  static constexpr bool kStorePre = true;
  template <class T>
  NDX_HD T pre(T x, T max) const {
    return exp_nonpositive(x - max);
  }
  template <class T>
  NDX_HD T post(T e, T, T sum) const {
    return e / sum;
  }
  // The CPU row kernel's last pass (kernel/rowwise-inl.h) takes one reciprocal a row and a
  // multiply an element, as PyTorch's: a vector division an element took about a sixth of a
  // 4096 x 1024 softmax on AVX-512. Results differ from e / sum by at most an ulp or so.
  template <class T>
  T row_factor(T sum) const {
    return T(1) / sum;
  }
  template <class T>
  T post_with(T e, T, T inverse) const {
    return e * inverse;
  }
};
struct LogSoftmax {
  using R1 = MaxReducer;
  using R2 = SumReducer;
  static constexpr bool kStorePre = false;
  template <class T>
  NDX_HD T pre(T x, T max) const {
    return exp_nonpositive(x - max);
  }
  template <class T>
  NDX_HD T post(T x, T max, T sum) const {
    return (x - max) - log(sum);
  }
  // The row's log(sum) once rather than a vector log per element: the same value (the same
  // vector log of the same lanes), so results are unchanged.
  template <class T>
  T row_factor(T sum) const {
    return log(sum);
  }
  template <class T>
  T post_with(T x, T max, T log_sum) const {
    return (x - max) - log_sum;
  }
};
struct ExpMinus {  // exp(x - m)
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x, T m) const {
    return exp(x - m);
  }
};
struct DivideRows {  // e / s
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T e, T s) const {
    return e / s;
  }
};
struct LogSoftmaxOut {  // x - m - log(s)
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x, T m, T s) const {
    return (x - m) - log(s);
  }
};

// ---- layer_norm / batch_norm ----
struct SquaredDiff {  // (x - m)^2
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x, T m) const {
    const T d = x - m;
    return d * d;
  }
};
struct SqrtPlusEps {  // sqrt(v + eps), eps = FunctorArgs::a
  static constexpr unsigned kTypes = kFloatTypes;
  double eps = 0;
  SqrtPlusEps() = default;
  explicit SqrtPlusEps(const FunctorArgs& a) : eps(a.a) {}
  template <class T>
  NDX_HD T operator()(T v) const {
    return sqrt(v + T(eps));
  }
};
struct InvSqrtPlusEps {  // 1 / sqrt(v + eps)
  static constexpr unsigned kTypes = kFloatTypes;
  double eps = 0;
  InvSqrtPlusEps() = default;
  explicit InvSqrtPlusEps(const FunctorArgs& a) : eps(a.a) {}
  template <class T>
  NDX_HD T operator()(T v) const {
    return T(1) / sqrt(v + T(eps));
  }
};
struct NormalizeDiv {  // (x - mean) / std * gamma + beta
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x, T mean, T sd, T gamma, T beta) const {
    return (x - mean) / sd * gamma + beta;
  }
};
struct NormalizeMul {  // (x - mean) * inv_std * gamma + beta
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x, T mean, T inv, T gamma, T beta) const {
    return (x - mean) * inv * gamma + beta;
  }
};
struct Momentum {  // running * m + batch * (1 - m), m = FunctorArgs::a
  static constexpr unsigned kTypes = kFloatTypes;
  double m = 0;
  Momentum() = default;
  explicit Momentum(const FunctorArgs& a) : m(a.a) {}
  template <class T>
  NDX_HD T operator()(T running, T batch) const {
    return running * T(m) + batch * T(1 - m);
  }
};
struct XHatDiv {  // (x - mean) / std
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x, T mean, T sd) const {
    return (x - mean) / sd;
  }
};
struct XHatMul {  // (x - mean) * inv_std
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x, T mean, T inv) const {
    return (x - mean) * inv;
  }
};
struct Product {
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return a * b;
  }
};
// The data gradient of a normalization over n values from its sums (FunctorArgs::a = 1 / n):
// (d - sum_d / n - xhat * sum_dx / n) * scale.
struct NormGrad {
  static constexpr unsigned kTypes = kFloatTypes;
  double inv_n = 0;
  NormGrad() = default;
  explicit NormGrad(const FunctorArgs& a) : inv_n(a.a) {}
  template <class T>
  NDX_HD T operator()(T d, T xhat, T sum_d, T sum_dx, T scale) const {
    return (d - sum_d * T(inv_n) - xhat * (sum_dx * T(inv_n))) * scale;
  }
};
struct ScaledProduct {  // a * b * c
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T a, T b, T c) const {
    return a * b * c;
  }
};
struct OneOver {  // 1 / x (batch_norm's inverse deviations; np.reciprocal is the unary op's)
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T x) const {
    return T(1) / x;
  }
};
struct Plus {  // a + b (a bias)
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return a + b;
  }
};
// ---- optimizer updates (operator/optimizer.cc) ----
// The gradient term of the update rules, FunctorArgs b..d = wd, rescale, clip (clip = inf when
// there is no clipping; a NaN gradient stays NaN, the comparison being false). SGD's is
// clip(rescale * g, clip) + wd * w; Adam's clip(rescale * g + wd * w, clip), as MXNet's
// adam_update adds the decay before clipping (kDecayFirst). The decayed sum goes through
// mul_add, so vector lanes and scalar tails round it alike.
template <bool kDecayFirst>
struct GradTerm {
  double wd = 0, rescale = 1, clip = 0;
  GradTerm() = default;
  explicit GradTerm(const FunctorArgs& a) : wd(a.b), rescale(a.c), clip(a.d) {}
  template <class T>
  NDX_HD T operator()(T w, T g) const {
    if (wd == 0) return clipped(g * T(rescale));  // (no decay: w is not read)
    if constexpr (kDecayFirst) return clipped(mul_add(w, T(wd), g * T(rescale)));
    return mul_add(w, T(wd), clipped(g * T(rescale)));
  }
  template <class T>
  NDX_HD T clipped(T s) const {
    return select(abs(s) > T(clip), copysign(T(clip), s), s);
  }
};
using SgdTerm = GradTerm<false>;
using AdamTerm = GradTerm<true>;
struct SgdStep {  // w - lr * term, FunctorArgs a = lr
  static constexpr unsigned kTypes = kFloatTypes;
  double lr = 0;
  SgdTerm term;
  SgdStep() = default;
  explicit SgdStep(const FunctorArgs& a) : lr(a.a), term(a) {}
  template <class T>
  NDX_HD T operator()(T w, T g) const {
    return w - term(w, g) * T(lr);
  }
};
struct SgdMomentum {  // the new momentum: momentum * mom - lr * term, FunctorArgs e = momentum
  static constexpr unsigned kTypes = kFloatTypes;
  double lr = 0, momentum = 0;
  SgdTerm term;
  SgdMomentum() = default;
  explicit SgdMomentum(const FunctorArgs& a) : lr(a.a), momentum(a.e), term(a) {}
  template <class T>
  NDX_HD T operator()(T mom, T w, T g) const {
    return mom * T(momentum) - term(w, g) * T(lr);
  }
};
// Adam's moments, updated in place: decay * moment + (1 - decay) * term, the term squared for
// the second moment; FunctorArgs b..d as AdamTerm's, e = decay (beta1 or beta2).
struct AdamMean {
  static constexpr unsigned kTypes = kFloatTypes;
  double decay = 0;
  AdamTerm term;
  AdamMean() = default;
  explicit AdamMean(const FunctorArgs& a) : decay(a.e), term(a) {}
  template <class T>
  NDX_HD T operator()(T mean, T w, T g) const {
    return mean * T(decay) + term(w, g) * T(1 - decay);
  }
};
struct AdamVar {
  static constexpr unsigned kTypes = kFloatTypes;
  double decay = 0;
  AdamTerm term;
  AdamVar() = default;
  explicit AdamVar(const FunctorArgs& a) : decay(a.e), term(a) {}
  template <class T>
  NDX_HD T operator()(T var, T w, T g) const {
    const T t = term(w, g);
    return var * T(decay) + t * t * T(1 - decay);
  }
};
// Adam's step from the updated moments: w - mean / (sqrt(var) + epsilon) * lr, FunctorArgs
// a = lr, b = epsilon.
struct AdamStep {
  static constexpr unsigned kTypes = kFloatTypes;
  double lr = 0, epsilon = 0;
  AdamStep() = default;
  explicit AdamStep(const FunctorArgs& a) : lr(a.a), epsilon(a.b) {}
  template <class T>
  NDX_HD T operator()(T w, T mean, T var) const {
    return w - mean / (sqrt(var) + T(epsilon)) * T(lr);
  }
};
// AdamW's step (decoupled weight decay): w - (mean / (sqrt(var) + epsilon) + wd * w) * lr,
// FunctorArgs a = lr, b = epsilon, c = wd. CPU only (operator/optimizer.cc's multi-weight op).
struct AdamWStep {
  static constexpr unsigned kTypes = kFloatTypes;
  double lr = 0, epsilon = 0, wd = 0;
  AdamWStep() = default;
  explicit AdamWStep(const FunctorArgs& a) : lr(a.a), epsilon(a.b), wd(a.c) {}
  template <class T>
  NDX_HD T operator()(T w, T mean, T var) const {
    const T d = mean / (sqrt(var) + T(epsilon));
    return w - (wd == 0 ? d : d + w * T(wd)) * T(lr);
  }
};
struct DivideBoth {  // a / b
  static constexpr unsigned kTypes = kFloatTypes;
  template <class T>
  NDX_HD T operator()(T a, T b) const {
    return a / b;
  }
};

#endif  // NDX_OPERATOR_MATH_NN_INL_H_
