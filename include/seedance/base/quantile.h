// The one sample quantile of Seedance. Every percentile the project reports (simulate's queueing
// delays, serve-bench's and loadtest's latencies, the fleet replay's waits, the bootstrap's
// interval ends, the planner's residual bands, the freezing controller's cut) is this statistic.
//
// Definition: linear interpolation between order statistics, Hyndman and Fan's type 7, which is
// NumPy's `np.quantile(x, q)` default ("linear"), R's `quantile(x, q)` default and SciPy's. For
// n sorted values x[0] <= ... <= x[n-1] and q in [0, 1], with h = (n - 1) q:
//   Q(q) = x[floor(h)] + (h - floor(h)) (x[floor(h) + 1] - x[floor(h)])
// so Q(0) is the minimum, Q(1) the maximum and Q(0.5) the usual median (the mean of the two
// middle values when n is even). A sample of one value has that value at every q.
//
// Prometheus's `histogram_quantile` (k8s/histogram_quantile.h) estimates a quantile from
// cumulative bucket counts, not from the sample; it is a different estimator and keeps its name.
#pragma once

#include <span>
#include <vector>

namespace seedance::base {

// Q(q) of values already sorted ascending. Preconditions: `sorted` is non-empty and sorted, and
// q is in [0, 1] (checked: a violated one aborts with a message, it is a caller's bug).
double QuantileOfSorted(std::span<const double> sorted, double q);

// Q(q) of `values` in any order (sorts its copy); the preconditions of QuantileOfSorted apart
// from the order. Callers decide what an empty sample reports.
double Quantile(std::vector<double> values, double q);

}  // namespace seedance::base
