// The micro-batch size from memory readings (feature CTRL-1's decision): grow while memory is
// idle and throughput still rises, step back when memory is tight, shrink on out-of-memory.
//
// The caller reports, once per step, the memory in use as a share of the budget (GPU: reserved /
// total; CPU: the process's resident set / a configured budget) and the step's samples per second:
//   share < low (0.65) on `readings` (3) consecutive steps     grow: size + step (16)
//     unless  size + step > max_size, or size + step >= the ceiling (a size that failed before)
//     unless  throughput stopped rising: the mean samples/s of the last `readings` steps at this
//             size is under (1 + min_gain) x the mean at the size before it. Growth stops for
//             good, and when this size is slower than the one before, the scaler returns to it.
//   share > high (0.85)                                         back to the previous size (the
//             size before the last growth; size - step when there was none), and that size
//             becomes the ceiling
//   OutOfMemory()                                               the same, at once, for a step
//             that failed, except that without a previous size the size halves (as the batch
//             finders of Lightning and Accelerate do): the caller retries at the returned size
// Sizes stay in [min_size, max_size]. Readings between low and high reset the count.
//
// Thread safety: not synchronised; one per training loop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::control {

struct BatchScalerSettings {
  int64_t initial_size = 16;
  int64_t step = 16;
  int64_t min_size = 1;
  int64_t max_size = 1 << 20;
  double low = 0.65;       // memory share under which to grow
  double high = 0.85;      // memory share over which to step back
  int readings = 3;        // consecutive low readings before growing
  double min_gain = 0.02;  // the throughput rise a growth must have bought; < 0: not checked
};

enum class BatchAction { kKeep, kGrow, kShrink, kStopGrowth };

struct BatchDecision {
  int64_t size = 0;  // the micro-batch size from now on
  BatchAction action = BatchAction::kKeep;
  std::string reason;  // "memory 0.41 < 0.65 for 3 steps: 16 -> 32", "" when kept
};

const char* BatchActionName(BatchAction action);

// OK, or which field is out of range: 1 <= min_size <= initial_size <= max_size, step >= 1,
// 0 <= low < high <= 1, readings >= 1, min_gain finite.
base::Status ValidateBatchScalerSettings(
    const BatchScalerSettings& settings);  // "keep", "grow", "shrink", "stop_growth"

class BatchScaler {
 public:
  explicit BatchScaler(BatchScalerSettings settings);
  int64_t size() const { return size_; }
  int64_t ceiling() const { return ceiling_; }  // 0: none
  bool growth_stopped() const { return growth_stopped_; }

  // One step at size() that completed: its memory share and samples per second.
  BatchDecision Observe(double memory_share, double samples_per_s);
  // A step at size() ran out of memory: the size to retry it with. Fails (kKeep, same size) only
  // when size() is already min_size: the caller must then give up.
  BatchDecision OutOfMemory();

 private:
  BatchDecision StepBack(const std::string& why, bool halve);
  double MeanThroughput() const;

  BatchScalerSettings settings_;
  int64_t size_;
  int64_t ceiling_ = 0;
  bool growth_stopped_ = false;
  int low_count_ = 0;
  std::vector<int64_t> previous_;      // sizes before each growth, newest last
  std::vector<double> throughput_;     // samples/s at this size, newest last
  std::vector<double> previous_mean_;  // mean samples/s at each previous size
};

}  // namespace seedance::control
