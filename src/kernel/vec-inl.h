// The SIMD half of the functor vocabulary, compiled once per Highway target: Vec<T> (a full
// vector of float or double with arithmetic operators), Mask<T>, and the same function names
// as kernel/math/scalar-inl.h (select, is_nan, max, exp, tanh, ...), so one functor body
//   template <class T> T operator()(T x) const { return T(1) / (T(1) + exp(-x)); }
// serves scalars of every dtype and vectors alike.
//
// Transcendentals come from Highway's contrib/math with the special values it leaves to the
// caller fixed here (NaN, +-inf, 0, out-of-domain inputs); sin / cos of large arguments,
// where its range reduction loses accuracy, fall back to libm lane by lane. erf is ours.
// tests/cpp/test_vmath.cc measures every function's ULP error against long double.
#if defined(NDX_KERNEL_VEC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_KERNEL_VEC_INL_H_
#undef NDX_KERNEL_VEC_INL_H_
#else
#define NDX_KERNEL_VEC_INL_H_
#endif

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <hwy/cache_control.h>
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "kernel/config.h"
#include "kernel/math/wrap.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#include "kernel/math/scalar-inl.h"

// Whether this target compiles kernels of compute type C. Only float and double have a SIMD
// path; the other types (bool, integers, complex) run scalar loops the compiler vectorizes,
// compiled for AVX2 and the static (baseline) target only (kernel::ElementwiseFn and ReduceFn
// route them; NDX_DISPATCH_NONFLOAT). Compiling them for AVX-512 too cost a third more build
// time of the op files (about 60 s a file on the 2-core dev VM) for loops that gain little
// there; the baseline alone (SSE2) made integer sums 3x slower than AVX2's.
template <class C>
constexpr bool compiled_for_target() {
  return std::is_floating_point_v<C> || HWY_TARGET == HWY_STATIC_TARGET || HWY_TARGET == HWY_AVX2;
}

template <class T>
struct Mask;

template <class T>
struct Vec {
  static_assert(std::is_floating_point_v<T>, "Vec is for float and double");
  using Scalar = T;
  using D = hn::ScalableTag<T>;
  using Raw = hn::Vec<D>;
  Raw v;

  HWY_INLINE Vec() = default;
  HWY_INLINE explicit Vec(Raw r) : v(r) {}
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
  HWY_INLINE explicit Vec(S s) : v(hn::Set(D(), static_cast<T>(s))) {}

  static HWY_INLINE size_t lanes() { return hn::Lanes(D()); }
  static HWY_INLINE Vec load(const T* p) { return Vec(hn::LoadU(D(), p)); }
  HWY_INLINE void store(T* p) const { hn::StoreU(v, D(), p); }

  friend HWY_INLINE Vec operator+(Vec a, Vec b) { return Vec(hn::Add(a.v, b.v)); }
  friend HWY_INLINE Vec operator-(Vec a, Vec b) { return Vec(hn::Sub(a.v, b.v)); }
  friend HWY_INLINE Vec operator*(Vec a, Vec b) { return Vec(hn::Mul(a.v, b.v)); }
  friend HWY_INLINE Vec operator/(Vec a, Vec b) { return Vec(hn::Div(a.v, b.v)); }
  friend HWY_INLINE Vec operator-(Vec a) { return Vec(hn::Neg(a.v)); }
  friend HWY_INLINE Mask<T> operator==(Vec a, Vec b) { return Mask<T>{hn::Eq(a.v, b.v)}; }
  friend HWY_INLINE Mask<T> operator!=(Vec a, Vec b) { return Mask<T>{hn::Ne(a.v, b.v)}; }
  friend HWY_INLINE Mask<T> operator<(Vec a, Vec b) { return Mask<T>{hn::Lt(a.v, b.v)}; }
  friend HWY_INLINE Mask<T> operator<=(Vec a, Vec b) { return Mask<T>{hn::Le(a.v, b.v)}; }
  friend HWY_INLINE Mask<T> operator>(Vec a, Vec b) { return Mask<T>{hn::Gt(a.v, b.v)}; }
  friend HWY_INLINE Mask<T> operator>=(Vec a, Vec b) { return Mask<T>{hn::Ge(a.v, b.v)}; }
};

template <class T>
struct Mask {
  hn::Mask<hn::ScalableTag<T>> m;
  friend HWY_INLINE Mask operator|(Mask a, Mask b) { return Mask{hn::Or(a.m, b.m)}; }
  friend HWY_INLINE Mask operator&(Mask a, Mask b) { return Mask{hn::And(a.m, b.m)}; }
  friend HWY_INLINE Mask operator!(Mask a) { return Mask{hn::Not(a.m)}; }
};

