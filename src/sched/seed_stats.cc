#include "src/sched/seed_stats.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>

#include "seedance/cost/stats.h"

namespace seedance::sched {
namespace {

constexpr double kConfidence = 0.95;
constexpr int64_t kResamples = 9999;
constexpr uint64_t kBootstrapSeed = 20261206;

// The BCa interval of the mean; every value equal (the interval of a constant is the constant,
// which BCa cannot compute) or a BCa failure gives the percentile interval or the point.
bool MeanInterval(std::span<const double> v, double& low, double& high) {
  if (v.size() < 2) return false;
  if (std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; })) {
    low = high = v[0];
    return true;
  }
  cost::BootstrapOptions o;
  o.confidence = kConfidence;
  o.resamples = kResamples;
  o.seed = kBootstrapSeed;
  auto ci = cost::BootstrapCi(v, o);
  if (!ci.ok()) {
    o.method = cost::BootstrapMethod::kPercentile;
    ci = cost::BootstrapCi(v, o);
  }
  if (!ci.ok()) return false;
  low = ci->low;
  high = ci->high;
  return true;
}

double MeanOf(std::span<const double> v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Two-sided sign-flip p-value of the mean of `d` (SciPy's rule: min of the two one-sided
// p-values, doubled, at most 1; a null statistic within 100 ulps of the observed one counts as
// equal).
double SignFlipPValue(std::span<const double> d, bool& exact) {
  const size_t n = d.size();
  const double observed = MeanOf(d);
  const double gamma = std::fabs(observed) * 100 * DBL_EPSILON;
  int64_t less = 0, greater = 0, total = 0;
  auto count = [&](double statistic) {
    less += statistic <= observed + gamma ? 1 : 0;
    greater += statistic >= observed - gamma ? 1 : 0;
    ++total;
  };
  exact = n < 63 && (int64_t{1} << n) <= kResamples + 1;
  if (exact) {
    for (uint64_t mask = 0; mask < (uint64_t{1} << n); ++mask) {
      double sum = 0;
      for (size_t i = 0; i < n; ++i) sum += (mask >> i & 1) != 0 ? -d[i] : d[i];
      count(sum / static_cast<double>(n));
    }
    const double p =
        2.0 * static_cast<double>(std::min(less, greater)) / static_cast<double>(total);
    return std::min(p, 1.0);
  }
  std::mt19937_64 rng(kBootstrapSeed);
  for (int64_t r = 0; r < kResamples; ++r) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += (rng() & 1) != 0 ? -d[i] : d[i];
    count(sum / static_cast<double>(n));
  }
  // Random patterns: the observed pattern counts once more on each side (SciPy's adjustment).
  const double p =
      2.0 * static_cast<double>(std::min(less, greater) + 1) / static_cast<double>(total + 1);
  return std::min(p, 1.0);
}

base::Report Pair(double low, double high) { return base::Report::array({low, high}); }

}  // namespace

SeedSpread SpreadOf(std::span<const double> per_seed) {
  SeedSpread s;
  if (per_seed.empty()) return s;
  s.mean = MeanOf(per_seed);
  if (per_seed.size() >= 2) s.sd = cost::SampleStdDev(per_seed);
  s.has_interval = MeanInterval(per_seed, s.low, s.high);
  return s;
}

PairedDifference PairedDifferenceOf(std::span<const double> a, std::span<const double> b) {
  PairedDifference out;
  const size_t n = std::min(a.size(), b.size());
  if (n == 0) return out;
  std::vector<double> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = a[i] - b[i];
  out.mean = MeanOf(d);
  // One seed, or a figure that is not a number: no interval and no test.
  if (n < 2 || !std::all_of(d.begin(), d.end(), [](double x) { return std::isfinite(x); })) {
    return out;
  }
  out.has_test = MeanInterval(d, out.low, out.high);
  out.p_value = SignFlipPValue(d, out.exact);
  return out;
}

base::Report SeedStatistics(const std::vector<std::string>& names,
                            const std::vector<std::vector<std::vector<double>>>& values,
                            const std::vector<SeedMetric>& metrics, const std::string& baseline,
                            base::Report& policies) {
  for (size_t p = 0; p < names.size(); ++p) {
    base::Report spread = base::Report::object();
    for (size_t m = 0; m < metrics.size(); ++m) {
      const std::vector<double>& v = values[p][m];
      const SeedSpread s = SpreadOf(v);
      base::Report one;
      one["mean"] = s.mean;
      one["interval_95"] = s.has_interval ? Pair(s.low, s.high) : base::Report(nullptr);
      one["sd"] = s.sd;
      one["per_seed"] = v;
      spread[metrics[m].name] = one;
    }
    policies[p]["seed_spread"] = spread;
  }
  base::Report comparisons = base::Report::array();
  const auto base_at = std::find(names.begin(), names.end(), baseline);
  if (base_at == names.end()) return comparisons;
  const size_t b = static_cast<size_t>(base_at - names.begin());
  for (size_t p = 0; p < names.size(); ++p) {
    if (p == b) continue;
    for (size_t m = 0; m < metrics.size(); ++m) {
      const PairedDifference d = PairedDifferenceOf(values[p][m], values[b][m]);
      base::Report c;
      c["policy"] = names[p];
      c["baseline"] = baseline;
      c["metric"] = metrics[m].name;
      c["difference"] = d.mean;
      if (d.has_test) {
        c["interval"] = {{"difference", Pair(d.low, d.high)}};
        c["p_value"] = d.p_value;
      } else {
        c["interval"] = nullptr;
        c["p_value"] = nullptr;
      }
      const bool better = metrics[m].lower_is_better ? d.mean < 0 : d.mean > 0;
      c["better"] = d.mean == 0 ? "same" : better ? "policy" : "baseline";
      c["seeds"] = values[p][m].size();
      c["test"] =
          d.exact ? "paired by seed; sign-flip, exact" : "paired by seed; sign-flip, 9,999 draws";
      comparisons.push_back(c);
    }
  }
  return comparisons;
}

}  // namespace seedance::sched
