#include "seedance/cost/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "seedance/base/enum_names.h"
#include "seedance/base/quantile.h"
#include "src/cost/special_functions.h"

namespace seedance::cost {
namespace {

using internal::FDistributionSf;
using internal::Ndtr;
using internal::Ndtri;

constexpr base::EnumTable<Alternative, 3> kAlternativeNames = {
    {{Alternative::kTwoSided, "two-sided"},
     {Alternative::kLess, "less"},
     {Alternative::kGreater, "greater"}}};
constexpr base::EnumTable<MannWhitneyMethod, 3> kMannWhitneyMethodNames = {
    {{MannWhitneyMethod::kAuto, "auto"},
     {MannWhitneyMethod::kExact, "exact"},
     {MannWhitneyMethod::kAsymptotic, "asymptotic"}}};
constexpr base::EnumTable<BootstrapStatistic, 2> kBootstrapStatisticNames = {
    {{BootstrapStatistic::kMean, "mean"}, {BootstrapStatistic::kMedian, "median"}}};
constexpr base::EnumTable<BootstrapMethod, 2> kBootstrapMethodNames = {
    {{BootstrapMethod::kPercentile, "percentile"}, {BootstrapMethod::kBca, "bca"}}};

// Every value finite; `name` names the sample in the error ("x[3]").
base::Status CheckSample(std::span<const double> values, std::string_view name, size_t min_size) {
  if (values.size() < min_size) {
    return base::InvalidArgumentError(
        min_size <= 1 ? "the sample is empty"
                      : "the sample needs at least " + std::to_string(min_size) + " values, has " +
                            std::to_string(values.size()),
        std::string(name));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      return base::InvalidArgumentError(
          "expected a finite number, got " + std::to_string(values[i]),
          std::string(name) + "[" + std::to_string(i) + "]");
    }
  }
  return base::OkStatus();
}

// ---- Mann-Whitney U ----

// Average ranks (1-based) of the pooled values, and the sum over tie groups of t^3 - t.
struct Ranking {
  std::vector<double> ranks;
  double tie_term = 0;
  bool ties = false;
};

Ranking RankPooled(std::span<const double> x, std::span<const double> y) {
  const size_t n = x.size() + y.size();
  std::vector<double> pooled(x.begin(), x.end());
  pooled.insert(pooled.end(), y.begin(), y.end());
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return pooled[a] < pooled[b]; });
  Ranking r;
  r.ranks.resize(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && pooled[order[j + 1]] == pooled[order[i]]) ++j;
    const double average = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) r.ranks[order[k]] = average;
    const double t = static_cast<double>(j - i + 1);
    if (t > 1) {
      r.tie_term += t * t * t - t;
      r.ties = true;
    }
    i = j + 1;
  }
  return r;
}

// P(U >= k) under the null for sample sizes m and n, from the exact distribution: the number of
// arrangements with U = u is the coefficient of q^u in the Gaussian binomial [m+n choose m]_q,
// built row by row with the q-Pascal rule [N choose j] = [N-1 choose j-1] + q^j [N-1 choose j].
// Every step adds non-negative numbers, so long double keeps about 1e-16 relative precision
// whatever the sizes. Cost about (m + n) * min(m, n) * m * n additions: refused above kMaxWork.
base::StatusOr<double> ExactUpperTail(int64_t m, int64_t n, int64_t k) {
  constexpr double kMaxWork = 4e9;
  if (m > n) std::swap(m, n);
  const int64_t top = m * n;
  if (k <= 0) return 1.0;
  if (k > top) return 0.0;
  if (static_cast<double>(m + n) * static_cast<double>(m) * static_cast<double>(top) > kMaxWork) {
    return base::InvalidArgumentError(
        "the exact distribution of U for samples of " + std::to_string(m) + " and " +
            std::to_string(n) + " values is too costly to compute; use the asymptotic method",
        "method");
  }
  using Poly = std::vector<long double>;
  // row[j] = [N choose j]_q for the j that can still reach (m + n, m): max(0, N - n) <= j <= m.
  std::vector<Poly> row(static_cast<size_t>(m) + 1), next(static_cast<size_t>(m) + 1);
  row[0] = Poly{1.0L};  // N = 0
  for (int64_t big_n = 1; big_n <= m + n; ++big_n) {
    const int64_t lo = std::max<int64_t>(0, big_n - n);
    const int64_t hi = std::min(big_n, m);
    for (int64_t j = lo; j <= hi; ++j) {
      Poly& out = next[static_cast<size_t>(j)];
      out.assign(static_cast<size_t>(j * (big_n - j)) + 1, 0.0L);
      if (j >= 1 && j - 1 <= big_n - 1 && !row[static_cast<size_t>(j - 1)].empty()) {
        const Poly& a = row[static_cast<size_t>(j - 1)];
        for (size_t u = 0; u < a.size(); ++u) out[u] += a[u];
      }
      if (j <= big_n - 1 && !row[static_cast<size_t>(j)].empty()) {
        const Poly& b = row[static_cast<size_t>(j)];
        for (size_t u = 0; u < b.size(); ++u) out[u + static_cast<size_t>(j)] += b[u];
      }
    }
    for (int64_t j = 0; j <= m; ++j) {
      if (j < lo || j > hi) next[static_cast<size_t>(j)].clear();
    }
    std::swap(row, next);
  }
  const Poly& c = row[static_cast<size_t>(m)];
  long double total = 0, tail = 0;
  for (int64_t u = 0; u <= top; ++u) {
    total += c[static_cast<size_t>(u)];
    if (u >= k) tail += c[static_cast<size_t>(u)];
  }
  return static_cast<double>(tail / total);
}