// Whether T is one of the Vec types (functors and loops branch on it at compile time).
template <class T>
inline constexpr bool is_vec_v = false;
template <class T>
inline constexpr bool is_vec_v<Vec<T>> = true;

template <class T>
HWY_INLINE Vec<T> select(Mask<T> c, Vec<T> a, Vec<T> b) {
  return Vec<T>(hn::IfThenElse(c.m, a.v, b.v));
}
template <class T>
HWY_INLINE Mask<T> is_nan(Vec<T> x) {
  return Mask<T>{hn::IsNaN(x.v)};
}
template <class T>
HWY_INLINE Mask<T> is_inf(Vec<T> x) {
  return Mask<T>{hn::IsInf(x.v)};
}
// b when either is NaN, like the scalar versions (and x86's maxps / minps, used directly).
template <class T>
HWY_INLINE Vec<T> max(Vec<T> a, Vec<T> b) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
  return Vec<T>(hn::Max(a.v, b.v));
#else
  return select(a > b, a, b);
#endif
}
template <class T>
HWY_INLINE Vec<T> min(Vec<T> a, Vec<T> b) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
  return Vec<T>(hn::Min(a.v, b.v));
#else
  return select(a < b, a, b);
#endif
}
template <class T>
HWY_INLINE Vec<T> add(Vec<T> a, Vec<T> b) {
  return a + b;
}
template <class T>
HWY_INLINE Vec<T> sub(Vec<T> a, Vec<T> b) {
  return a - b;
}
template <class T>
HWY_INLINE Vec<T> mul(Vec<T> a, Vec<T> b) {
  return a * b;
}
template <class T>
HWY_INLINE Vec<T> neg(Vec<T> a) {
  return -a;
}
template <class T>
HWY_INLINE Vec<T> abs(Vec<T> x) {
  return Vec<T>(hn::Abs(x.v));
}
template <class T>
HWY_INLINE Vec<T> mul_add(Vec<T> a, Vec<T> b, Vec<T> c) {
  return Vec<T>(hn::MulAdd(a.v, b.v, c.v));
}
template <class T>
HWY_INLINE Vec<T> copysign(Vec<T> magnitude, Vec<T> sign) {
  return Vec<T>(hn::CopySign(magnitude.v, sign.v));
}
template <class T>
HWY_INLINE Vec<T> floor(Vec<T> x) {
  return Vec<T>(hn::Floor(x.v));
}
template <class T>
HWY_INLINE Vec<T> ceil(Vec<T> x) {
  return Vec<T>(hn::Ceil(x.v));
}
template <class T>
HWY_INLINE Vec<T> trunc(Vec<T> x) {
  return Vec<T>(hn::Trunc(x.v));
}
template <class T>
HWY_INLINE Vec<T> rint(Vec<T> x) {  // ties to even, as np.rint
  return Vec<T>(hn::Round(x.v));
}
template <class T>
HWY_INLINE Vec<T> sqrt(Vec<T> x) {
  return Vec<T>(hn::Sqrt(x.v));
}

namespace vmath {
template <class T>
HWY_INLINE Vec<T> inf() {
  return Vec<T>(std::numeric_limits<T>::infinity());
}
template <class T>
HWY_INLINE Vec<T> nan() {
  return Vec<T>(std::numeric_limits<T>::quiet_NaN());
}

// Lanes where `bad` holds get scalar_fn(x) (libm); rare, so out of line.
template <class T, class F>
HWY_NOINLINE Vec<T> patch_lanes(Vec<T> x, Vec<T> r, Mask<T> bad, F scalar_fn) {
  using D = typename Vec<T>::D;
  const D d;
  constexpr size_t kMax = HWY_MAX_BYTES / sizeof(T);
  HWY_ALIGN T xs[kMax], rs[kMax], flags[kMax];
  hn::Store(x.v, d, xs);
  hn::Store(r.v, d, rs);
  hn::Store(hn::VecFromMask(d, bad.m), d, flags);
  for (size_t i = 0; i < hn::Lanes(d); ++i)
    if (flags[i] != T(0)) rs[i] = scalar_fn(xs[i]);
  return Vec<T>(hn::Load(d, rs));
}
template <class T, class F>
HWY_INLINE Vec<T> patch_if(Vec<T> x, Vec<T> r, Mask<T> bad, F scalar_fn) {
  if (HWY_LIKELY(hn::AllFalse(typename Vec<T>::D(), bad.m))) return r;
  return patch_lanes(x, r, bad, scalar_fn);
}

// Where Highway's sin / cos stay within 4 ULP (measured by test_vmath up to 1e6 for float).
// Without FMA (the baseline target) the range reduction loses bits sooner: cos of float32
// -92807.36 was 8e6 ULP off there, of float64 8.9e8 5e11 ULP.
template <class T>
HWY_INLINE Vec<T> trig_limit() {
#if HWY_NATIVE_FMA
  return Vec<T>(sizeof(T) == 4 ? 1e5 : 1e9);
#else
  return Vec<T>(sizeof(T) == 4 ? 8192 : 1e7);
#endif
}
}  // namespace vmath

