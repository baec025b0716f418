// Comparing two sets of benchmark results (feature COST-5, `seedancectl cost compare A B`): per
// benchmark, the change of the median from A (the baseline) to B, its bootstrap BCa confidence
// interval, the Mann-Whitney U p-value (two-sided; the test google/benchmark's compare.py runs,
// with its 9-repetition advice) and a verdict.
//
// Inputs, detected from the content:
//   Google Benchmark JSON (`--benchmark_format=json` / `--benchmark_out`), ideally with
//     `--benchmark_repetitions=N`: the per-repetition "iteration" entries of each run name,
//     real_time and cpu_time converted to nanoseconds from their time_unit; aggregates
//     (mean, median, stddev, cv) and errored runs are skipped.
//   Plain JSON: an object of sample arrays, {"name": [1.0, 2.0, ...], ...}.
//   CSV: a header with the columns `name` and `value`, one sample a line.
// Errors name the file and, where there is one, the line (CSV), the JSON parser's line and
// column, or the key ("benchmarks[3].real_time").
//
// Verdict of each benchmark present in both files, with d = median(B) / median(A) - 1:
//   "faster" / "slower"  p < alpha, the confidence interval of d excludes 0, and |d| >= the noise
//                        threshold (lower is better unless higher_is_better is set);
//   "within noise"       otherwise;
//   "too few samples"    fewer than 2 values on a side (no test is possible).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::cost {

struct BenchmarkSamples {
  std::string name;
  // Nanoseconds for Google Benchmark input; the values as given for plain JSON and CSV.
  std::vector<double> real_time;
  std::vector<double> cpu_time;  // Google Benchmark input only
};

struct SampleSet {
  std::string file;
  std::string format;                        // "google-benchmark", "json-samples" or "csv-samples"
  std::vector<BenchmarkSamples> benchmarks;  // in the file's order
};

// Reads `text` (named `file` in errors), detecting its format as described above.
base::StatusOr<SampleSet> ReadSamples(std::string_view text, const std::string& file);

enum class CompareMetric { kRealTime, kCpuTime };
std::string_view CompareMetricName(CompareMetric metric);
base::StatusOr<CompareMetric> ParseCompareMetric(std::string_view text, std::string_view where);

struct CompareOptions {
  CompareMetric metric = CompareMetric::kRealTime;  // cpu_time needs Google Benchmark input
  double alpha = 0.05;                              // significance level of the U test, in (0, 1)
  double noise_threshold = 0.02;    // relative change below which no verdict is given, >= 0
  double confidence = 0.95;         // of the change's interval
  int64_t resamples = 9999;         // bootstrap resamples
  uint64_t seed = 0;                // bootstrap seed
  bool higher_is_better = false;    // samples are throughputs, not times
  int recommended_repetitions = 9;  // fewer draws a warning (compare.py's advice)
  // compare.py's "filters" mode, for two variants in one file (A and B may be the same file):
  // keep A's benchmarks whose name contains filter_a and B's that contain filter_b, and match
  // them by the name with that text replaced by "[filter_a vs filter_b]". Both or neither.
  std::string filter_a = {};
  std::string filter_b = {};
};

// The comparison report: settings, one row per benchmark in both files (A's order), the names
// found in one file only, the geometric mean of the median ratios, and warnings.
base::StatusOr<base::Report> CompareSamples(const SampleSet& a, const SampleSet& b,
                                            const CompareOptions& options = {});

}  // namespace seedance::cost
