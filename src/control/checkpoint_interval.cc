#include "seedance/control/checkpoint_interval.h"

#include <algorithm>
#include <cmath>

namespace seedance::control {

double YoungOptimumSeconds(double save_s, double mtbf_s) {
  return std::sqrt(2 * std::max(save_s, 0.0) * std::max(mtbf_s, 0.0));
}

CheckpointInterval::CheckpointInterval(CheckpointIntervalSettings settings)
    : settings_(settings),
      steps_(std::max(settings.initial_steps, std::max<int64_t>(settings.floor_steps, 1))) {}

IntervalDecision CheckpointInterval::AfterSave(double io_stall_share, double save_s,
                                               double step_s) {
  IntervalDecision d;
  const double threshold = settings_.io_pressure_threshold;
  int64_t next = steps_;
  d.reason = "kept";
  if (io_stall_share > threshold) {
    next = steps_ * 2;
    d.reason = "storage busy: doubled";
  } else if (io_stall_share < threshold / 2 && steps_ > settings_.floor_steps) {
    next = steps_ / 2;
    d.reason = "storage idle: halved";
  }
  next = std::max(next, std::max<int64_t>(settings_.floor_steps, 1));
  if (settings_.mtbf_s > 0 && step_s > 0) {
    const double young = YoungOptimumSeconds(save_s, settings_.mtbf_s) / step_s;
    d.young_steps = std::max<int64_t>(1, std::llround(young));
    const int64_t cap = 2 * d.young_steps;
    if (next > cap) {
      next = cap;
      d.reason += next < settings_.floor_steps ? "; capped at 2 x Young (below the floor)"
                                               : "; capped at 2 x Young";
    }
  }
  steps_ = next;
  d.steps = next;
  return d;
}

}  // namespace seedance::control
