// The math of the random ops (operator/random.cc): each distribution maps the draws of one
// element (ElementDraws: uniforms and standard normals from the element's own counter blocks)
// and up to two parameters to a double. Host+device, so the CUDA backend reuses them; `check`
// returns NumPy's complaint about a bad parameter (or nullptr), tested before anything is drawn.
#pragma once
#include <cmath>

#include "kernel/random.h"

namespace ndx::kernel::dist {

// Marsaglia and Tsang's method ("A simple method for generating gamma variables", 2000);
// shape < 1 draws Gamma(shape + 1) and scales it by U^(1 / shape).
NDX_HD double standard_gamma(ElementDraws& d, double shape) {
  if (shape <= 0) return 0;
  double boost = 1;
  if (shape < 1) {
    boost = std::pow(d.open_uniform(), 1 / shape);
    shape += 1;
  }
  const double s = shape - 1.0 / 3, c = 1 / std::sqrt(9 * s);
  for (;;) {
    const double x = d.normal();
    double v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = d.open_uniform(), x2 = x * x;
    if (u < 1 - 0.0331 * x2 * x2 || std::log(u) < 0.5 * x2 + s * (1 - v + std::log(v)))
      return boost * s * v;
  }
}

struct Uniform {
  NDX_HD double operator()(ElementDraws& d, double low, double high) const {
    return low + (high - low) * d.uniform();
  }
  static const char* check(double low, double high) {
    return std::isfinite(high - low) ? nullptr : "high - low must be finite";
  }
};
// kTakesNan: a closed-form sampler lets a NaN parameter through, as NumPy does (it samples
// NaN); the others refuse it (a rejection sampler's loop would never end).
struct Normal {
  static constexpr bool kTakesNan = true;
  NDX_HD double operator()(ElementDraws& d, double loc, double scale) const {
    return loc + scale * d.normal();
  }
  static const char* check(double, double scale) { return scale < 0 ? "scale < 0" : nullptr; }
};
struct LogNormal {
  static constexpr bool kTakesNan = true;
  NDX_HD double operator()(ElementDraws& d, double mean, double sigma) const {
    return std::exp(mean + sigma * d.normal());
  }
  static const char* check(double, double sigma) { return sigma < 0 ? "sigma < 0" : nullptr; }
};
struct Gamma {
  NDX_HD double operator()(ElementDraws& d, double shape, double scale) const {
    return scale * standard_gamma(d, shape);
  }
  static const char* check(double shape, double scale) {
    return shape < 0 ? "shape < 0" : scale < 0 ? "scale < 0" : nullptr;
  }
};
// Johnk's algorithm when both parameters are below 1 (the ratio of gammas underflows there),
// else X / (X + Y) of two gammas, as NumPy does.
struct Beta {
  NDX_HD double operator()(ElementDraws& d, double a, double b) const {
    if (a < 1 && b < 1) {
      for (;;) {
        const double u = d.open_uniform(), v = d.open_uniform();
        const double x = std::pow(u, 1 / a), y = std::pow(v, 1 / b);
        if (x + y > 1) continue;
        if (x + y > 0) return x / (x + y);
        double lx = std::log(u) / a, ly = std::log(v) / b;  // both underflowed: logs
        const double m = lx > ly ? lx : ly;
        lx -= m, ly -= m;
        return std::exp(lx - std::log(std::exp(lx) + std::exp(ly)));
      }
    }
    const double x = standard_gamma(d, a), y = standard_gamma(d, b);
    return x / (x + y);
  }
  static const char* check(double a, double b) {
    return a <= 0 ? "a <= 0" : b <= 0 ? "b <= 0" : nullptr;
  }
};
struct ChiSquare {
  NDX_HD double operator()(ElementDraws& d, double df, double) const {
    return 2 * standard_gamma(d, df / 2);
  }
  static const char* check(double df, double) { return df > 0 ? nullptr : "df <= 0"; }
};
struct F {
  NDX_HD double operator()(ElementDraws& d, double dfnum, double dfden) const {
    return (2 * standard_gamma(d, dfnum / 2) / dfnum) / (2 * standard_gamma(d, dfden / 2) / dfden);
  }
  static const char* check(double dfnum, double dfden) {
    return dfnum <= 0 ? "dfnum <= 0" : dfden <= 0 ? "dfden <= 0" : nullptr;
  }
};
struct Exponential {
  static constexpr bool kTakesNan = true;
  NDX_HD double operator()(ElementDraws& d, double scale, double) const {
    return -scale * std::log(d.open_uniform());
  }
  static const char* check(double scale, double) { return scale < 0 ? "scale < 0" : nullptr; }
};
struct Gumbel {
  static constexpr bool kTakesNan = true;
  NDX_HD double operator()(ElementDraws& d, double loc, double scale) const {
    return loc - scale * std::log(-std::log(d.open_uniform()));
  }
  static const char* check(double, double scale) { return scale < 0 ? "scale < 0" : nullptr; }
};
struct Laplace {
  static constexpr bool kTakesNan = true;
  NDX_HD double operator()(ElementDraws& d, double loc, double scale) const {
    const double u = d.open_uniform();
    return u < 0.5 ? loc + scale * std::log(2 * u) : loc - scale * std::log(2 * (1 - u));
  }
  static const char* check(double, double scale) { return scale < 0 ? "scale < 0" : nullptr; }
};
struct Logistic {
  static constexpr bool kTakesNan = true;
  NDX_HD double operator()(ElementDraws& d, double loc, double scale) const {
    const double u = d.open_uniform();
    return loc + scale * std::log(u / (1 - u));
  }
  static const char* check(double, double scale) { return scale < 0 ? "scale < 0" : nullptr; }
};
// Lomax (Pareto II) as NumPy's pareto: exp(E / a) - 1 for a standard exponential E.
struct Pareto {
  static constexpr bool kTakesNan = true;
  NDX_HD double operator()(ElementDraws& d, double a, double) const {
    return std::expm1(-std::log(d.open_uniform()) / a);
  }
  static const char* check(double a, double) { return a <= 0 ? "a <= 0" : nullptr; }
};
struct Power {
  static constexpr bool kTakesNan = true;
  NDX_HD double operator()(ElementDraws& d, double a, double) const {
    return std::pow(d.open_uniform(), 1 / a);
  }
  static const char* check(double a, double) { return a <= 0 ? "a <= 0" : nullptr; }
};
struct Rayleigh {
  static constexpr bool kTakesNan = true;
  NDX_HD double operator()(ElementDraws& d, double scale, double) const {
    return scale * std::sqrt(-2 * std::log(d.open_uniform()));
  }
  static const char* check(double scale, double) { return scale < 0 ? "scale < 0" : nullptr; }
};
struct Weibull {
  static constexpr bool kTakesNan = true;
  NDX_HD double operator()(ElementDraws& d, double a, double) const {
    return a == 0 ? 0.0 : std::pow(-std::log(d.open_uniform()), 1 / a);
  }
  static const char* check(double a, double) { return a < 0 ? "a < 0" : nullptr; }
};
struct Bernoulli {
  NDX_HD double operator()(ElementDraws& d, double prob, double) const {
    return d.uniform() < prob ? 1.0 : 0.0;
  }
  static const char* check(double prob, double) {
    return prob >= 0 && prob <= 1 ? nullptr : "prob must be in [0, 1]";
  }
};
// An integer in [low, high): floor(low + (high - low) * u) with a 53-bit u, so ranges up to
// 2**53 are covered evenly (the bias is below 2**-53 per value).
struct RandInt {
  NDX_HD double operator()(ElementDraws& d, double low, double high) const {
    const double v = std::floor(low + (high - low) * d.uniform());
    return v < high ? v : high - 1;
  }
  static const char* check(double low, double high) { return low < high ? nullptr : "low >= high"; }
};

// ---- counts and the distributions built on them ----

// log Gamma(x) for x > 0: Stirling's series through the x**-11 term once x >= 10 (the next
// term is below 1e-15 there), smaller x shifted up by Gamma(x + 1) = x Gamma(x). Our own, so
// concurrent draws share no state (glibc's lgamma writes signgam).
NDX_HD double log_gamma(double x) {
  double shift = 0;
  while (x < 10) shift -= std::log(x), x += 1;
  const double z = 1 / (x * x);
  const double series =
      (1.0 / 12 +
       z * (-1.0 / 360 +
            z * (1.0 / 1260 + z * (-1.0 / 1680 + z * (1.0 / 1188 + z * (-691.0 / 360360)))))) /
      x;
  return shift + (x - 0.5) * std::log(x) - x + 0.91893853320467274178 + series;
}

// Poisson(lam): multiplying uniforms below lam = 10, Hoermann's PTRS ("The transformed
// rejection method for generating Poisson random variables", 1993) above, as NumPy does.
NDX_HD double poisson(ElementDraws& d, double lam) {
  if (lam <= 0) return 0;
  if (lam < 10) {
    const double limit = std::exp(-lam);
    double prod = d.uniform();
    double k = 0;
    while (prod > limit) prod *= d.uniform(), k += 1;
    return k;
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = d.uniform() - 0.5, v = d.uniform(), us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
        -lam + k * loglam - log_gamma(k + 1))
      return k;
  }
}

