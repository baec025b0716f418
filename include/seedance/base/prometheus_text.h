// Prometheus text exposition (format 0.0.4), the writing half: HELP and TYPE once per family,
// then its samples with escaped label values, numbers in the format's spelling, and histograms
// as `_bucket` (cumulative, `le` last), `_sum` and `_count`. Every /metrics page of Seedance —
// the probe's exporter, the training-loop controllers' cache, the Kubernetes extender — writes
// through this, so they agree on spelling; `promtool check metrics` tests hold them to it.
//
// Thread safety: a PrometheusWriter is used by one thread; the free functions are pure.
#pragma once

#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seedance::base {

// Escapes a label value: backslash, double quote, newline.
std::string EscapeLabelValue(const std::string& value);

// A sample value as exposition text: a whole number below 10^15 without a fraction, any other
// finite value as the shortest decimal that reads back to the same double (0.1, not
// 0.10000000000000001), and NaN, +Inf, -Inf as the format spells them.
std::string FormatSampleValue(double value);

class PrometheusWriter {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  // Starts a family: its HELP and TYPE lines; the samples that follow carry its name.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(const Labels& labels, double value);
  // One histogram of the current family: `cumulative[i]` observations <= bounds[i], and the
  // total (the +Inf bucket and _count) last, so cumulative.size() == bounds.size() + 1.
  void Histogram(const Labels& labels, std::span<const double> bounds,
                 std::span<const uint64_t> cumulative, double sum);
  std::string str() const { return out_.str(); }

 private:
  void Line(std::string_view name, const Labels& labels, double value);
  std::ostringstream out_;
  std::string name_;
};

}  // namespace seedance::base
