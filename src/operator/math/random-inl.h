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
struct Normal {
  NDX_HD double operator()(ElementDraws& d, double loc, double scale) const {
    return loc + scale * d.normal();
  }
  static const char* check(double, double scale) { return scale >= 0 ? nullptr : "scale < 0"; }
};
struct LogNormal {
  NDX_HD double operator()(ElementDraws& d, double mean, double sigma) const {
    return std::exp(mean + sigma * d.normal());
  }
  static const char* check(double, double sigma) { return sigma >= 0 ? nullptr : "sigma < 0"; }
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
  NDX_HD double operator()(ElementDraws& d, double scale, double) const {
    return -scale * std::log(d.open_uniform());
  }
  static const char* check(double scale, double) { return scale >= 0 ? nullptr : "scale < 0"; }
};
struct Gumbel {
  NDX_HD double operator()(ElementDraws& d, double loc, double scale) const {
    return loc - scale * std::log(-std::log(d.open_uniform()));
  }
  static const char* check(double, double scale) { return scale >= 0 ? nullptr : "scale < 0"; }
};
struct Laplace {
  NDX_HD double operator()(ElementDraws& d, double loc, double scale) const {
    const double u = d.open_uniform();
    return u < 0.5 ? loc + scale * std::log(2 * u) : loc - scale * std::log(2 * (1 - u));
  }
  static const char* check(double, double scale) { return scale >= 0 ? nullptr : "scale < 0"; }
};
struct Logistic {
  NDX_HD double operator()(ElementDraws& d, double loc, double scale) const {
    const double u = d.open_uniform();
    return loc + scale * std::log(u / (1 - u));
  }
  static const char* check(double, double scale) { return scale >= 0 ? nullptr : "scale < 0"; }
};
// Lomax (Pareto II) as NumPy's pareto: exp(E / a) - 1 for a standard exponential E.
struct Pareto {
  NDX_HD double operator()(ElementDraws& d, double a, double) const {
    return std::expm1(-std::log(d.open_uniform()) / a);
  }
  static const char* check(double a, double) { return a > 0 ? nullptr : "a <= 0"; }
};
struct Power {
  NDX_HD double operator()(ElementDraws& d, double a, double) const {
    return std::pow(d.open_uniform(), 1 / a);
  }
  static const char* check(double a, double) { return a > 0 ? nullptr : "a <= 0"; }
};
struct Rayleigh {
  NDX_HD double operator()(ElementDraws& d, double scale, double) const {
    return scale * std::sqrt(-2 * std::log(d.open_uniform()));
  }
  static const char* check(double scale, double) { return scale >= 0 ? nullptr : "scale < 0"; }
};
struct Weibull {
  NDX_HD double operator()(ElementDraws& d, double a, double) const {
    return a == 0 ? 0.0 : std::pow(-std::log(d.open_uniform()), 1 / a);
  }
  static const char* check(double a, double) { return a >= 0 ? nullptr : "a < 0"; }
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

}  // namespace ndx::kernel::dist