struct Poisson {
  NDX_HD double operator()(ElementDraws& d, double lam, double) const { return poisson(d, lam); }
  static const char* check(double lam, double) {
    return lam < 0 ? "lam < 0" : lam > 9.2e18 ? "lam value too large" : nullptr;
  }
};

// Binomial(n, p) with n truncated to an integer, as NumPy: p > 1/2 counts the failures;
// inversion while n p < 10, else Hoermann's BTRS ("The generation of binomial random
// variates", 1993).
struct Binomial {
  NDX_HD double operator()(ElementDraws& d, double n, double p) const {
    n = std::floor(n);
    if (n == 0 || p == 0) return 0;
    if (p > 0.5) return n - draw(d, n, 1 - p);
    return draw(d, n, p);
  }
  NDX_HD static double draw(ElementDraws& d, double n, double p) {
    const double q = 1 - p;
    if (n * p < 10) {
      const double start = std::exp(n * std::log1p(-p));
      const double bound = std::fmin(n, n * p + 10 * std::sqrt(n * p * q + 1));
      double x = 0, px = start, u = d.uniform();
      while (u > px) {
        x += 1;
        if (x > bound) {
          x = 0, px = start, u = d.uniform();
        } else {
          u -= px;
          px *= (n - x + 1) * p / (x * q);
        }
      }
      return x;
    }
    const double spq = std::sqrt(n * p * q), b = 1.15 + 2.53 * spq;
    const double a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5, vr = 0.92 - 4.2 / b;
    const double alpha = (2.83 + 5.1 / b) * spq, lpq = std::log(p / q);
    const double m = std::floor((n + 1) * p);
    const double h = log_gamma(m + 1) + log_gamma(n - m + 1);
    for (;;) {
      const double u = d.uniform() - 0.5, us = 0.5 - std::fabs(u);
      double v = d.uniform();
      const double k = std::floor((2 * a / us + b) * u + c);
      if (k < 0 || k > n) continue;
      if (us >= 0.07 && v <= vr) return k;
      v = std::log(v * alpha / (a / (us * us) + b));
      if (v <= h - log_gamma(k + 1) - log_gamma(n - k + 1) + (k - m) * lpq) return k;
    }
  }
  static const char* check(double n, double p) {
    if (n < 0) return "n < 0";
    if (n >= 9.2e18) return "n value too large";
    return p >= 0 && p <= 1 ? nullptr : "p < 0, p > 1 or p is NaN";
  }
};

