// How often a training job should checkpoint (feature CLI-1, the checkpoint interval): from the
// job's mean time between failures and the time one checkpoint takes to write.
//
//   job MTBF            M = per-GPU MTBF / GPUs          (failures independent, any one stops it)
//   write time          δ = checkpoint bytes / write bandwidth
//   Young (1974)        τ = sqrt(2 δ M)
//   Daly (2006)         τ = sqrt(2 δ M) [1 + sqrt(δ/2M)/3 + (δ/2M)/9] − δ   for δ < 2M, else M
//   Daly's wall time    T_w / T_s = M e^(R/M) (e^((τ+δ)/M) − 1) / τ   (R: restart time)
//
// The interval is rounded to whole optimizer steps; the expected overhead is Daly's wall-time
// factor minus one at that interval. A checkpoint holds the weights, the fp32 master weights and
// the optimizer states (not the gradients).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "seedance/base/report.h"

namespace seedance::plan {

// The job spec's optional `reliability:` section.
struct ReliabilitySpec {
  bool given = false;
  double gpu_mtbf_hours = 0;  // mean time between failures of one GPU (its node share)
  double checkpoint_write_gbytes_per_s = 0;  // aggregate bandwidth to the checkpoint store
  double restart_s = 0;                      // time to restart and reload after a failure
};

// Young's interval is control::YoungOptimumSeconds (control/checkpoint_interval.h).
double DalyInterval(double write_s, double mtbf_s);
// Expected wall time per unit of useful work when checkpointing every `interval_s`.
double DalyWallTimeFactor(double interval_s, double write_s, double restart_s, double mtbf_s);

struct CheckpointPlan {
  int64_t checkpoint_bytes = 0;
  double write_s = 0;
  double job_mtbf_s = 0;
  double young_interval_s = 0;
  double daly_interval_s = 0;
  int64_t interval_steps = 0;  // Daly's interval in whole steps, at least 1
  double interval_s = 0;       // interval_steps x step time
  double expected_overhead_fraction = 0;
};

// `spec.given` must be true, the bandwidth and MTBF positive.
CheckpointPlan PlanCheckpoints(const ReliabilitySpec& spec, int64_t checkpoint_bytes, int64_t gpus,
                               double step_s);

base::Report CheckpointPlanToReport(const CheckpointPlan& plan);

}  // namespace seedance::plan
