#include "seedance/control/pressure_scaler.h"

#include <algorithm>

namespace seedance::control {

double PressureScore(const PressureReading& r, const PressureSettings& s) {
  const double utilization = std::clamp(r.gpu_utilization / s.utilization_saturation, 0.0, 1.0);
  const double memory = std::clamp(1 - r.memory_free_fraction, 0.0, 1.0);
  const double queue = std::clamp(r.queue_depth / s.queue_capacity, 0.0, 1.0);
  return s.utilization_weight * utilization + s.memory_weight * memory + s.queue_weight * queue;
}

PressureDecision PressureScaler::Decide(double now_s, int32_t current,
                                        const PressureReading& reading) {
  PressureDecision d;
  d.score = PressureScore(reading, settings_);
  d.desired = current;
  d.reason = "within band";
  if (d.score > settings_.scale_up_above) {
    if (current >= settings_.max_replicas) {
      d.reason = "at bound";
    } else {
      d.desired = current + 1;
      d.reason = "scale up";
    }
  } else if (d.score < settings_.scale_down_below) {
    if (current <= settings_.min_replicas) {
      d.reason = "at bound";
    } else if (last_scale_s_ && now_s - *last_scale_s_ < settings_.cooldown_s) {
      d.reason = "cooling down";
    } else {
      d.desired = current - 1;
      d.reason = "scale down";
    }
  }
  d.desired = std::clamp(d.desired, settings_.min_replicas, settings_.max_replicas);
  if (d.desired != current) last_scale_s_ = now_s;
  return d;
}

}  // namespace seedance::control
