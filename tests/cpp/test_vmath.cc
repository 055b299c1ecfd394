// Accuracy of the SIMD transcendentals (kernel/vec-inl.h) as the ops run them: the max ULP
// error of every float32 and float64 function against a long double reference, over ranges
// that include 0, -0, +-inf, NaN, subnormals and large arguments. The bound asserted here is
// the one the README documents (NumPy documents <= 4 ULP for its SIMD float32 functions).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ndx/imperative.h"
#include "ndx/ndarray.h"
#include "ndx/op.h"
#include "ndx/runtime.h"

namespace {

using ndx::DType;
using ndx::NDArray;

constexpr double kUlpBound = 4.0;

struct Range {
  double lo, hi;
  bool log_scale = false;   // |x| = 2^u with u uniform in [lo, hi]
  bool both_signs = false;  // with log_scale: negative half the time
};

struct VmathCase {
  const char* op;
  long double (*ref)(long double);
  std::vector<Range> ranges;
  std::vector<double> specials;
};

// The spacing of T at the magnitude of `value` (at the largest finite T beyond it).
template <class T>
long double ulp_of(long double value) {
  T a = std::fabs(static_cast<T>(value));
  if (std::isinf(a)) a = std::numeric_limits<T>::max();
  const T below = std::nextafter(a, T(0));
  return static_cast<long double>(a) - static_cast<long double>(below) > 0
             ? static_cast<long double>(std::nextafter(a, std::numeric_limits<T>::infinity())) -
                   static_cast<long double>(a)
             : static_cast<long double>(std::numeric_limits<T>::denorm_min());
}

// The error of `got` in ULPs of the correctly rounded reference; special values must match
// exactly (NaN for NaN, the same infinity, the sign of a zero result from a zero input).
template <class T>
double ulp_error(T x, T got, long double ref) {
  const T expected = static_cast<T>(ref);
  if (std::isnan(expected)) return std::isnan(got) ? 0 : 1e30;
  if (std::isnan(got)) return 1e30;
  if (std::isinf(expected) || std::isinf(got)) {
    if (got == expected) return 0;
    // A reference just past the largest finite value may round either way.
    const long double big = std::numeric_limits<T>::max();
    return std::fabs(std::fabs(ref) - big) <= ulp_of<T>(big) ? 0 : 1e30;
  }
  if (x == 0 && expected == 0 && std::signbit(got) != std::signbit(expected)) return 1e30;
  const long double ulp = ulp_of<T>(ref);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

template <class T>
std::vector<T> samples(const VmathCase& c, std::mt19937_64& rng) {
  std::vector<T> xs;
  for (const Range& r : c.ranges) {
    for (int i = 0; i < 200000; ++i) {
      double v;
      if (r.log_scale) {
        std::uniform_real_distribution<double> e(r.lo, r.hi);
        v = std::exp2(e(rng));
        if (r.both_signs && (rng() & 1)) v = -v;
      } else {
        std::uniform_real_distribution<double> u(r.lo, r.hi);
        v = u(rng);
      }
      xs.push_back(static_cast<T>(v));
    }
  }
  const T inf = std::numeric_limits<T>::infinity();
  for (T v : {T(0), T(-0.0), inf, -inf, std::numeric_limits<T>::quiet_NaN(),
              std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min(),
              std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
              -std::numeric_limits<T>::max(), T(1), T(-1), T(0.5), T(-0.5)})
    xs.push_back(v);
  for (double v : c.specials) xs.push_back(static_cast<T>(v));
  return xs;
}

template <class T>
double max_ulp(const VmathCase& c, double* worst_x) {
  std::mt19937_64 rng(42);
  std::vector<T> xs = samples<T>(c, rng);
  NDArray x = NDArray::from_vector(xs, ndx::Shape{static_cast<int64_t>(xs.size())});
  NDArray y = ndx::invoke(ndx::Op::get(c.op)->make_attrs(), {x})[0];
  std::vector<T> ys = y.to_vector<T>();
  double worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double e = ulp_error<T>(xs[i], ys[i], c.ref(static_cast<long double>(xs[i])));
    if (e > worst) worst = e, *worst_x = static_cast<double>(xs[i]);
  }
  return worst;
}

long double erf_ref(long double x) { return erfl(x); }

const std::vector<VmathCase>& cases() {
  static const std::vector<VmathCase> kCases = {
      {"_np_exp",
       [](long double x) { return expl(x); },
       {{-110, 90}, {-750, 710}},
       {88.72283935546875, 88.7228, -87.33654, -103.97, 709.78, -745.1, 1e-30, -1e-30}},
      {"_np_expm1",
       [](long double x) { return expm1l(x); },
       {{-20, 90}, {-40, 2, true, true}, {-750, 710}},
       {-1e-30, 1e-8, -1e-8, 88.7, 709.7}},
      {"_np_log",
       [](long double x) { return logl(x); },
       {{-1100, 1024, true}, {0.5, 2}},
       {-1.0, -1e-30, 1.0000001}},
      {"_np_log1p",
       [](long double x) { return log1pl(x); },
       {{-1, 10}, {-60, 1024, true}, {-1, -0.999}},
       {-1.0, -2.0, -1e-30, 1e-30}},
      {"_np_log2",
       [](long double x) { return log2l(x); },
       {{-1100, 1024, true}, {0.5, 2}},
       {-1.0, 1024.0, 0.125}},
      {"_np_log10",
       [](long double x) { return log10l(x); },
       {{-1100, 1024, true}, {0.5, 2}},
       {-1.0, 1000.0, 0.001}},
      {"_np_sin",
       [](long double x) { return sinl(x); },
       {{-10, 10}, {-1e5, 1e5}, {16, 100, true, true}},
       {-3.14159265358979, 1e-30, 1e22, -1e30}},
      {"_np_cos",
       [](long double x) { return cosl(x); },
       {{-10, 10}, {-1e5, 1e5}, {16, 100, true, true}},
       {1.5707963267948966, 1e-30, 1e22, -1e30}},
      {"_np_tanh",
       [](long double x) { return tanhl(x); },
       {{-20, 20}, {-1, 1}, {-40, 127, true, true}},
       {-1e-30, 9.01, -19.0, 1e-8, 1e30}},
      {"_np_arcsin",
       [](long double x) { return asinl(x); },
       {{-1, 1}, {-0.1, 0.1}, {-60, 0, true, true}},
       {1.0, -1.0, 1.0000001, -0.999, 1e-30}},
      {"_np_arccos",
       [](long double x) { return acosl(x); },
       {{-1, 1}, {-60, 0, true, true}},
       {1.0, -1.0, 1.0000001, 0.999, 1e-30}},
      {"_np_arctan",
       [](long double x) { return atanl(x); },
       {{-10, 10}, {-60, 127, true, true}},
       {1e-30, -1e30, 1.0}},
      {"_np_arcsinh",
       [](long double x) { return asinhl(x); },
       {{-10, 10}, {-60, 127, true, true}},
       {1e-30, -1e30, 1e-8}},
      {"_np_arccosh",
       [](long double x) { return acoshl(x); },
       {{1, 10}, {0, 127, true}},
       {1.0, 0.5, 1.0000001, 1e30}},
      {"_np_arctanh",
       [](long double x) { return atanhl(x); },
       {{-1, 1}, {-60, 0, true, true}},
       {1.0, -1.0, 2.0, 0.9999999, 1e-30}},
      {"_np_sinh",
       [](long double x) { return sinhl(x); },
       {{-20, 20}, {-1, 1}, {-100, 100}, {-720, 720}, {-40, 6, true, true}},
       {89.4, -89.41, 88.72, 710.4, -710.47, 1e-30}},
      // libm's, element by element (no SIMD version yet): the bound holds for them too.
      {"_np_tan",
       [](long double x) { return tanl(x); },
       {{-10, 10}, {-1e5, 1e5}},
       {1.5707963267948966, 1e-30}},
      {"_np_cosh",
       [](long double x) { return coshl(x); },
       {{-20, 20}, {-100, 100}, {-720, 720}},
       {89.4, 710.4}},
      {"_np_cbrt",
       [](long double x) { return cbrtl(x); },
       {{-1100, 1024, true, true}},
       {-8.0, 27.0}},
      {"_np_exp2",
       [](long double x) { return exp2l(x); },
       {{-160, 130}, {-1100, 1030}},
       {128.0, -149.0, 1024.0, -1074.0}},
      {"_npx_erf",
       erf_ref,
       {{-6, 6}, {-1.5, 1.5}, {-40, 127, true, true}},
       {-1e-30, 1.25, 3.92, -3.92, 5.9}},
  };
  return kCases;
}

TEST(Vmath, MaxUlpErrorWithinDocumentedBound) {
  std::printf("SIMD target: %s\n", ndx::simd_target());
  for (const VmathCase& c : cases()) {
    double x32 = 0, x64 = 0;
    const double e32 = max_ulp<float>(c, &x32);
    const double e64 = max_ulp<double>(c, &x64);
    std::printf("%-10s float32 max %.2f ULP (at %.9g)   float64 max %.2f ULP (at %.17g)\n", c.op,
                e32, x32, e64, x64);
    EXPECT_LE(e32, kUlpBound) << c.op << " float32 at x = " << x32;
    EXPECT_LE(e64, kUlpBound) << c.op << " float64 at x = " << x64;
  }
}

// atan2 over pairs: quadrants, the octant boundaries |y| = |x|, tiny and huge ratios, and
// the signed zeros and infinities C defines.
template <class T>
double atan2_max_ulp(double* worst_y, double* worst_x) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-10, 10), e(-60, 60);
  std::vector<T> ys, xs;
  for (int i = 0; i < 200000; ++i) {
    ys.push_back(static_cast<T>(u(rng)));
    xs.push_back(static_cast<T>(u(rng)));
    const double m = std::exp2(e(rng));  // ratios far from 1
    ys.push_back(static_cast<T>(u(rng) * m));
    xs.push_back(static_cast<T>(u(rng) / m));
    const T v = static_cast<T>(u(rng));  // on the diagonals
    ys.push_back(v);
    xs.push_back(i % 2 ? v : -v);
  }
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  for (T y : {T(0), T(-0.0), T(1), T(-1), inf, -inf, nan})
    for (T x : {T(0), T(-0.0), T(1), T(-1), inf, -inf, nan}) {
      ys.push_back(y);
      xs.push_back(x);
    }
  const ndx::Shape shape{static_cast<int64_t>(ys.size())};
  NDArray y = NDArray::from_vector(ys, shape), x = NDArray::from_vector(xs, shape);
  std::vector<T> got =
      ndx::invoke(ndx::Op::get("_np_arctan2")->make_attrs(), {y, x})[0].to_vector<T>();
  double worst = 0;
  for (size_t i = 0; i < ys.size(); ++i) {
    const long double ref = atan2l(ys[i], xs[i]);
    double err = ulp_error<T>(ys[i], got[i], ref);
    if (std::isnan(static_cast<double>(ref)) || ref == 0)  // exact: NaN, and the zero's sign
      err = (std::isnan(got[i]) == std::isnan(static_cast<double>(ref)) &&
             (std::isnan(got[i]) || std::signbit(got[i]) == std::signbit(ref)))
                ? 0
                : 1e30;
    if (err > worst) worst = err, *worst_y = static_cast<double>(ys[i]), *worst_x = xs[i];
  }
  return worst;
}