// The smallest x whose exp rounds to infinity (Highway's reduction breaks down beyond it).
template <class T>
HWY_INLINE Vec<T> exp_overflow() {
  return Vec<T>(sizeof(T) == 4 ? 88.72283935546875 : 709.78271289338409);
}
namespace vmath {
// exp(y) for float32 y where 2^k, k = round(y / ln 2), is a normal exponent ([-86, 88]):
// y = k ln2 + r (|r| <= ln2 / 2, k by the 1.5 * 2^23 rounding trick, ln2 split so k * ln2_hi
// is exact), exp(r) = 1 + r + r^2 Q(r), and 2^k added to the exponent bits. Q was fitted by
// least squares on Chebyshev nodes (relative error): degree 3 gives 2.4 ULP (exp_0_40, for
// tanh and softmax, which need no more), degree 4 gives 0.98 ULP (exp; 4e-9 before rounding).
using VecF32 = hn::Vec<hn::ScalableTag<float>>;
// y = k ln2 + r: r, and t, whose low mantissa bits hold k.
struct ExpReduced {
  VecF32 t, r;
};
HWY_INLINE ExpReduced exp_reduce(VecF32 y) {
  const hn::ScalableTag<float> d;
  const auto magic = hn::Set(d, 12582912.0f);
  const auto t = hn::MulAdd(y, hn::Set(d, 1.44269504088896341f), magic);
  const auto kf = hn::Sub(t, magic);
  auto r = hn::NegMulAdd(kf, hn::Set(d, 0.693145751953125f), y);
  r = hn::NegMulAdd(kf, hn::Set(d, 1.4286068202862268e-06f), r);
  return {t, r};
}
// e^r - 1 = r + r^2 Q(r), without the rounding of a 1 added.
template <bool kDegree4>
HWY_INLINE VecF32 expm1_reduced(VecF32 r) {
  const hn::ScalableTag<float> d;
  VecF32 q;
  if constexpr (kDegree4) {
    q = hn::Set(d, 0.0013751407895834938f);
    q = hn::MulAdd(q, r, hn::Set(d, 0.008368916341375321f));
    q = hn::MulAdd(q, r, hn::Set(d, 0.04166953310922312f));
    q = hn::MulAdd(q, r, hn::Set(d, 0.16666518459980356f));
    q = hn::MulAdd(q, r, hn::Set(d, 0.49999988595112776f));
  } else {
    q = hn::Set(d, 0.008333837950278743f);
    q = hn::MulAdd(q, r, hn::Set(d, 0.04189857793821206f));
    q = hn::MulAdd(q, r, hn::Set(d, 0.16666886383480503f));
    q = hn::MulAdd(q, r, hn::Set(d, 0.4999914257250817f));
  }
  return hn::MulAdd(hn::Mul(r, r), q, r);
}
// The bits of 2^k added to v's: t's low mantissa bits hold k, and magic's bits shifted by 23
// wrap to zero, so t's bits shifted by 23 are k's exponent bits (no float-to-int conversion
// and its range fixups).
HWY_INLINE VecF32 times_2_to_k(VecF32 v, VecF32 t) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const auto scale = hn::ShiftLeft<23>(hn::BitCast(di, t));
  return hn::BitCast(d, hn::Add(hn::BitCast(di, v), scale));
}
template <bool kDegree4>
HWY_INLINE VecF32 exp_f32_core(VecF32 y) {
  const auto [t, r] = exp_reduce(y);
  const auto p = hn::Add(expm1_reduced<kDegree4>(r), hn::Set(hn::ScalableTag<float>(), 1.0f));
  return times_2_to_k(p, t);
}
// Half the instructions of Highway's Exp, whose range checks cover every input: the
// 16M-element exp row took 12.0 ms against NumPy's 21.2 on an Emerald Rapids host (1.77x)
// with Highway's, compute-bound where a + b streams at twice the rate.
HWY_INLINE hn::Vec<hn::ScalableTag<float>> exp_f32_normal(hn::Vec<hn::ScalableTag<float>> y) {
  return exp_f32_core<true>(y);
}
}  // namespace vmath
template <class T>
HWY_INLINE Vec<T> exp(Vec<T> x) {
  using D = typename Vec<T>::D;
  auto general = [&] {  // every input: overflow, underflow to denormals and 0, inf, NaN
    Vec<T> r(hn::Exp(D(), x.v));
    r = select(x >= exp_overflow<T>(), vmath::inf<T>(), r);
    return select(is_nan(x), x, r);
  };
  if constexpr (std::is_same_v<T, float>) {
    const D d;
    const auto normal = hn::And(hn::Ge(x.v, hn::Set(d, -86.0f)), hn::Le(x.v, hn::Set(d, 88.0f)));
    const auto fast = vmath::exp_f32_normal(x.v);
    if (HWY_LIKELY(hn::AllTrue(d, normal))) return Vec<float>(fast);
    return Vec<float>(hn::IfThenElse(normal, fast, general().v));
  } else {
    return general();
  }
}
template <class T>
HWY_INLINE Vec<T> expm1(Vec<T> x) {
  using D = typename Vec<T>::D;
  Vec<T> r(hn::Expm1(D(), x.v));
  r = select(x >= exp_overflow<T>(), vmath::inf<T>(), r);
  r = select(x == Vec<T>(0), x, r);  // keeps the sign of -0
  return select(is_nan(x), x, r);
}
// The special values the log family leaves to its caller: log(pole) = -inf, log(inf) = inf,
// NaN below the domain and for NaN. (pole is 0, or -1 for log1p.)
template <class T>
HWY_INLINE Vec<T> log_special(Vec<T> x, Vec<T> r, Vec<T> pole) {
  r = select(x == pole, -vmath::inf<T>(), r);
  r = select(x == vmath::inf<T>(), x, r);
  return select((x < pole) | is_nan(x), vmath::nan<T>(), r);
}
namespace vmath {
// log of positive normal float32 (other lanes are fixed by the caller). x = 2^k y with y in
// [sqrt(1/2), sqrt(2)), f = y - 1 (exact), s = f / (2 + f), and
// log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)) with R(z) = z P(z), P of degree 2 fitted (least
// squares, Chebyshev nodes) to (2 atanh(s) - 2s) / s^3 -- the arrangement of musl's log, which
// keeps the error of s in a small term: 0.85 ULP. 1 / (2 + f) comes from the reciprocal
// estimate and Newton steps: Highway's Log divides, and the division made it 1.9x NumPy
// against this one's 2.1x (16M values, the AVX-512 host).
HWY_INLINE Vec<float> log_f32(Vec<float> x) {
  using D = Vec<float>::D;
  const D d;
  const hn::RebindToSigned<D> di;
  const auto sqrt_half = hn::Set(di, 0x3F3504F3);
  const auto t = hn::Sub(hn::BitCast(di, x.v), sqrt_half);
  const auto kf = hn::ConvertTo(d, hn::ShiftRight<23>(t));  // arithmetic shift
  const auto y = hn::BitCast(d, hn::Add(hn::And(t, hn::Set(di, 0x7FFFFF)), sqrt_half));
  const auto one = hn::Set(d, 1.0f);
  const auto f = hn::Sub(y, one);
  const auto den = hn::Add(f, hn::Set(d, 2.0f));
  auto rcp = hn::ApproximateReciprocal(den);
  rcp = hn::MulAdd(rcp, hn::NegMulAdd(den, rcp, one), rcp);
#if HWY_TARGET > HWY_AVX3
  rcp = hn::MulAdd(rcp, hn::NegMulAdd(den, rcp, one), rcp);
#endif
  const auto s = hn::Mul(f, rcp);
  const auto z = hn::Mul(s, s);
  auto p = hn::Set(d, 0.29969080099202955f);
  p = hn::MulAdd(p, z, hn::Set(d, 0.39973240495444506f));
  p = hn::MulAdd(p, z, hn::Set(d, 0.6666682073247577f));
  const auto r = hn::Mul(z, p);
  const auto hfsq = hn::Mul(hn::Mul(hn::Set(d, 0.5f), f), f);
  const auto inner =
      hn::MulAdd(s, hn::Add(hfsq, r), hn::Mul(kf, hn::Set(d, 1.4286068202862268e-06f)));
  const auto res = hn::Sub(f, hn::Sub(hfsq, inner));
  return Vec<float>(hn::MulAdd(kf, hn::Set(d, 0.693145751953125f), res));
}
}  // namespace vmath
template <class T>
HWY_INLINE Vec<T> log(Vec<T> x) {
  if constexpr (std::is_same_v<T, float>) {
    // Vectors of positive normal finite values only (the common case) need no fixing: one
    // test instead of patch_if's and log_special's eight compares and selects (16M values:
    // 1.83x -> NumPy on the Emerald Rapids host).
    const auto normal = (x >= Vec<float>(1.17549435e-38f)) & (x < vmath::inf<float>());
    if (HWY_LIKELY(hn::AllTrue(Vec<float>::D(), normal.m))) return vmath::log_f32(x);
    // Subnormal inputs (rare) go to libm; zero, negatives, inf and NaN to log_special.
    const Vec<float> r = vmath::patch_if(x, vmath::log_f32(x),
                                         (x > Vec<float>(0)) & (x < Vec<float>(1.17549435e-38f)),
                                         [](float v) { return std::log(v); });
    return log_special(x, r, Vec<T>(0));
  } else {
    return log_special(x, Vec<T>(hn::Log(typename Vec<T>::D(), x.v)), Vec<T>(0));
  }
}
template <class T>
HWY_INLINE Vec<T> log1p(Vec<T> x) {
  return log_special(x, Vec<T>(hn::Log1p(typename Vec<T>::D(), x.v)), Vec<T>(-1));
}
template <class T>
HWY_INLINE Vec<T> log2(Vec<T> x) {
  return log_special(x, Vec<T>(hn::Log2(typename Vec<T>::D(), x.v)), Vec<T>(0));
}
template <class T>
HWY_INLINE Vec<T> log10(Vec<T> x) {
  return log_special(x, Vec<T>(hn::Log10(typename Vec<T>::D(), x.v)), Vec<T>(0));
}
template <class T>
HWY_INLINE Vec<T> sin(Vec<T> x) {
  using D = typename Vec<T>::D;
  Vec<T> r(hn::Sin(D(), x.v));
  r = select(x == Vec<T>(0), x, r);  // keeps the sign of -0
  return vmath::patch_if(x, r, !(abs(x) <= vmath::trig_limit<T>()),
                         [](T v) { return static_cast<T>(std::sin(v)); });
}
template <class T>
HWY_INLINE Vec<T> cos(Vec<T> x) {
  using D = typename Vec<T>::D;
  Vec<T> r(hn::Cos(D(), x.v));
  return vmath::patch_if(x, r, !(abs(x) <= vmath::trig_limit<T>()),
                         [](T v) { return static_cast<T>(std::cos(v)); });
}
namespace vmath {
// exp(y) for float32 y in [0, 40] (and softmax's [-86, 40]): exp_f32_core's cheaper Q.
HWY_INLINE hn::Vec<hn::ScalableTag<float>> exp_0_40(hn::Vec<hn::ScalableTag<float>> y) {
  return exp_f32_core<false>(y);
}

// tanh of float32: e / (e + 2) with e = expm1(2|x|), and x's sign. expm1 comes from exp's
// reduction without exp's 1: 2|x| = k ln2 + r, e = 2^k m + (2^k - 1) with m = e^r - 1 from
// the degree-4 Q, one FMA (2^k m is exact). An error in e shrinks by 2 / (e + 2) in the
// quotient, so one formula holds from 0 (where e = m, accurate) to 20, past which tanh rounds
// to 1 (and from 9.010914 the result is set to 1: the quotient could round just below it):
// at most 3.0 ULP (test_vmath.cc; where e + 2 rounds, near 0.06). 25 vector instructions;
// the two-branch form before it (an odd polynomial below 0.55, 1 - 2 / (e^2|x| +
// 1) above) had 30 and 2.0 ULP, and ran the 16M-value row at 1.76-1.84x NumPy on the Emerald
// Rapids host, compute-bound. (A rational x P(x^2) / Q(x^2) has 17 but rounds to 6 ULP near 1.)
HWY_INLINE Vec<float> tanh_f32(Vec<float> x) {
  using D = Vec<float>::D;
  const D d;
  const auto abs = hn::Abs(x.v);
  const auto limit = hn::Set(d, 20.0f);
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  // x86's min returns its second operand where either is NaN: a NaN stays NaN through the rest.
  const auto a = hn::Min(limit, abs);
#else
  const auto a = hn::IfThenElse(hn::Gt(abs, limit), limit, abs);  // (NaN is not greater)
#endif
  const auto [t, r] = exp_reduce(hn::Add(a, a));
  const auto two_k = times_2_to_k(hn::Set(d, 1.0f), t);
  const auto e = hn::MulAdd(expm1_reduced<true>(r), two_k, hn::Sub(two_k, hn::Set(d, 1.0f)));
  const auto den = hn::Add(e, hn::Set(d, 2.0f));
  // 1 / (e + 2) from the reciprocal estimate and Newton steps, cheaper than a division: one
  // step from AVX-512's 14-bit estimate, two from 12 bits.
  const auto one = hn::Set(d, 1.0f);
  auto rcp = hn::ApproximateReciprocal(den);
  rcp = hn::MulAdd(rcp, hn::NegMulAdd(den, rcp, one), rcp);
#if HWY_TARGET > HWY_AVX3
  rcp = hn::MulAdd(rcp, hn::NegMulAdd(den, rcp, one), rcp);
#endif
  // From 9.010914 on tanh rounds to 1, where e * (1 / (e + 2)) can round just below it.
  const auto res = hn::IfThenElse(hn::Ge(abs, hn::Set(d, 9.010914f)), one, hn::Mul(e, rcp));
  return Vec<float>(hn::CopySign(res, x.v));
}
}  // namespace vmath
template <class T>
HWY_INLINE Vec<T> tanh(Vec<T> x) {
  using D = typename Vec<T>::D;
  if constexpr (std::is_same_v<T, float>) {
    return vmath::tanh_f32(x);
  } else {
    return Vec<T>(hn::Tanh(D(), x.v));
  }
}

