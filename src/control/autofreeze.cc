#include "seedance/control/autofreeze.h"

#include <algorithm>
#include <cmath>

#include "seedance/base/quantile.h"

namespace seedance::control {

AutoFreeze::AutoFreeze(int layers, AutoFreezeSettings settings)
    : settings_(settings),
      frozen_(static_cast<size_t>(std::max(layers, 0)), false),
      accumulated_(frozen_.size(), 0.0),
      previous_(frozen_.size(), 0.0) {}

std::vector<int> AutoFreeze::Step(const std::vector<double>& grad_norms) {
  const size_t n = frozen_.size();
  for (size_t i = 0; i < n && i < grad_norms.size(); ++i) {
    if (!frozen_[i]) accumulated_[i] += grad_norms[i];
  }
  std::vector<int> out;
  if (++steps_ % settings_.interval != 0) return out;
  if (have_previous_) {
    std::vector<double> change(n, 0.0), active;
    for (size_t i = 0; i < n; ++i) {
      if (frozen_[i]) continue;
      change[i] = previous_[i] > 0 ? std::abs(accumulated_[i] - previous_[i]) / previous_[i] : 1;
      active.push_back(change[i]);
    }
    if (!active.empty()) {
      const double cut = base::Quantile(active, settings_.percentile);
      const size_t limit =
          n > static_cast<size_t>(settings_.keep_trainable) ? n - settings_.keep_trainable : 0;
      size_t i = 0;
      while (i < limit && frozen_[i]) ++i;
      for (; i < limit && change[i] < cut; ++i) {
        frozen_[i] = true;
        out.push_back(static_cast<int>(i));
      }
    }
  }
  previous_ = accumulated_;
  have_previous_ = true;
  std::fill(accumulated_.begin(), accumulated_.end(), 0.0);
  return out;
}

}  // namespace seedance::control
