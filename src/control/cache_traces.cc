#include "seedance/control/cache_traces.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace seedance::control {

std::vector<CacheKey> ShuffledEpochsTrace(CacheKey n, int epochs, std::mt19937_64& rng) {
  std::vector<CacheKey> order(n), trace;
  std::iota(order.begin(), order.end(), 0);
  for (int e = 0; e < epochs; ++e) {
    std::shuffle(order.begin(), order.end(), rng);
    trace.insert(trace.end(), order.begin(), order.end());
  }
  return trace;
}

std::vector<CacheKey> ZipfTrace(size_t length, CacheKey n, double s, std::mt19937_64& rng) {
  std::vector<double> cdf(n);
  double sum = 0;
  for (CacheKey i = 0; i < n; ++i) cdf[i] = sum += 1.0 / std::pow(static_cast<double>(i + 1), s);
  std::uniform_real_distribution<double> u(0, sum);
  std::vector<CacheKey> t(length);
  for (auto& k : t) {
    k = static_cast<CacheKey>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
  }
  return t;
}

}  // namespace seedance::control