// The trial of the first success (1, 2, ...): inversion of a uniform in (0, 1).
struct Geometric {
  NDX_HD double operator()(ElementDraws& d, double p, double) const {
    if (p >= 1) return 1;
    return std::fmax(1.0, std::ceil(std::log(d.open_uniform()) / std::log1p(-p)));
  }
  static const char* check(double p, double) {
    return p > 0 && p <= 1 ? nullptr : "p <= 0, p > 1 or p contains NaNs";
  }
};

// Failures before the n-th success: a Poisson of a Gamma(n, (1 - p) / p), as NumPy draws it.
struct NegativeBinomial {
  NDX_HD double operator()(ElementDraws& d, double n, double p) const {
    if (p >= 1) return 0;
    return poisson(d, standard_gamma(d, n) * (1 - p) / p);
  }
  static const char* check(double n, double p) {
    if (!(n > 0)) return "n <= 0";
    return p > 0 && p <= 1 ? nullptr : "p <= 0, p > 1 or p contains NaNs";
  }
};

// Inverse Gaussian by Michael, Schucany and Haas's transformation of a chi-square(1) draw.
struct Wald {
  NDX_HD double operator()(ElementDraws& d, double mean, double scale) const {
    const double z = d.normal(), y = mean * z * z;
    const double x = mean + mean / (2 * scale) * (y - std::sqrt(4 * scale * y + y * y));
    return d.uniform() <= mean / (mean + x) ? x : mean * mean / x;
  }
  static const char* check(double mean, double scale) {
    return !(mean > 0) ? "mean <= 0" : !(scale > 0) ? "scale <= 0" : nullptr;
  }
};

