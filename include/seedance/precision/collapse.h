// Gradient-collapse detection (feature PREC-5): a layer's
// gradient has collapsed when, over its last `window` (5) norms, the last
// `consecutive` (3) step-to-step ratios ||g_t|| / ||g_t-1|| are all below
// `ratio_threshold` (0.05) and the variance of its gradient values at the
// latest step is below `variance_threshold` (1e-8).
//
// A ratio with ||g_t-1|| = 0 counts as 0 when ||g_t|| is 0 too (the gradient
// stayed dead) and as infinite otherwise; a naive ratio would skip such
// ratios, which would let a gradient that falls to exactly zero go unseen.
//
// The rollback itself (restore the last good state, reset optimizer moments,
// raise the layer's precision) acts on framework objects and lives in Python:
// seedance.torch.CollapseGuard. This class is the decision.
//
// Thread safety: one detector per training loop.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::precision {

struct CollapseConfig {
  int window = 5;
  int consecutive = 3;
  double ratio_threshold = 0.05;
  double variance_threshold = 1e-8;

  base::Status Validate() const;
};

class CollapseDetector {
 public:
  static base::StatusOr<CollapseDetector> Create(const CollapseConfig& config);

  // Records one step of one layer; true when that layer has now collapsed.
  bool Observe(const std::string& layer, double grad_norm, double grad_variance);
  // Forgets a layer's history (after a rollback), or every layer's.
  void Reset(const std::string& layer);
  void ResetAll();

  const CollapseConfig& config() const { return config_; }

 private:
  explicit CollapseDetector(const CollapseConfig& config) : config_(config) {}
  CollapseConfig config_;
  std::unordered_map<std::string, std::deque<double>> norms_;
};

}  // namespace seedance::precision
