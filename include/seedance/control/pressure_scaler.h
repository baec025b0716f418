// Seedance's three-factor autoscaler (feature CTRL-4, the design notes' rule): one pressure score
// from the replicas' GPU utilization, their memory in use and the queue waiting for them,
//
//   score = 0.4 x min(1, utilization / 0.95) + 0.35 x (1 - free memory fraction)
//         + 0.25 x min(1, queue depth / queue capacity)
//
// (utilization saturates at 95%: past it a GPU is full), one replica more as soon as the score
// exceeds 0.8, one fewer when it is below 0.3 and the last scale action is at least a cool-down
// (300 s) old. Every weight and threshold is a setting.
//
// Thread safety: a PressureScaler is not synchronised; one per autoscaled target.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace seedance::control {

struct PressureReading {
  double gpu_utilization = 0;       // 0..1, mean over the replicas
  double memory_free_fraction = 1;  // 0..1, mean over the replicas
  double queue_depth = 0;           // requests or jobs waiting
};

struct PressureSettings {
  double utilization_weight = 0.4;
  double memory_weight = 0.35;
  double queue_weight = 0.25;
  double utilization_saturation = 0.95;
  double queue_capacity = 8;  // the queue depth that counts as full pressure
  double scale_up_above = 0.8;
  double scale_down_below = 0.3;
  double cooldown_s = 300;
  int32_t min_replicas = 1;
  int32_t max_replicas = 10;
};

// The score of one reading, in [0, 1].
double PressureScore(const PressureReading& r, const PressureSettings& s);

struct PressureDecision {
  int32_t desired = 0;
  double score = 0;
  std::string reason;  // "scale up", "scale down", "cooling down", "within band", "at bound"
};

class PressureScaler {
 public:
  explicit PressureScaler(PressureSettings settings) : settings_(settings) {}
  // One decision at `now_s` (non-decreasing) for `current` replicas.
  PressureDecision Decide(double now_s, int32_t current, const PressureReading& reading);

 private:
  PressureSettings settings_;
  std::optional<double> last_scale_s_;
};

}  // namespace seedance::control