// ---- Bootstrap ----

// Unbiased integers in [0, n) from a 64-bit generator (reject the top values that would favour
// small remainders), so the resamples do not depend on the standard library's distributions.
class IndexStream {
 public:
  explicit IndexStream(uint64_t seed) : gen_(seed) {}
  size_t Next(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    while (true) {
      const uint64_t r = gen_();
      if (r >= threshold) return static_cast<size_t>(r % n);
    }
  }

 private:
  std::mt19937_64 gen_;
};

double Statistic(BootstrapStatistic s, std::vector<double>& scratch) {
  if (s == BootstrapStatistic::kMean) return Mean(scratch);
  const size_t n = scratch.size();
  const size_t mid = n / 2;
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<ptrdiff_t>(mid), scratch.end());
  const double upper = scratch[mid];
  if (n % 2 == 1) return upper;
  const double lower =
      *std::max_element(scratch.begin(), scratch.begin() + static_cast<ptrdiff_t>(mid));
  return (lower + upper) / 2.0;
}

// The statistic of each leave-one-out subsample, in the sample's order: O(n) for the mean,
// O(n log n) for the median (one sort; removing a value shifts the middle by at most one place).
std::vector<double> Jackknife(BootstrapStatistic s, std::span<const double> sample) {
  const size_t n = sample.size();
  std::vector<double> out(n);
  if (s == BootstrapStatistic::kMean) {
    // Leave-one-out means from the centred values: (sum - x_i) / (n - 1) without cancellation.
    const double mean = Mean(sample);
    const double n1 = static_cast<double>(n - 1);
    for (size_t i = 0; i < n; ++i) out[i] = mean - (sample[i] - mean) / n1;
    return out;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sample[a] < sample[b]; });
  std::vector<double> sorted(n);
  for (size_t r = 0; r < n; ++r) sorted[r] = sample[order[r]];
  const size_t m = n - 1;  // values left
  for (size_t r = 0; r < n; ++r) {
    // The value of rank k among the n - 1 left when rank r is removed.
    auto at = [&](size_t k) { return sorted[k < r ? k : k + 1]; };
    out[order[r]] = m % 2 == 1 ? at(m / 2) : (at(m / 2 - 1) + at(m / 2)) / 2.0;
  }
  return out;
}

struct Sample {
  std::span<const double> values;
  std::string_view name;
};

base::Status CheckBootstrapOptions(const BootstrapOptions& o) {
  if (!(o.confidence > 0 && o.confidence < 1)) {
    return base::InvalidArgumentError(
        "expected a confidence level in (0, 1), got " + std::to_string(o.confidence), "confidence");
  }
  if (o.resamples < 1) {
    return base::InvalidArgumentError(
        "expected at least 1 resample, got " + std::to_string(o.resamples), "resamples");
  }
  return base::OkStatus();
}

