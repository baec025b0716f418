#include "seedance/base/quantile.h"

#include <algorithm>
#include <cmath>

#include "seedance/base/logging.h"

namespace seedance::base {

double QuantileOfSorted(std::span<const double> sorted, double q) {
  SEEDANCE_CHECK(!sorted.empty()) << "quantile of an empty sample";
  SEEDANCE_CHECK(q >= 0 && q <= 1) << "quantile q=" << q << " outside [0, 1]";
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted[lo];
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

double Quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return QuantileOfSorted(values, q);
}

}  // namespace seedance::base