// exp of an argument that is normally <= 0: softmax's x - max. For float32, exp_0_40's
// reduction and polynomial (2.4 ULP), whose exponent arithmetic holds on [-86, 40] (below,
// 2^k would leave the normal range); lanes outside it, NaN among them, take exp (so a row
// with a huge spread still gets its denormal results). Cheaper than exp where the row's
// values are within 86 of its maximum, which is where softmax spends its time.
template <class T>
HWY_INLINE Vec<T> exp_nonpositive(Vec<T> x) {
  if constexpr (std::is_same_v<T, float>) {
    using D = Vec<float>::D;
    const D d;
    const auto outside =
        hn::Not(hn::And(hn::Ge(x.v, hn::Set(d, -86.0f)), hn::Le(x.v, hn::Set(d, 40.0f))));
    const auto fast = vmath::exp_0_40(x.v);
    if (HWY_LIKELY(hn::AllFalse(d, outside))) return Vec<float>(fast);
    return Vec<float>(hn::IfThenElse(outside, exp(x).v, fast));
  } else {
    return exp(x);
  }
}

// The inverse trigonometric and hyperbolic functions: Highway's, with what it leaves to the
// caller set here: NaN outside the domain and for NaN, the sign of a zero input kept, and the
// values at the domain's ends and at infinity.
namespace vmath {
template <class T>
HWY_INLINE Vec<T> finish(Vec<T> x, Vec<T> r, Mask<T> out_of_domain) {
  r = select(x == Vec<T>(0), x, r);
  return select(out_of_domain | is_nan(x), nan<T>(), r);
}
}  // namespace vmath
template <class T>
HWY_INLINE Vec<T> asin(Vec<T> x) {
  return vmath::finish(x, Vec<T>(hn::Asin(typename Vec<T>::D(), x.v)), abs(x) > Vec<T>(1));
}
template <class T>
HWY_INLINE Vec<T> acos(Vec<T> x) {
  return select((abs(x) > Vec<T>(1)) | is_nan(x), vmath::nan<T>(),
                Vec<T>(hn::Acos(typename Vec<T>::D(), x.v)));
}
template <class T>
HWY_INLINE Vec<T> atan(Vec<T> x) {
  const Vec<T> r(hn::Atan(typename Vec<T>::D(), x.v));
  const Vec<T> half_pi(T(1.5707963267948966192));
  return vmath::finish(x, select(is_inf(x), copysign(half_pi, x), r), x != x);
}
template <class T>
HWY_INLINE Vec<T> asinh(Vec<T> x) {
  const Vec<T> r(hn::Asinh(typename Vec<T>::D(), x.v));
  return vmath::finish(x, select(is_inf(x), x, r), x != x);
}
template <class T>
HWY_INLINE Vec<T> acosh(Vec<T> x) {
  const Vec<T> r(hn::Acosh(typename Vec<T>::D(), x.v));
  return select((x < Vec<T>(1)) | is_nan(x), vmath::nan<T>(),
                select(x == vmath::inf<T>(), x, select(x == Vec<T>(1), Vec<T>(0), r)));
}
template <class T>
HWY_INLINE Vec<T> atanh(Vec<T> x) {
  const Vec<T> r(hn::Atanh(typename Vec<T>::D(), x.v));
  return vmath::finish(x, select(abs(x) == Vec<T>(1), copysign(vmath::inf<T>(), x), r),
                       abs(x) > Vec<T>(1));
}
template <class T>
HWY_INLINE Vec<T> sinh(Vec<T> x) {
  const Vec<T> r(hn::Sinh(typename Vec<T>::D(), x.v));
  // Highway's reduction stops short of the largest finite results: libm for those lanes.
  return vmath::finish(x,
                       vmath::patch_if(x, r, (!(abs(x) < exp_overflow<T>())) & (x == x),
                                       [](T v) { return static_cast<T>(std::sinh(v)); }),
                       x != x);
}

