#include "src/cost/special_functions.h"

#include <cmath>
#include <limits>

namespace seedance::cost::internal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The standard normal density.
double NormalPdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); }

// The continued fraction of I_x(a, b) (DLMF 8.17.22), without its front factor, by the modified
// Lentz method; converges fast for x < (a + 1) / (a + b + 2).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-16;
  constexpr int kMaxTerms = 100000;
  auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1.0;
  double d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
  double h = d;
  for (int m = 1; m <= kMaxTerms; ++m) {
    const double m2 = 2.0 * m;
    // The even term d_{2m}.
    double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 / guard(1.0 + num * d);
    c = guard(1.0 + num / c);
    h *= d * c;
    // The odd term d_{2m+1}.
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 / guard(1.0 + num * d);
    c = guard(1.0 + num / c);
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1.0) < kEps) break;
  }
  return h;
}

}  // namespace

double Ndtr(double x) {
  if (std::isnan(x)) return kNaN;
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

double Ndtri(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return kNaN;
  if (p == 0.0) return -kInf;
  if (p == 1.0) return kInf;
  if (p == 0.5) return 0.0;
  if (p > 0.5) return -Ndtri(1.0 - p);  // 1 - p is exact for p >= 0.5
  // First guess, |error| < 4.5e-4 (Abramowitz and Stegun 26.2.23).
  const double t = std::sqrt(-2.0 * std::log(p));
  double x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                       (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t));
  // Newton on Ndtr(x) - p: the error squares each step.
  for (int i = 0; i < 8; ++i) {
    const double pdf = NormalPdf(x);
    if (pdf == 0.0) break;
    const double dx = (Ndtr(x) - p) / pdf;
    x -= dx;
    if (std::fabs(dx) <= 1e-15 * std::fabs(x)) break;
  }
  return x;
}

double IncompleteBeta(double a, double b, double x) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(x) || a <= 0 || b <= 0 || x < 0 || x > 1) {
    return kNaN;
  }
  if (x == 0.0) return 0.0;
  if (x == 1.0) return 1.0;
  const double log_beta = std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  const double log_front = a * std::log(x) + b * std::log1p(-x) - log_beta;
  if (x < (a + 1.0) / (a + b + 2.0)) {
    return std::exp(log_front) * BetaContinuedFraction(a, b, x) / a;
  }
  return 1.0 - std::exp(log_front) * BetaContinuedFraction(b, a, 1.0 - x) / b;
}

double FDistributionSf(double d1, double d2, double f) {
  if (std::isnan(d1) || std::isnan(d2) || std::isnan(f) || d1 <= 0 || d2 <= 0) return kNaN;
  if (f <= 0) return 1.0;
  if (std::isinf(f)) return 0.0;
  // x = d2 / (d2 + d1 f) without cancellation.
  return IncompleteBeta(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f));
}

}  // namespace seedance::cost::internal
