#include "src/cost/least_squares.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace seedance::cost::internal {

base::StatusOr<LeastSquaresResult> LeastSquares(Matrix x, std::vector<double> y) {
  const size_t n = x.rows(), p = x.cols();
  if (n <= p || y.size() != n) {
    return base::InvalidArgumentError("least squares needs more rows than columns", "samples");
  }
  double y_mean = 0;
  for (double v : y) y_mean += v;
  y_mean /= static_cast<double>(n);
  double tss = 0;
  for (double v : y) tss += (v - y_mean) * (v - y_mean);

  // Householder QR in place: after step k, column k below the diagonal is zero; the same
  // reflections are applied to y, so y's first p entries become Q'y.
  for (size_t k = 0; k < p; ++k) {
    double norm = 0;
    for (size_t i = k; i < n; ++i) norm += x(i, k) * x(i, k);
    norm = std::sqrt(norm);
    if (norm == 0) continue;
    const double alpha = x(k, k) > 0 ? -norm : norm;
    std::vector<double> v(n - k);
    for (size_t i = k; i < n; ++i) v[i - k] = x(i, k);
    v[0] -= alpha;
    double vv = 0;
    for (double e : v) vv += e * e;
    if (vv == 0) continue;
    auto reflect = [&](auto get, auto set) {
      double dot = 0;
      for (size_t i = k; i < n; ++i) dot += v[i - k] * get(i);
      const double f = 2.0 * dot / vv;
      for (size_t i = k; i < n; ++i) set(i, get(i) - f * v[i - k]);
    };
    for (size_t j = k; j < p; ++j) {
      reflect([&](size_t i) { return x(i, j); }, [&](size_t i, double val) { x(i, j) = val; });
    }
    reflect([&](size_t i) { return y[i]; }, [&](size_t i, double val) { y[i] = val; });
  }
  double largest = 0;
  for (size_t k = 0; k < p; ++k) largest = std::max(largest, std::fabs(x(k, k)));
  for (size_t k = 0; k < p; ++k) {
    if (std::fabs(x(k, k)) <= 1e-10 * largest) {
      return base::InvalidArgumentError("the columns are linearly dependent (column " +
                                            std::to_string(k) +
                                            " is a combination of the others): drop or vary it",
                                        "samples");
    }
  }
  // Back substitution R b = (Q'y)[0..p).
  LeastSquaresResult out;
  out.coefficients.assign(p, 0.0);
  for (size_t k = p; k-- > 0;) {
    double s = y[k];
    for (size_t j = k + 1; j < p; ++j) s -= x(k, j) * out.coefficients[j];
    out.coefficients[k] = s / x(k, k);
  }
  double rss = 0;
  for (size_t i = p; i < n; ++i) rss += y[i] * y[i];
  out.r_squared = tss > 0 ? 1.0 - rss / tss : 1.0;
  out.residual_rms = std::sqrt(rss / static_cast<double>(n));
  // (X'X)^-1 = R^-1 R^-T: invert the triangle column by column.
  Matrix rinv(p, p);
  for (size_t c = 0; c < p; ++c) {
    for (size_t k = p; k-- > 0;) {
      double s = k == c ? 1.0 : 0.0;
      for (size_t j = k + 1; j < p; ++j) s -= x(k, j) * rinv(j, c);
      rinv(k, c) = s / x(k, k);
    }
  }
  const double s2 = rss / static_cast<double>(n - p);
  out.standard_errors.assign(p, 0.0);
  for (size_t k = 0; k < p; ++k) {
    double d = 0;
    for (size_t j = 0; j < p; ++j) d += rinv(k, j) * rinv(k, j);
    out.standard_errors[k] = std::sqrt(s2 * d);
  }
  return out;
}

}  // namespace seedance::cost::internal