// von Mises on [-pi, pi): Best and Fisher's rejection (1979); a uniform angle for kappa below
// 1e-8 and a wrapped normal above 1e6, as NumPy.
struct VonMises {
  NDX_HD double operator()(ElementDraws& d, double mu, double kappa) const {
    constexpr double kPi = 3.14159265358979323846;
    if (kappa < 1e-8) return kPi * (2 * d.uniform() - 1);
    double angle;
    if (kappa > 1e6) {
      angle = mu + std::sqrt(1 / kappa) * d.normal();
    } else {
      double s;
      if (kappa < 1e-5) {
        s = 1 / kappa + kappa;
      } else {
        const double r = 1 + std::sqrt(1 + 4 * kappa * kappa);
        const double rho = (r - std::sqrt(2 * r)) / (2 * kappa);
        s = (1 + rho * rho) / (2 * rho);
      }
      double w;
      for (;;) {
        const double z = std::cos(kPi * d.uniform());
        w = (1 + s * z) / (s + z);
        const double y = kappa * (s - w), v = d.uniform();
        if (y * (2 - y) - v >= 0 || std::log(y / v) + 1 - y >= 0) break;
      }
      angle = std::acos(std::fmax(-1.0, std::fmin(1.0, w)));
      if (d.uniform() < 0.5) angle = -angle;
      angle += mu;
    }
    const double wrapped = std::fmod(std::fabs(angle) + kPi, 2 * kPi) - kPi;
    return angle < 0 ? -wrapped : wrapped;
  }
  static const char* check(double, double kappa) { return kappa >= 0 ? nullptr : "kappa < 0"; }
};

// Zipf by Devroye's rejection ("Non-Uniform Random Variate Generation", 1986, X.6); values
// above 2**62 are redrawn. Nearly every draw lands there when a - 1 is tiny (a fraction of
// about 43 (a - 1) is kept), so a - 1 below 1e-4, which NumPy takes and may loop on for hours,
// is a ValueError. From a = 1025 on, 2**(a - 1) overflows and the acceptance test compares
// NaNs forever (the fuzzer's hang at a = inf); there a draw above 1 has probability below
// 2**-1024, so the draw is 1, as NumPy's.
struct Zipf {
  NDX_HD double operator()(ElementDraws& d, double a, double) const {
    if (a >= 1025) return 1;
    const double am1 = a - 1, b = std::pow(2.0, am1);
    for (;;) {
      const double u = 1 - d.uniform(), v = d.uniform();
      const double x = std::floor(std::pow(u, -1 / am1));
      if (!(x >= 1) || x > 4.611686018427387904e18) continue;
      const double t = std::pow(1 + 1 / x, am1);
      if (v * x * (t - 1) / (b - 1) <= t / b) return x;
    }
  }
  static const char* check(double a, double) {
    if (!(a > 1)) return "a <= 1 or a is NaN";
    return a - 1 < 1e-4 ? "a - 1 < 1e-4: nearly every draw would exceed 2**62" : nullptr;
  }
};