namespace vmath {
// patch_if for functions of two arguments.
template <class T, class F>
HWY_NOINLINE Vec<T> patch_lanes2(Vec<T> a, Vec<T> b, Vec<T> r, Mask<T> bad, F scalar_fn) {
  using D = typename Vec<T>::D;
  const D d;
  constexpr size_t kMax = HWY_MAX_BYTES / sizeof(T);
  HWY_ALIGN T as[kMax], bs[kMax], rs[kMax], flags[kMax];
  hn::Store(a.v, d, as);
  hn::Store(b.v, d, bs);
  hn::Store(r.v, d, rs);
  hn::Store(hn::VecFromMask(d, bad.m), d, flags);
  for (size_t i = 0; i < hn::Lanes(d); ++i)
    if (flags[i] != T(0)) rs[i] = scalar_fn(as[i], bs[i]);
  return Vec<T>(hn::Load(d, rs));
}
template <class T, class F>
HWY_INLINE Vec<T> patch_if2(Vec<T> a, Vec<T> b, Vec<T> r, Mask<T> bad, F scalar_fn) {
  if (HWY_LIKELY(hn::AllFalse(typename Vec<T>::D(), bad.m))) return r;
  return patch_lanes2(a, b, r, bad, scalar_fn);
}

// The exponent range of T's normal numbers.
template <class T>
HWY_INLINE Vec<T> min_exponent() {
  return Vec<T>(sizeof(T) == 4 ? -126 : -1022);
}
template <class T>
HWY_INLINE Vec<T> max_exponent() {
  return Vec<T>(sizeof(T) == 4 ? 127 : 1023);
}
// 2^n for integer-valued n in [min_exponent, max_exponent], from the exponent bits.
template <class T>
HWY_INLINE Vec<T> pow2i(Vec<T> n) {
  using D = typename Vec<T>::D;
  const D d;
  const hn::RebindToSigned<D> di;
  using I = hn::TFromD<decltype(di)>;
  constexpr int kMantissaBits = sizeof(T) == 4 ? 23 : 52;
  const auto biased = hn::Add(hn::ConvertTo(di, n.v), hn::Set(di, I(sizeof(T) == 4 ? 127 : 1023)));
  return Vec<T>(hn::BitCast(d, hn::ShiftLeft<kMantissaBits>(biased)));
}
// x's magnitude is within T's normal range, or x is zero.
template <class T>
HWY_INLINE Mask<T> normal_or_zero(Vec<T> a) {
  return (a >= Vec<T>(std::numeric_limits<T>::min())) | (a == Vec<T>(0));
}
}  // namespace vmath

