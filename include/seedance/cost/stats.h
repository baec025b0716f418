// Statistics for A/B comparisons of benchmark samples (feature COST-5): the Mann-Whitney U test,
// one-way ANOVA (Fisher's and Welch's), and bootstrap confidence intervals (percentile and BCa)
// for the mean, the median and the ratio of two samples' means or medians.
//
// Each function follows the SciPy function named beside it, definition for definition, so a
// result can be checked against SciPy (tests/python/test_cost_stats.py does, on hundreds of
// random cases): statistics and p-values to 1e-9 relative, bootstrap bounds within the
// resampling error (the random streams differ). The methods and their references are in
// docs/design/cost.md.
//
// Inputs are never modified. Every function rejects an empty sample, a NaN or an infinity with
// InvalidArgument naming the sample (`where` is e.g. "x[3]" or "groups[1]"); the degenerate cases
// each function documents get a stated fallback or an error, never a NaN in a result.
// Thread-safe: no shared state (the bootstrap's random stream is local to the call).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::cost {

// Which difference a test looks for. For the U test: kLess means x tends to be smaller than y.
enum class Alternative { kTwoSided, kLess, kGreater };
// "two-sided", "less" or "greater".
std::string_view AlternativeName(Alternative alternative);
base::StatusOr<Alternative> ParseAlternative(std::string_view text, std::string_view where);

// ---- Mann-Whitney U (scipy.stats.mannwhitneyu) --------------------------------------------

enum class MannWhitneyMethod {
  kAuto,        // exact when min(n1, n2) <= 8 and there are no ties, asymptotic otherwise
  kExact,       // the exact null distribution of U (ties ignored, as SciPy does)
  kAsymptotic,  // the normal approximation with the tie correction of the variance
};
std::string_view MannWhitneyMethodName(MannWhitneyMethod method);

struct MannWhitneyOptions {
  Alternative alternative = Alternative::kTwoSided;
  MannWhitneyMethod method = MannWhitneyMethod::kAuto;
  // Subtract 1/2 from |U - n1 n2 / 2| in the normal approximation.
  bool continuity = true;
};

struct MannWhitneyResult {
  // U1 = R1 - n1 (n1 + 1) / 2, where R1 is the sum of x's ranks in the pooled sample (average
  // ranks for ties): the number of pairs (x_i, y_j) with x_i > y_j, ties counting 1/2.
  double u = 0;
  double p = 1;
  bool exact = false;  // which method ran (kAuto decides per call)
};

// Fallback: when every value of both samples is equal the normal approximation has zero variance
// and p is 1 (no evidence of a difference), as in SciPy with the continuity correction.
base::StatusOr<MannWhitneyResult> MannWhitneyU(std::span<const double> x, std::span<const double> y,
                                               const MannWhitneyOptions& options = {});

// ---- One-way ANOVA (scipy.stats.f_oneway) -------------------------------------------------

struct AnovaResult {
  double f = 0;
  double p = 1;  // P(F(df_between, df_within) > f)
  double df_between = 0;
  double df_within = 0;  // not an integer for Welch's test
};

// Fisher's F test (equal_var) or Welch's heteroscedastic F test (Welch 1951) of equal means
// across two or more groups.
// Errors: fewer than two groups, an empty group, every group of size 1, every value equal
// (F is 0/0); for Welch's test also a group of size 1 or with zero variance (its weight n/s^2
// is undefined). Fallback: when each group is constant but the groups differ, F = +inf, p = 0.
base::StatusOr<AnovaResult> OneWayAnova(std::span<const std::vector<double>> groups,
                                        bool equal_var = true);

// ---- Bootstrap confidence intervals (scipy.stats.bootstrap) -------------------------------

enum class BootstrapStatistic { kMean, kMedian };
enum class BootstrapMethod { kPercentile, kBca };
std::string_view BootstrapStatisticName(BootstrapStatistic statistic);
std::string_view BootstrapMethodName(BootstrapMethod method);
base::StatusOr<BootstrapStatistic> ParseBootstrapStatistic(std::string_view text,
                                                           std::string_view where);
base::StatusOr<BootstrapMethod> ParseBootstrapMethod(std::string_view text, std::string_view where);

struct BootstrapOptions {
  BootstrapStatistic statistic = BootstrapStatistic::kMean;
  BootstrapMethod method = BootstrapMethod::kBca;
  double confidence = 0.95;  // two-sided, in (0, 1)
  int64_t resamples = 9999;  // >= 1
  uint64_t seed = 0;         // the same seed gives the same interval
};

struct ConfidenceInterval {
  double estimate = 0;  // the statistic of the data itself
  double low = 0;
  double high = 0;
};

// The interval for statistic(sample): B resamples with replacement, the statistic of each, and
// the percentile interval [q(alpha), q(1 - alpha)] of those (alpha = (1 - confidence) / 2,
// quantiles by linear interpolation), or BCa (Efron 1987): the same quantiles at levels moved
// by the bias correction z0 (from the share of resampled statistics below the estimate) and the
// acceleration a (from the jackknife).
// Errors: fewer than 2 values, a NaN or infinity, confidence outside (0, 1), resamples < 1;
// BCa when every resampled statistic lies on one side of the estimate (z0 infinite).
// Fallback: BCa with a jackknife of zero spread (a is 0/0) uses a = 0.
base::StatusOr<ConfidenceInterval> BootstrapCi(std::span<const double> sample,
                                               const BootstrapOptions& options = {});

// The interval for statistic(x) / statistic(y), each sample resampled independently (SciPy's
// multi-sample bootstrap, paired=False); BCa's acceleration sums the jackknife of each sample
// with the other fixed. Errors as above, and statistic(y) = 0 in the data.
base::StatusOr<ConfidenceInterval> BootstrapRatioCi(std::span<const double> x,
                                                    std::span<const double> y,
                                                    const BootstrapOptions& options = {});

// ---- Small helpers shared with the reports -------------------------------------------------

// The median (the mean of the two middle values for an even count); NaN when empty.
double Median(std::span<const double> values);
double Mean(std::span<const double> values);
// The sample standard deviation (n - 1 in the denominator); NaN with fewer than two values.
double SampleStdDev(std::span<const double> values);

}  // namespace seedance::cost
