// A GPU fleet replayed through an autoscaler (feature CTRL-4's evaluation): jobs of a trace
// arrive, wait in a queue and run on a pool of nodes whose size a scaler sets every tick.
//
// Every tick (15 s): finished jobs free their GPUs, booting nodes that are ready join, arrivals
// queue, and the queue is scanned in arrival order starting every job that fits in the free GPUs
// (a greedy backfill; GPUs are one pool, placement is not modelled). The scaler then sees the
// reading — allocated share of the ready GPUs, queued jobs — and sets the node count: new nodes
// boot for `restart_s` (paid, not usable: the restart cost of a scale action) and scale-down
// removes idle nodes only (booting ones first). Jobs start on ticks, so a queueing delay is a
// multiple of the tick.
//
// Reported: GPU-hours paid (ready and booting nodes), the queueing delay's p50 / p95 / max, scale
// actions and reversals (an action in the other direction from the previous one), mean and peak
// nodes.
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "seedance/base/report.h"

namespace seedance::control {

struct FleetJob {
  double submit_s = 0;
  double duration_s = 0;
  int32_t gpus = 1;
};

struct FleetReading {
  double allocated_share = 0;  // busy GPUs / ready GPUs (1 with none ready)
  int64_t queued_jobs = 0;
  int64_t queued_gpus = 0;
};

struct FleetSettings {
  int32_t gpus_per_node = 8;
  int32_t min_nodes = 1;
  int32_t max_nodes = 64;
  int32_t initial_nodes = 1;
  double tick_s = 15;
  double restart_s = 120;  // a new node's boot and warm-up
};

// The scaler: the node count wanted at `now_s` with `current` nodes (ready and booting).
using FleetScaler =
    std::function<int32_t(double now_s, int32_t current, const FleetReading& reading)>;

struct FleetResult {
  int64_t jobs = 0;
  int64_t jobs_too_large = 0;  // more GPUs than max_nodes hold: never run, not counted
  double gpu_hours = 0;
  double booting_gpu_hours = 0;
  double queue_p50_s = 0, queue_p95_s = 0, queue_max_s = 0;
  int64_t scale_actions = 0;
  int64_t reversals = 0;
  double mean_nodes = 0;
  int32_t peak_nodes = 0;
  double makespan_s = 0;  // first submit to last finish
};

FleetResult ReplayFleet(const std::vector<FleetJob>& jobs, const FleetSettings& settings,
                        const FleetScaler& scaler);

base::Report FleetResultToReport(const FleetResult& r);

}  // namespace seedance::control