// The bootstrap of statistic(samples[0]) (one sample) or statistic(samples[0]) /
// statistic(samples[1]) (two), as scipy.stats.bootstrap computes it.
base::StatusOr<ConfidenceInterval> Bootstrap(std::span<const Sample> samples,
                                             const BootstrapOptions& o) {
  SEEDANCE_RETURN_IF_ERROR(CheckBootstrapOptions(o));
  for (const Sample& s : samples) SEEDANCE_RETURN_IF_ERROR(CheckSample(s.values, s.name, 2));
  std::vector<double> scratch;
  auto stat_of = [&](std::span<const double> v) {
    scratch.assign(v.begin(), v.end());
    return Statistic(o.statistic, scratch);
  };
  const bool ratio = samples.size() == 2;
  std::vector<double> data_stats(samples.size());  // of the data itself
  for (size_t j = 0; j < samples.size(); ++j) data_stats[j] = stat_of(samples[j].values);
  std::vector<double> stats = data_stats;  // of each resample, reused
  if (ratio && data_stats[1] == 0) {
    return base::InvalidArgumentError("the ratio is undefined: the " +
                                          std::string(BootstrapStatisticName(o.statistic)) +
                                          " of the denominator sample is 0",
                                      std::string(samples[1].name));
  }
  const double estimate = ratio ? data_stats[0] / data_stats[1] : data_stats[0];

  // The resampled statistics, B of them; samples drawn in turn from one stream.
  IndexStream stream(o.seed);
  std::vector<double> theta(static_cast<size_t>(o.resamples));
  for (double& t : theta) {
    for (size_t j = 0; j < samples.size(); ++j) {
      const auto& v = samples[j].values;
      scratch.resize(v.size());
      for (double& x : scratch) x = v[stream.Next(v.size())];
      stats[j] = Statistic(o.statistic, scratch);
    }
    t = ratio ? stats[0] / stats[1] : stats[0];
  }
  for (size_t b = 0; b < theta.size(); ++b) {
    if (!std::isfinite(theta[b])) {
      return base::InvalidArgumentError(
          "a resample's ratio is not finite (its denominator sample's statistic is 0): the "
          "denominator sample has too many zeros for a ratio",
          std::string(samples.back().name));
    }
  }

  const double alpha = (1.0 - o.confidence) / 2.0;
  double level_low = alpha;
  double level_high = 1.0 - alpha;
  if (o.method == BootstrapMethod::kBca) {
    // Bias correction: the share of resampled statistics below the estimate ("mean" percentile
    // of score: ties count half).
    double below = 0;
    for (double t : theta) below += (t < estimate ? 1.0 : 0.0) + (t <= estimate ? 1.0 : 0.0);
    const double z0 = Ndtri(below / (2.0 * static_cast<double>(theta.size())));
    if (!std::isfinite(z0)) {
      return base::InvalidArgumentError(
          "the BCa interval is undefined: every resampled statistic lies on one side of the "
          "estimate (use the percentile method)",
          "method");
    }
    // Acceleration from the jackknife of each sample with the others fixed.
    double num = 0, den = 0;
    for (size_t j = 0; j < samples.size(); ++j) {
      std::vector<double> jack = Jackknife(o.statistic, samples[j].values);
      if (ratio) {
        const double other = data_stats[1 - j];
        for (double& t : jack) t = j == 0 ? t / other : other / t;
      }
      const double n = static_cast<double>(jack.size());
      const double mean = Mean(jack);
      double s2 = 0, s3 = 0;
      for (double t : jack) {
        const double u = (n - 1.0) * (mean - t);
        s2 += u * u;
        s3 += u * u * u;
      }
      num += s3 / (n * n * n);
      den += s2 / (n * n);
    }
    const double a = den > 0 ? num / (6.0 * std::pow(den, 1.5)) : 0.0;
    if (!std::isfinite(a)) {
      return base::InvalidArgumentError(
          "the BCa acceleration is not finite (a leave-one-out statistic of the denominator "
          "sample is 0): use the percentile method",
          "method");
    }
    const double z_low = Ndtri(alpha);
    const double z_high = -z_low;
    level_low = Ndtr(z0 + (z0 + z_low) / (1.0 - a * (z0 + z_low)));
    level_high = Ndtr(z0 + (z0 + z_high) / (1.0 - a * (z0 + z_high)));
  }
  std::sort(theta.begin(), theta.end());
  return ConfidenceInterval{estimate, base::QuantileOfSorted(theta, level_low),
                            base::QuantileOfSorted(theta, level_high)};
}

}  // namespace

