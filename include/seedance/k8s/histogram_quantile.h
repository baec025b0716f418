// PromQL's histogram_quantile over classic (`_bucket` with `le`) histograms, computed as
// Prometheus computes it (promql/quantile.go), so a figure `diagnose` prints is the figure a
// Grafana panel over the same series shows. Tested against promtool's own evaluation.
//
// BucketQuantile(q, buckets), step by step:
//   q NaN -> NaN; q < 0 -> -Inf; q > 1 -> +Inf.
//   Sort by upper bound. The highest bound must be +Inf, else NaN.
//   Buckets with equal bounds are merged (counts added).
//   Counts whose relative difference from the previous bucket is at most 1e-12 take the
//   previous count (float noise of rate()); then the counts are made monotonic by carrying the
//   running maximum forward (c_i := max(c_0..c_i)).
//   Fewer than 2 buckets, or 0 observations (the +Inf count), -> NaN.
//   rank = q * observations; b = the first bucket (not counting +Inf) with count >= rank.
//   b is the +Inf bucket -> the second-highest bound.
//   b = 0 with upper bound <= 0 -> that bound.
//   Otherwise linear interpolation inside b, from the previous bound (0 for b = 0):
//     start + (end - start) * (rank - count_{b-1}) / (count_b - count_{b-1}).
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/base/prometheus_parse.h"
#include "seedance/base/status.h"

namespace seedance::k8s {

struct Bucket {
  double upper_bound = 0;
  double count = 0;  // cumulative: observations <= upper_bound
};

double BucketQuantile(double q, std::vector<Bucket> buckets);

// One classic histogram series: the `<family>_bucket` samples that share every label but `le`
// (a sample whose `le` does not parse as a float is skipped, as Prometheus skips it).
struct HistogramSeries {
  std::vector<std::pair<std::string, std::string>> labels;  // without `le`, sorted
  std::vector<Bucket> buckets;
  double count = 0;  // `<family>_count` when present, else the +Inf bucket
  double sum = 0;    // `<family>_sum` when present
};

// Every series of `family` in the text, keyed by its labels (without `le`).
std::vector<HistogramSeries> CollectHistograms(const base::PromText& text, std::string_view family);

// Whether every series of `family` in the text is a well-formed classic histogram: each bucket
// has an `le` that parses, each `le` once per series, every count a finite number of 0 or more,
// counts that never fall as `le` rises, and a `+Inf` bucket. An error names `source:line` of
// the first sample at fault. (BucketQuantile quietly repairs or skips such data, as Prometheus
// does; a diagnosis built on it would be a guess, so `diagnose` refuses it instead.)
base::Status CheckHistograms(const base::PromText& text, std::string_view family,
                             const std::string& source);

// `sum by (le) (...)`: the buckets of all the series added by upper bound, as one series
// without labels (no buckets when there are no series).
HistogramSeries SumByLe(const std::vector<HistogramSeries>& series);

// The increase of `now` over `before` bucket by bucket (a counter reset, a count that went
// down, takes `now` whole, as rate() would). Series are matched by labels and bounds.
HistogramSeries Increase(const HistogramSeries& now, const HistogramSeries* before);

}  // namespace seedance::k8s
