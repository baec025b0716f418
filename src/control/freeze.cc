#include "seedance/control/freeze.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace seedance::control {

FreezeController::FreezeController(int layers, FreezeSettings settings)
    : settings_(settings),
      frozen_(static_cast<size_t>(std::max(layers, 0)), false),
      below_(static_cast<size_t>(std::max(layers, 0)), 0) {}

int FreezeController::frozen_count() const {
  return static_cast<int>(std::count(frozen_.begin(), frozen_.end(), true));
}

FreezeDecision FreezeController::Step(const std::vector<LayerReading>& readings, double loss) {
  FreezeDecision d;
  const auto n = static_cast<int>(frozen_.size());
  // Drift: a loss far above the recent ones while something is frozen.
  const bool have_loss = std::isfinite(loss);  // NaN: no loss known, drift not watched
  if (have_loss && static_cast<int>(losses_.size()) >= settings_.drift_window &&
      frozen_count() > 0) {
    double mean = 0;
    for (double l : losses_) mean += l;
    mean /= static_cast<double>(losses_.size());
    double var = 0;
    for (double l : losses_) var += (l - mean) * (l - mean);
    const double sd = std::sqrt(var / static_cast<double>(losses_.size()));
    if (loss > mean + settings_.drift_sigma * sd) {
      for (int i = 0; i < n; ++i) {
        if (frozen_[static_cast<size_t>(i)]) d.unfrozen_now.push_back(i);
        frozen_[static_cast<size_t>(i)] = false;
        below_[static_cast<size_t>(i)] = 0;
      }
      char buf[160];
      std::snprintf(buf, sizeof buf, "drift: loss %.4g above %.4g + %.3g x %.3g", loss, mean,
                    settings_.drift_sigma, sd);
      d.reason = buf;
      losses_.clear();  // the new data's losses form the new baseline
      losses_.push_back(loss);
      return d;
    }
  }
  if (have_loss) losses_.push_back(loss);
  while (static_cast<int>(losses_.size()) > settings_.drift_window) losses_.pop_front();

  // Counts of steps under the threshold, for the layers still training.
  for (int i = 0; i < n && i < static_cast<int>(readings.size()); ++i) {
    if (frozen_[static_cast<size_t>(i)]) continue;
    const LayerReading& r = readings[static_cast<size_t>(i)];
    const double relative = r.weight_norm > 0 ? r.grad_norm / r.weight_norm : r.grad_norm;
    below_[static_cast<size_t>(i)] =
        relative < settings_.threshold ? below_[static_cast<size_t>(i)] + 1 : 0;
  }
  // At most one layer a step: the first candidate the rules allow.
  const int limit = n - settings_.keep_trainable;
  for (int i = 0; i < limit; ++i) {
    if (frozen_[static_cast<size_t>(i)]) continue;
    if (below_[static_cast<size_t>(i)] >= settings_.patience) {
      frozen_[static_cast<size_t>(i)] = true;
      d.frozen_now.push_back(i);
      char buf[120];
      std::snprintf(buf, sizeof buf, "froze layer %d: ||g||/||w|| < %.3g for %d steps", i,
                    settings_.threshold, below_[static_cast<size_t>(i)]);
      d.reason = buf;
      break;
    }
    if (settings_.prefix_only) break;  // the first trainable layer blocks the rest
  }
  return d;
}

}  // namespace seedance::control
