#include "seedance/kv/adaptive.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace seedance::kv {

double LaplaceScale(std::span<const float> x) {
  if (x.empty()) return 0;
  std::vector<float> v(x.begin(), x.end());
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<int64_t>(mid), v.end());
  double median = v[mid];
  if (v.size() % 2 == 0) {
    const float below = *std::max_element(v.begin(), v.begin() + static_cast<int64_t>(mid));
    median = (median + below) / 2;
  }
  double sum = 0;
  for (float f : x) sum += std::fabs(f - median);
  return sum / static_cast<double>(x.size());
}

double NormalisedEntropy(std::span<const double> w) {
  if (w.size() <= 1) return 1.0;
  double total = 0;
  for (double v : w) total += v;
  if (total <= 0) return 1.0;
  double h = 0;
  for (double v : w) {
    if (v > 0) {
      const double p = v / total;
      h -= p * std::log(p);
    }
  }
  return h / std::log(static_cast<double>(w.size()));
}

BitDecision DecideBits(const AdaptiveRule& rule, int64_t seq_pos, int64_t kv_len, double entropy) {
  BitDecision d;
  d.seq_pos = seq_pos;
  d.kv_len = kv_len;
  d.entropy = entropy;
  if (kv_len > rule.long_context && entropy > rule.entropy_threshold) {
    d.target_bw = rule.long_bits;
    d.reason = "high_entropy_long_context";
  } else {
    d.target_bw = rule.default_bits;
    d.reason = kv_len > rule.long_context ? "low_entropy" : "short_context";
  }
  return d;
}

base::Report DecisionToReport(const BitDecision& d) {
  return {{"seq_pos", d.seq_pos}, {"kv_len", d.kv_len},       {"layer", d.layer},
          {"entropy", d.entropy}, {"laplace_b", d.laplace_b}, {"target_bw", d.target_bw},
          {"reason", d.reason}};
}

}  // namespace seedance::kv