std::string_view AlternativeName(Alternative a) { return base::EnumName(kAlternativeNames, a); }
base::StatusOr<Alternative> ParseAlternative(std::string_view text, std::string_view where) {
  return base::ParseEnum(kAlternativeNames, text, where);
}
std::string_view MannWhitneyMethodName(MannWhitneyMethod m) {
  return base::EnumName(kMannWhitneyMethodNames, m);
}
std::string_view BootstrapStatisticName(BootstrapStatistic s) {
  return base::EnumName(kBootstrapStatisticNames, s);
}
std::string_view BootstrapMethodName(BootstrapMethod m) {
  return base::EnumName(kBootstrapMethodNames, m);
}
base::StatusOr<BootstrapStatistic> ParseBootstrapStatistic(std::string_view text,
                                                           std::string_view where) {
  return base::ParseEnum(kBootstrapStatisticNames, text, where);
}
base::StatusOr<BootstrapMethod> ParseBootstrapMethod(std::string_view text,
                                                     std::string_view where) {
  return base::ParseEnum(kBootstrapMethodNames, text, where);
}

double Mean(std::span<const double> values) {
  if (values.empty()) return std::nan("");
  // Two passes: the mean, then the mean of the residuals added back (exact for constant data).
  double sum = 0;
  for (double v : values) sum += v;
  const double n = static_cast<double>(values.size());
  const double first = sum / n;
  double residual = 0;
  for (double v : values) residual += v - first;
  return first + residual / n;
}

