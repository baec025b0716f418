// What the seeds of a scheduler experiment say beyond their mean (feature SCHED-7): each
// policy's headline figures with a 95% bootstrap interval of the mean over seeds, and each policy
// against a baseline, paired by seed (a seed fixes the arrival order, so the policies of one seed
// see the same pods in the same order).
//
//   interval of a mean       cost::BootstrapCi: BCa, 9,999 resamples, a fixed seed (the same
//                            report every run); every seed equal gives [v, v]
//   paired difference        the mean of a[i] - b[i] with its BCa interval, and the two-sided
//                            p-value of a sign-flip permutation test of that mean: exact over all
//                            2^n sign patterns up to n = 13 seeds, else 9,999 random patterns,
//                            as scipy.stats.permutation_test(permutation_type="samples") does
//
// One seed gives no interval and no test (null).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "seedance/base/report.h"

namespace seedance::sched {

// A figure every run of a policy yields, and which way is better.
struct SeedMetric {
  std::string name;  // the report's key: "unallocated_gpu_pct_at_130"
  bool lower_is_better = true;
};

struct SeedSpread {
  double mean = 0;
  bool has_interval = false;
  double low = 0, high = 0;  // 95%
  double sd = 0;             // sample standard deviation (n - 1)
};
SeedSpread SpreadOf(std::span<const double> per_seed);

struct PairedDifference {
  double mean = 0;  // mean of a[i] - b[i]
  bool has_test = false;
  double low = 0, high = 0;  // 95% interval of the mean difference
  double p_value = 1;
  bool exact = false;  // every sign pattern enumerated
};
// a and b of the same length (seeds in the same order).
PairedDifference PairedDifferenceOf(std::span<const double> a, std::span<const double> b);

// values[policy][metric][seed]. Adds to each policy object of `policies` (a report array in the
// same order) "seed_spread": {metric: {mean, interval_95, sd, per_seed}}, and returns the
// "comparisons" list: every other policy against `baseline`, per metric, {policy, baseline,
// metric, difference, interval: {difference: [lo, hi]}, p_value, better, seeds, test}.
base::Report SeedStatistics(const std::vector<std::string>& names,
                            const std::vector<std::vector<std::vector<double>>>& values,
                            const std::vector<SeedMetric>& metrics, const std::string& baseline,
                            base::Report& policies);

}  // namespace seedance::sched