TEST(Vmath, Atan2WithinDocumentedBound) {
  double y32 = 0, x32 = 0, y64 = 0, x64 = 0;
  const double e32 = atan2_max_ulp<float>(&y32, &x32), e64 = atan2_max_ulp<double>(&y64, &x64);
  std::printf(
      "_np_arctan2 float32 max %.2f ULP (at %.9g, %.9g)   float64 max %.2f ULP (at %.17g, "
      "%.17g)\n",
      e32, y32, x32, e64, y64, x64);
  EXPECT_LE(e32, kUlpBound) << "atan2 float32 at " << y32 << ", " << x32;
  EXPECT_LE(e64, kUlpBound) << "atan2 float64 at " << y64 << ", " << x64;
}

// The float16 / bfloat16 paths compute in float32 and round once: within half an ULP of the
// 16-bit result plus the float32 error, so within 1 ULP of the 16-bit type.
TEST(Vmath, SixteenBitFloatsRoundOnce) {
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    std::vector<float> xs;
    for (int i = -400; i <= 400; ++i) xs.push_back(i * 0.01f);
    NDArray x = NDArray::from_vector(xs, ndx::Shape{static_cast<int64_t>(xs.size())}).astype(t);
    NDArray y = ndx::invoke(ndx::Op::get("_np_exp")->make_attrs(), {x})[0];
    ASSERT_EQ(y.dtype(), t);
    std::vector<float> xin = x.to_vector<float>(), got = y.to_vector<float>();
    for (size_t i = 0; i < xin.size(); ++i) {
      // The reference rounded to the 16-bit type the same way the op's output is.
      const float want = NDArray::scalar(std::exp(static_cast<double>(xin[i])), t).item<float>();
      const float step = std::fabs(want) * (t == DType::kFloat16 ? 1.0f / 1024 : 1.0f / 128);
      EXPECT_LE(std::fabs(got[i] - want), step) << "exp(" << xin[i] << ") as " << t;
    }
  }
}

}  // namespace
