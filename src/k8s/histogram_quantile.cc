#include "seedance/k8s/histogram_quantile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "seedance/base/prometheus_text.h"

namespace seedance::k8s {
namespace {

constexpr double kQuantileNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kQuantileInf = std::numeric_limits<double>::infinity();

// Equal bounds merged; the input sorted by bound.
void CoalesceBuckets(std::vector<Bucket>& b) {
  size_t out = 0;
  for (size_t i = 1; i < b.size(); ++i) {
    if (b[i].upper_bound == b[out].upper_bound) {
      b[out].count += b[i].count;
    } else {
      b[++out] = b[i];
    }
  }
  b.resize(out + 1);
}

void CorrectPrecisionErrors(std::vector<Bucket>& b, double tolerance) {
  double prev = b[0].count;
  for (size_t i = 1; i < b.size(); ++i) {
    const double delta = std::fabs(b[i].count - prev);
    if (delta == 0) continue;
    if (delta / b[i].count <= tolerance) {
      b[i].count = prev;
    } else {
      prev = b[i].count;
    }
  }
}

void EnsureMonotonic(std::vector<Bucket>& b) {
  double max = b[0].count;
  for (size_t i = 1; i < b.size(); ++i) {
    if (b[i].count > max) {
      max = b[i].count;
    } else if (b[i].count < max) {
      b[i].count = max;
    }
  }
}

}  // namespace

double BucketQuantile(double q, std::vector<Bucket> buckets) {
  if (std::isnan(q)) return kQuantileNaN;
  if (q < 0) return -kQuantileInf;
  if (q > 1) return kQuantileInf;
  if (buckets.empty()) return kQuantileNaN;
  std::stable_sort(buckets.begin(), buckets.end(),
                   [](const Bucket& a, const Bucket& b) { return a.upper_bound < b.upper_bound; });
  if (!(std::isinf(buckets.back().upper_bound) && buckets.back().upper_bound > 0))
    return kQuantileNaN;
  CoalesceBuckets(buckets);
  CorrectPrecisionErrors(buckets, 1e-12);
  EnsureMonotonic(buckets);
  if (buckets.size() < 2) return kQuantileNaN;
  const double observations = buckets.back().count;
  if (observations == 0) return kQuantileNaN;
  double rank = q * observations;
  // The first of the finite buckets whose count reaches the rank, the +Inf one when none does:
  // a binary search as Go's sort.Search does it, so even NaN counts land where Prometheus's do.
  size_t b = 0;
  for (size_t hi = buckets.size() - 1; b < hi;) {
    const size_t mid = b + (hi - b) / 2;
    if (buckets[mid].count >= rank) {
      hi = mid;
    } else {
      b = mid + 1;
    }
  }
  if (b == buckets.size() - 1) return buckets[buckets.size() - 2].upper_bound;
  if (b == 0 && buckets[0].upper_bound <= 0) return buckets[0].upper_bound;
  double start = 0;
  const double end = buckets[b].upper_bound;
  double count = buckets[b].count;
  if (b > 0) {
    start = buckets[b - 1].upper_bound;
    count -= buckets[b - 1].count;
    rank -= buckets[b - 1].count;
  }
  return start + (end - start) * (rank / count);
}

std::vector<HistogramSeries> CollectHistograms(const base::PromText& text,
                                               std::string_view family) {
  const std::string bucket_name = std::string(family) + "_bucket";
  const std::string count_name = std::string(family) + "_count";
  const std::string sum_name = std::string(family) + "_sum";
  std::map<std::vector<std::pair<std::string, std::string>>, HistogramSeries> by_labels;
  for (const base::PromSample& s : text.samples) {
    if (s.name != bucket_name && s.name != count_name && s.name != sum_name) continue;
    std::vector<std::pair<std::string, std::string>> labels;
    std::string_view le;
    bool has_le = false;
    for (const auto& [k, v] : s.labels) {
      if (k == "le") {
        le = v;
        has_le = true;
      } else {
        labels.emplace_back(k, v);
      }
    }
    HistogramSeries& h = by_labels[labels];
    h.labels = labels;
    if (s.name == bucket_name) {
      if (!has_le) continue;
      const std::optional<double> bound = base::ParsePrometheusValue(le);
      if (!bound || std::isnan(*bound)) continue;
      h.buckets.push_back({*bound, s.value});
    } else if (s.name == count_name) {
      h.count = s.value;
    } else {
      h.sum = s.value;
    }
  }
  std::vector<HistogramSeries> out;
  for (auto& [labels, h] : by_labels) {
    if (h.buckets.empty()) continue;
    if (h.count == 0) {
      for (const Bucket& b : h.buckets) {
        if (std::isinf(b.upper_bound) && b.upper_bound > 0) h.count = b.count;
      }
    }
    out.push_back(std::move(h));
  }
  return out;
}

base::Status CheckHistograms(const base::PromText& text, std::string_view family,
                             const std::string& source) {
  const std::string bucket_name = std::string(family) + "_bucket";
  struct Seen {
    std::map<double, std::pair<double, int>> by_bound;  // le -> (count, line)
    int first_line = 0;
  };
  std::map<std::vector<std::pair<std::string, std::string>>, Seen> series;
  auto at = [&source](int line) { return source + ":" + std::to_string(line); };
  for (const base::PromSample& s : text.samples) {
    if (s.name != bucket_name) continue;
    std::vector<std::pair<std::string, std::string>> labels;
    std::optional<std::string_view> le;
    for (const auto& [k, v] : s.labels) {
      if (k == "le") {
        le = v;
      } else {
        labels.emplace_back(k, v);
      }
    }
    const std::optional<double> bound = le ? base::ParsePrometheusValue(*le) : std::nullopt;
    if (!bound || std::isnan(*bound)) {
      return base::InvalidArgumentError(
          bucket_name + ": a bucket needs an `le` label that is a number or +Inf", at(s.line));
    }
    if (!std::isfinite(s.value) || s.value < 0) {
      return base::InvalidArgumentError(
          bucket_name + ": a bucket count must be a finite number of 0 or more", at(s.line));
    }
    Seen& seen = series[labels];
    if (seen.first_line == 0) seen.first_line = s.line;
    const auto [it, fresh] = seen.by_bound.emplace(*bound, std::make_pair(s.value, s.line));
    if (!fresh) {
      return base::InvalidArgumentError(bucket_name + ": the bucket le=\"" + std::string(*le) +
                                            "\" appears twice in one series (first on line " +
                                            std::to_string(it->second.second) + ")",
                                        at(s.line));
    }
  }
  for (const auto& [labels, seen] : series) {
    if (!std::isinf(seen.by_bound.rbegin()->first) || seen.by_bound.rbegin()->first < 0) {
      return base::InvalidArgumentError(
          bucket_name + ": the series has no le=\"+Inf\" bucket (its total count)",
          at(seen.first_line));
    }
    const std::pair<double, int>* previous = nullptr;
    double previous_bound = 0;
    for (const auto& [bound, count_line] : seen.by_bound) {
      if (previous != nullptr && count_line.first < previous->first) {
        return base::InvalidArgumentError(bucket_name + ": cumulative counts fall from " +
                                              base::FormatSampleValue(previous->first) +
                                              " (le=" + base::FormatSampleValue(previous_bound) +
                                              ", line " + std::to_string(previous->second) +
                                              ") to " + base::FormatSampleValue(count_line.first) +
                                              " (le=" + base::FormatSampleValue(bound) +
                                              "); buckets never decrease as le rises",
                                          at(count_line.second));
      }
      previous = &count_line;
      previous_bound = bound;
    }
  }
  return base::OkStatus();
}

HistogramSeries SumByLe(const std::vector<HistogramSeries>& series) {
  std::map<double, double> by_bound;
  HistogramSeries out;
  for (const HistogramSeries& h : series) {
    for (const Bucket& b : h.buckets) by_bound[b.upper_bound] += b.count;
    out.count += h.count;
    out.sum += h.sum;
  }
  for (const auto& [bound, count] : by_bound) out.buckets.push_back({bound, count});
  return out;
}

HistogramSeries Increase(const HistogramSeries& now, const HistogramSeries* before) {
  if (before == nullptr || now.count < before->count) return now;  // new, or reset
  HistogramSeries out = now;
  std::map<double, double> earlier;
  for (const Bucket& b : before->buckets) earlier[b.upper_bound] = b.count;
  for (Bucket& b : out.buckets) {
    const auto it = earlier.find(b.upper_bound);
    if (it == earlier.end()) continue;
    if (b.count < it->second) return now;  // a reset inside the window
    b.count -= it->second;
  }
  out.count = now.count - before->count;
  out.sum = now.sum - before->sum;
  return out;
}

}  // namespace seedance::k8s
