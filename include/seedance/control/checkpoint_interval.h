// How many steps between checkpoints (feature CTRL-3's decision): the interval doubles while the
// storage is the bottleneck and steps back when it is not, between a floor and twice Young's
// optimum for the configured failure rate.
//
// After each save the caller reports the I/O stall share during the save (PSI's `some` share,
// io_pressure.h, or — without PSI — the share of the save's time the training loop was blocked
// on it), the save's seconds and the mean step's seconds:
//   share > 0.65 (io_pressure_threshold)     interval x 2
//   share < 0.65 / 2                          interval / 2 (hysteresis: no flapping at 0.65)
//   then  max(floor = 50 steps, ...) and min(..., 2 x Young) where
//   Young = sqrt(2 x save_s x mtbf_s) / step_s steps (Young 1974; the job's MTBF, not a GPU's:
//   mtbf_s = 0 leaves the interval uncapped). When twice Young is below the floor, the cap wins:
//   work lost to a failure costs more than the I/O.
//
// Thread safety: not synchronised; one per training loop.
#pragma once

#include <cstdint>
#include <string>

namespace seedance::control {

struct CheckpointIntervalSettings {
  int64_t floor_steps = 50;
  int64_t initial_steps = 50;
  double io_pressure_threshold = 0.65;
  double mtbf_s = 0;  // the job's mean time between failures; 0: no cap
};

struct IntervalDecision {
  int64_t steps = 0;        // the interval from now on
  int64_t young_steps = 0;  // Young's optimum in steps (0 without an MTBF)
  std::string reason;       // "storage busy: doubled", "storage idle: halved", "kept", ...
};

// Young's optimum, seconds between checkpoints: sqrt(2 x save_s x mtbf_s).
double YoungOptimumSeconds(double save_s, double mtbf_s);

class CheckpointInterval {
 public:
  explicit CheckpointInterval(CheckpointIntervalSettings settings);
  int64_t steps() const { return steps_; }
  IntervalDecision AfterSave(double io_stall_share, double save_s, double step_s);

 private:
  CheckpointIntervalSettings settings_;
  int64_t steps_;
};

}  // namespace seedance::control