double SampleStdDev(std::span<const double> values) {
  if (values.size() < 2) return std::nan("");
  const double mean = Mean(values);
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

double Median(std::span<const double> values) {
  if (values.empty()) return std::nan("");
  std::vector<double> scratch(values.begin(), values.end());
  return Statistic(BootstrapStatistic::kMedian, scratch);
}

base::StatusOr<MannWhitneyResult> MannWhitneyU(std::span<const double> x, std::span<const double> y,
                                               const MannWhitneyOptions& options) {
  SEEDANCE_RETURN_IF_ERROR(CheckSample(x, "x", 1));
  SEEDANCE_RETURN_IF_ERROR(CheckSample(y, "y", 1));
  const auto n1 = static_cast<int64_t>(x.size());
  const auto n2 = static_cast<int64_t>(y.size());
  const Ranking ranking = RankPooled(x, y);
  double r1 = 0;
  for (size_t i = 0; i < x.size(); ++i) r1 += ranking.ranks[i];
  const double u1 = r1 - static_cast<double>(n1) * static_cast<double>(n1 + 1) / 2.0;
  const double u2 = static_cast<double>(n1) * static_cast<double>(n2) - u1;

  // The upper tail of the statistic that grows with the alternative; doubled when two-sided.
  double u = std::max(u1, u2);
  double factor = 2.0;
  if (options.alternative == Alternative::kGreater) u = u1, factor = 1.0;
  if (options.alternative == Alternative::kLess) u = u2, factor = 1.0;

  MannWhitneyResult result;
  result.u = u1;
  result.exact =
      options.method == MannWhitneyMethod::kExact ||
      (options.method == MannWhitneyMethod::kAuto && std::min(n1, n2) <= 8 && !ranking.ties);
  double p;
  if (result.exact) {
    // Without ties U is an integer; with ties (forced exact) SciPy truncates it the same way.
    SEEDANCE_ASSIGN_OR_RETURN(p, ExactUpperTail(n1, n2, static_cast<int64_t>(u)));
  } else {
    const double n = static_cast<double>(n1 + n2);
    const double mu = static_cast<double>(n1) * static_cast<double>(n2) / 2.0;
    const double s = std::sqrt(static_cast<double>(n1) * static_cast<double>(n2) / 12.0 *
                               ((n + 1.0) - ranking.tie_term / (n * (n - 1.0))));
    double numerator = u - mu;
    if (options.continuity) numerator -= 0.5;
    if (s == 0) {
      p = 1.0;  // every value equal: no evidence either way
    } else {
      p = Ndtr(-numerator / s);
    }
  }
  result.p = std::clamp(p * factor, 0.0, 1.0);
  return result;
}

base::StatusOr<AnovaResult> OneWayAnova(std::span<const std::vector<double>> groups,
                                        bool equal_var) {
  if (groups.size() < 2) {
    return base::InvalidArgumentError(
        "expected at least 2 groups, got " + std::to_string(groups.size()), "groups");
  }
  bool all_single = true;
  for (size_t g = 0; g < groups.size(); ++g) {
    SEEDANCE_RETURN_IF_ERROR(CheckSample(groups[g], "groups[" + std::to_string(g) + "]", 1));
    all_single = all_single && groups[g].size() == 1;
  }
  if (all_single) {
    return base::InvalidArgumentError(
        "every group has one value: the within-group variance is "
        "undefined (at least one group needs 2 values)",
        "groups");
  }
  // Constant groups: F is +inf when the constants differ and 0/0 when they are all equal.
  bool all_constant = true;
  bool all_equal = true;
  const double first = groups[0][0];
  for (const auto& g : groups) {
    for (double v : g) {
      all_constant = all_constant && v == g[0];
      all_equal = all_equal && v == first;
    }
  }
  if (all_equal) {
    return base::InvalidArgumentError("every value is equal: F is undefined (0/0)", "groups");
  }
  const double k = static_cast<double>(groups.size());
  AnovaResult r;
  if (equal_var) {
    // Sums of squares about the grand mean (shifted to it first, for stability).
    double total_n = 0, grand = 0;
    for (const auto& g : groups) {
      total_n += static_cast<double>(g.size());
      for (double v : g) grand += v;
    }
    grand /= total_n;
    double ss_between = 0, ss_within = 0;
    for (const auto& g : groups) {
      const double m = Mean(g);
      ss_between += static_cast<double>(g.size()) * (m - grand) * (m - grand);
      for (double v : g) ss_within += (v - m) * (v - m);
    }
    r.df_between = k - 1.0;
    r.df_within = total_n - k;
    r.f = all_constant ? std::numeric_limits<double>::infinity()
                       : (ss_between / r.df_between) / (ss_within / r.df_within);
  } else {
    std::vector<double> w(groups.size()), m(groups.size()), n(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::string where = "groups[" + std::to_string(g) + "]";
      n[g] = static_cast<double>(groups[g].size());
      if (groups[g].size() < 2) {
        return base::InvalidArgumentError("Welch's test needs at least 2 values in every group",
                                          where);
      }
      m[g] = Mean(groups[g]);
      double ss = 0;
      for (double v : groups[g]) ss += (v - m[g]) * (v - m[g]);
      if (ss == 0) {
        return base::InvalidArgumentError(
            "Welch's test needs a non-zero variance in every group (its weight n/s^2 is "
            "undefined)",
            where);
      }
      w[g] = n[g] / (ss / (n[g] - 1.0));
    }
    const double sum_w = std::accumulate(w.begin(), w.end(), 0.0);
    double weighted_mean = 0;
    for (size_t g = 0; g < w.size(); ++g) weighted_mean += w[g] * m[g];
    weighted_mean /= sum_w;
    double between = 0, lambda = 0;
    for (size_t g = 0; g < w.size(); ++g) {
      between += w[g] * (m[g] - weighted_mean) * (m[g] - weighted_mean);
      const double share = 1.0 - w[g] / sum_w;
      lambda += share * share / (n[g] - 1.0);
    }
    r.f = (between / (k - 1.0)) / (1.0 + 2.0 * (k - 2.0) / (k * k - 1.0) * lambda);
    r.df_between = k - 1.0;
    r.df_within = (k * k - 1.0) / (3.0 * lambda);
  }
  r.p = FDistributionSf(r.df_between, r.df_within, r.f);
  return r;
}

base::StatusOr<ConfidenceInterval> BootstrapCi(std::span<const double> sample,
                                               const BootstrapOptions& options) {
  const Sample one[] = {{sample, "sample"}};
  return Bootstrap(one, options);
}

base::StatusOr<ConfidenceInterval> BootstrapRatioCi(std::span<const double> x,
                                                    std::span<const double> y,
                                                    const BootstrapOptions& options) {
  const Sample two[] = {{x, "x"}, {y, "y"}};
  return Bootstrap(two, options);
}

}  // namespace seedance::cost