// Logarithmic series by Kemp's second algorithm (LK, 1981).
struct LogSeries {
  NDX_HD double operator()(ElementDraws& d, double p, double) const {
    const double r = std::log1p(-p);
    for (;;) {
      const double v = d.uniform();
      if (v >= p) return 1;
      const double q = -std::expm1(r * d.uniform());
      if (v <= q * q) {
        const double x = std::floor(1 + std::log(v) / std::log(q));
        if (x < 1 || v == 0) continue;
        return x;
      }
      return v >= q ? 1 : 2;
    }
  }
  static const char* check(double p, double) {
    return p >= 0 && p < 1 ? nullptr : "p < 0, p >= 1 or p is NaN";
  }
};

// Non-central chi-square: chi2(df - 1) + (Z + sqrt(nonc))**2 for df > 1, else a chi-square
// with a Poisson(nonc / 2) number of extra degrees (2 each), as NumPy.
struct NoncentralChiSquare {
  NDX_HD double operator()(ElementDraws& d, double df, double nonc) const {
    if (nonc == 0) return 2 * standard_gamma(d, df / 2);
    if (df > 1) {
      const double z = d.normal() + std::sqrt(nonc);
      return 2 * standard_gamma(d, (df - 1) / 2) + z * z;
    }
    const double extra = poisson(d, nonc / 2);
    return 2 * standard_gamma(d, df / 2 + extra);
  }
  static const char* check(double df, double nonc) {
    return !(df > 0) ? "df <= 0" : !(nonc >= 0) ? "nonc < 0" : nullptr;
  }
};

// Hypergeometric: draws of nsample items without replacement from ngood + nbad. Up to 10
// items, item by item (Kachitvichyanukul and Schmeiser's HYP); more, Stadlober's ratio of
// uniforms (HRUA, "The ratio of uniforms approach for generating discrete random variates",
// 1990), as NumPy.
struct Hypergeometric {
  NDX_HD double operator()(ElementDraws& d, double good, double bad, double sample) const {
    return sample > 10 ? hrua(d, good, bad, sample) : item_by_item(d, good, bad, sample);
  }
  NDX_HD static double item_by_item(ElementDraws& d, double good, double bad, double sample) {
    const double rest = bad + good - sample, fewer = std::fmin(bad, good);
    double left = fewer, k = sample;
    while (left > 0 && k > 0) {
      left -= std::floor(d.uniform() + left / (rest + k));
      k -= 1;
    }
    const double z = fewer - left;
    return good > bad ? sample - z : z;
  }
  NDX_HD static double hrua(ElementDraws& d, double good, double bad, double sample) {
    const double fewer = std::fmin(good, bad), more = std::fmax(good, bad);
    const double total = good + bad, m = std::fmin(sample, total - sample);
    const double p = fewer / total;
    const double mode_shift = m * p + 0.5;
    const double spread = std::sqrt((total - m) * sample * p * (1 - p) / (total - 1) + 0.5);
    const double width = 1.7155277699214135 * spread + 0.8989161620588988;
    const double mode = std::floor((m + 1) * (fewer + 1) / (total + 2));
    const auto log_weight = [&](double z) {
      return log_gamma(z + 1) + log_gamma(fewer - z + 1) + log_gamma(m - z + 1) +
             log_gamma(more - m + z + 1);
    };
    const double peak = log_weight(mode);
    const double bound = std::fmin(std::fmin(m, fewer) + 1, std::floor(mode_shift + 16 * spread));
    double z;
    for (;;) {
      const double x = d.uniform(), y = d.uniform();
      if (x == 0) continue;
      const double w = mode_shift + width * (y - 0.5) / x;
      if (w < 0 || w >= bound) continue;
      z = std::floor(w);
      const double t = peak - log_weight(z);
      if (x * (4 - x) - 3 <= t) break;  // the squeeze
      if (x * (x - t) >= 1) continue;
      if (2 * std::log(x) <= t) break;
    }
    if (good > bad) z = m - z;
    if (m < sample) z = good - z;
    return z;
  }
  static const char* check(double good, double bad, double sample) {
    if (good < 0) return "ngood < 0";
    if (bad < 0) return "nbad < 0";
    if (!(sample >= 1)) return "nsample < 1 or nsample is NaN";
    if (good + bad < sample) return "ngood + nbad < nsample";
    if (good + bad >= 1e9) return "ngood + nbad >= 1e9";
    return nullptr;
  }
};

}  // namespace ndx::kernel::dist