// tan = sin / cos (each within about 2 ULP; test_vmath bounds the quotient).
template <class T>
HWY_INLINE Vec<T> tan(Vec<T> x) {
  using D = typename Vec<T>::D;
  Vec<T> r = Vec<T>(hn::Sin(D(), x.v)) / Vec<T>(hn::Cos(D(), x.v));
  r = select(x == Vec<T>(0), x, r);  // keeps the sign of -0
  return vmath::patch_if(x, r, !(abs(x) <= vmath::trig_limit<T>()),
                         [](T v) { return static_cast<T>(std::tan(v)); });
}
// cosh = (e^|x| + e^-|x|) / 2; past exp's overflow (cosh is finite a little further) libm.
template <class T>
HWY_INLINE Vec<T> cosh(Vec<T> x) {
  const Vec<T> a = abs(x);
  const Vec<T> e = exp(a);
  const Vec<T> r = Vec<T>(0.5) * e + Vec<T>(0.5) / e;
  return vmath::patch_if(x, r, (!(a < exp_overflow<T>())) & (x == x),
                         [](T v) { return static_cast<T>(std::cosh(v)); });
}
// 2^x = 2^f 2^n with n = round(x) and |f| <= 1/2 (so exp's argument f ln 2 is small and its
// rounding costs under half an ULP); 2^n from the exponent bits. Outside the normal exponent
// range (results that are subnormal, infinite or NaN): libm.
template <class T>
HWY_INLINE Vec<T> exp2(Vec<T> x) {
  const Vec<T> n(hn::Round(x.v));
  const Vec<T> f = x - n;
  const Vec<T> r = exp(f * Vec<T>(0.69314718055994530942)) * vmath::pow2i(n);
  return vmath::patch_if(x, r, !((x >= vmath::min_exponent<T>()) & (x <= vmath::max_exponent<T>())),
                         [](T v) { return static_cast<T>(std::exp2(v)); });
}
// cbrt: exp(log|x| / 3) (within a few dozen ULP) and one Newton step t = (2t + a / t^2) / 3,
// which brings it within the bound; the sign, zeros, infinities and NaN pass through, and
// subnormal inputs go to libm.
template <class T>
HWY_INLINE Vec<T> cbrt(Vec<T> x) {
  const Vec<T> a = abs(x);
  Vec<T> t = exp(log(a) * Vec<T>(T(1) / T(3)));
  t = (t + t + a / (t * t)) * Vec<T>(T(1) / T(3));
  Vec<T> r = copysign(t, x);
  r = select((a == Vec<T>(0)) | is_inf(x) | is_nan(x), x, r);
  return vmath::patch_if(x, r, (!vmath::normal_or_zero(a)) & (x == x),
                         [](T v) { return static_cast<T>(std::cbrt(v)); });
}
// atan2(y, x) from atan of min(|x|, |y|) / max(|x|, |y|) in [0, 1], moved to the octant
// (pi/2 - t, pi - t, with pi/2 and pi as a rounded constant plus its remainder) and given
// y's sign. Zeros and infinities on both sides are set as C's atan2 defines them.
template <class T>
HWY_INLINE Vec<T> atan2(Vec<T> y, Vec<T> x) {
  using D = typename Vec<T>::D;
  constexpr long double kHalfPi = 1.570796326794896619231321691639751442L;
  const T half_pi_hi = static_cast<T>(kHalfPi);
  const T half_pi_lo = static_cast<T>(kHalfPi - static_cast<long double>(half_pi_hi));
  const Vec<T> ax = abs(x), ay = abs(y);
  const Vec<T> hi = max(ax, ay), lo = min(ax, ay);
  Vec<T> t(hn::Atan(D(), (lo / hi).v));
  t = select(hi == Vec<T>(0), Vec<T>(0), t);                               // both zero
  t = select(is_inf(ax) & is_inf(ay), Vec<T>(0.78539816339744830962), t);  // both infinite
  t = select(ay > ax, (Vec<T>(half_pi_hi) - t) + Vec<T>(half_pi_lo), t);
  const Mask<T> x_negative = copysign(Vec<T>(1), x) < Vec<T>(0);  // -0 too
  t = select(x_negative, (Vec<T>(2 * half_pi_hi) - t) + Vec<T>(2 * half_pi_lo), t);
  const Vec<T> r = copysign(t, y);
  return select(is_nan(x) | is_nan(y), x + y, r);
}
// x * 2^e for integer-valued e: one multiplication by 2^e while 2^e is a normal number (it
// rounds once, as ldexp does); larger |e| lane by lane.
template <class T>
HWY_INLINE Vec<T> ldexp(Vec<T> x, Vec<T> e) {
  const Mask<T> in_range = (e >= vmath::min_exponent<T>()) & (e <= vmath::max_exponent<T>());
  const Vec<T> r = x * vmath::pow2i(select(in_range, e, Vec<T>(0)));
  return vmath::patch_if2(x, e, r, !in_range, [](T a, T b) {
    return static_cast<T>(std::ldexp(a, static_cast<int>(b)));
  });
}

