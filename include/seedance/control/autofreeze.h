// The AutoFreeze rule (Liu, Agarwal, Venkataraman, "AutoFreeze: Automatically Freezing Model
// Blocks to Accelerate Fine-tuning", 2021), as the paper describes it, for comparison with
// freeze.h on the same run (feature CTRL-6's baseline). Written from the paper's description,
// not its code:
//
//   every `interval` steps, per trainable layer, the gradient norm accumulated over the interval
//   G_l; its change since the last interval c_l = |G_l - G_l'| / G_l'; the layers whose c_l is
//   under the `percentile` (the paper's choice: the median; linear interpolation between ranks)
//   of the trainable layers' changes
//   are candidates, and the front-most run of candidates after the frozen prefix is frozen
//   (freezing is front to back only, and never undone).
//
// Thread safety: not synchronised; one per training loop.
#pragma once

#include <vector>

namespace seedance::control {

struct AutoFreezeSettings {
  int interval = 50;        // steps between evaluations
  double percentile = 0.5;  // of the trainable layers' gradient-norm changes
  int keep_trainable = 1;
};

class AutoFreeze {
 public:
  AutoFreeze(int layers, AutoFreezeSettings settings);
  // One step's gradient norms, per layer in forward order (frozen layers' values ignored);
  // returns the layers frozen by this step (at interval ends only).
  std::vector<int> Step(const std::vector<double>& grad_norms);
  const std::vector<bool>& frozen() const { return frozen_; }

 private:
  AutoFreezeSettings settings_;
  std::vector<bool> frozen_;
  std::vector<double> accumulated_, previous_;
  int steps_ = 0;
  bool have_previous_ = false;
};

}  // namespace seedance::control
