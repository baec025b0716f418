// Statistics of KV blocks and the adaptive bit-width rule (feature KV-2).
//
// Per block (a key group of G tokens):
//   laplace_b  the scale of a Laplace fit, by maximum likelihood (which
//              minimises KL(empirical || Laplace)): the mean absolute
//              deviation from the median;
//   entropy    the normalised Shannon entropy, in [0, 1], of the key vectors'
//              L2 norms over the block taken as a distribution (1: all norms
//              equal).
// Rule (every threshold a setting): kv_len > long_context (65,536) and
// entropy > entropy_threshold (0.85) -> long_bits (4), reason
// "high_entropy_long_context"; otherwise default_bits (6), reason
// "short_context" or "low_entropy".
//
// Thread safety: pure functions and values.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "seedance/base/report.h"

namespace seedance::kv {

struct AdaptiveRule {
  int64_t long_context = 65536;
  double entropy_threshold = 0.85;
  int long_bits = 4;
  int default_bits = 6;
};

double LaplaceScale(std::span<const float> x);
// Normalised entropy of non-negative weights (the L2 norms); 1 for a single weight or all equal.
double NormalisedEntropy(std::span<const double> weights);

struct BitDecision {
  int64_t seq_pos = 0;
  int64_t kv_len = 0;
  int layer = 0;
  double entropy = 0;
  double laplace_b = 0;
  int target_bw = 0;
  std::string reason;
};

BitDecision DecideBits(const AdaptiveRule& rule, int64_t seq_pos, int64_t kv_len, double entropy);

// One JSON-lines record: seq_pos, kv_len, layer, entropy, laplace_b, target_bw, reason.
base::Report DecisionToReport(const BitDecision& d);

}  // namespace seedance::kv
