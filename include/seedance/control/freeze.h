// Layer freezing (feature CTRL-6's decision): stop training the layers that have stopped
// learning, front first, and train them again when the data drifts.
//
// Each step the caller reports, per layer in forward order, the gradient norm and the weight norm
// (frozen layers have no gradient; their reading is ignored) and the step's training loss.
//   relative gradient   r = ||g|| / ||w||  (the notes' absolute 0.0015 depends on the layer's
//                       scale; relative to the weights it does not)
//   candidate           r < threshold on `patience` (3) consecutive steps
//   freeze              a candidate, when every layer before it is frozen (prefix_only: a frozen
//                       prefix is what saves backward time — the backward pass stops at the
//                       first trainable layer), never the last `keep_trainable` layers
//   drift               the loss above mean + drift_sigma x std of the last drift_window losses
//                       while something is frozen: every layer is unfrozen and its count reset
//                       (a NaN loss means "not known": the step's readings count, drift is not
//                       watched on it)
// One layer at most is frozen per step, so a prefix grows gradually.
//
// Thread safety: not synchronised; one per training loop.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace seedance::control {

struct LayerReading {
  double grad_norm = 0;
  double weight_norm = 0;
};

struct FreezeSettings {
  double threshold = 1e-3;  // on ||g|| / ||w||
  int patience = 3;
  bool prefix_only = true;
  int keep_trainable = 1;
  double drift_sigma = 4;
  int drift_window = 20;
};

struct FreezeDecision {
  std::vector<int> frozen_now;    // layers frozen this step
  std::vector<int> unfrozen_now;  // layers unfrozen this step (drift)
  std::string reason;             // "froze layer 3: r < 0.001 for 3 steps", "drift: ...", ""
};

class FreezeController {
 public:
  FreezeController(int layers, FreezeSettings settings);
  FreezeDecision Step(const std::vector<LayerReading>& readings, double loss);
  const std::vector<bool>& frozen() const { return frozen_; }
  int frozen_count() const;

 private:
  FreezeSettings settings_;
  std::vector<bool> frozen_;
  std::vector<int> below_;  // consecutive steps under the threshold
  std::deque<double> losses_;
};

}  // namespace seedance::control