// erf: float from our own polynomials (fitted offline to the exact function; within 4 ULP),
// double through libm lane by lane.
//   |x| < 1.25:          x * P(x^2)
//   1.25 <= |x| < 3.92:  1 - exp(-x^2) * Q(|x| - 2.6)   (Q approximates erfc(x) exp(x^2))
//   |x| >= 3.92:         1 (erfc is below half an ULP of 1)
template <class T>
HWY_INLINE Vec<T> erf(Vec<T> x) {
  if constexpr (sizeof(T) == 8) {
    return vmath::patch_lanes(x, x, (x == x) | !(x == x), [](T v) { return std::erf(v); });
  } else {
    using V = Vec<float>;
    using D = typename V::D;
    const D d;
    const V a = abs(x);
    const V t = a * a;
    auto poly = [&](V u, std::initializer_list<float> c) {
      const float* p = c.end();
      V r(*--p);
      while (p != c.begin()) r = V(hn::MulAdd(r.v, u.v, hn::Set(d, *--p)));
      return r;
    };
    const V small =
        a * poly(t, {1.1283791670508916f, -0.37612638459140563f, 0.11283784299136285f,
                     -0.026865694335358566f, 0.0052224200345612759f, -0.000851937599534211f,
                     0.00011733954446241368f, -1.2785143478383221e-05f, 8.2501992831884863e-07f});
    const V q = poly(a - V(2.6f),
                     {0.20361324733009484f, -0.069590279293268054f, 0.022678517761362215f,
                      -0.0070841155141783338f, 0.0021299409548190436f, -0.00061838672572044062f,
                      0.0001739331696609097f, -4.7707593854379865e-05f, 1.2655725057358208e-05f,
                      -3.0713648999369791e-06f, 7.8333188724757918e-07f, -2.8591625070989446e-07f,
                      6.7861395169899197e-08f});
    const V large = V(1.0f) - exp(-t) * q;
    V r = select(a < V(1.25f), small, select(a < V(3.92f), large, V(1.0f)));
    r = copysign(r, x);
    return select(is_nan(x), x, r);
  }
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NDX_KERNEL_VEC_INL_H_
