#include "seedance/control/fleet_replay.h"

#include <gtest/gtest.h>

namespace seedance::control {
namespace {

FleetScaler Fixed(int32_t nodes) {
  return [nodes](double, int32_t, const FleetReading&) { return nodes; };
}

// Two 8-GPU jobs on one 8-GPU node: the second waits for the first. Hand-counted: ticks at 0, 15,
// ..., 105 (the loop ends at 120, when both are done): 8 ticks x 8 GPUs x 15 s.
TEST(FleetReplayTest, OneNodeRunsJobsOneAfterAnother) {
  FleetSettings s;
  s.max_nodes = 4;
  const std::vector<FleetJob> jobs = {{0, 60, 8}, {0, 60, 8}};
  const FleetResult r = ReplayFleet(jobs, s, Fixed(1));
  EXPECT_EQ(r.jobs, 2);
  EXPECT_DOUBLE_EQ(r.queue_p50_s, 30);         // the mean of the two
  EXPECT_DOUBLE_EQ(r.queue_p95_s, 0.95 * 60);  // waits 0 and 60, interpolated (base::Quantile)
  EXPECT_DOUBLE_EQ(r.queue_max_s, 60);
  EXPECT_DOUBLE_EQ(r.gpu_hours, 8 * 8 * 15 / 3600.0);
  EXPECT_EQ(r.scale_actions, 0);
  EXPECT_DOUBLE_EQ(r.makespan_s, 120);
}

// A scale-up pays the boot: the second job waits for the new node (ready at 120 s), and the
// booting node's 8 ticks are paid.
TEST(FleetReplayTest, NewNodesBootBeforeTheyRun) {
  FleetSettings s;
  s.max_nodes = 4;
  s.restart_s = 120;
  const std::vector<FleetJob> jobs = {{0, 1000, 8}, {0, 1000, 8}};
  auto two_when_queued = [](double, int32_t current, const FleetReading& r) {
    return r.queued_jobs > 0 ? 2 : current;  // `current` counts the booting node
  };
  const FleetResult r = ReplayFleet(jobs, s, two_when_queued);
  EXPECT_DOUBLE_EQ(r.queue_max_s, 120);
  EXPECT_DOUBLE_EQ(r.booting_gpu_hours, 8 * 8 * 15 / 3600.0);
  EXPECT_EQ(r.scale_actions, 1);
  EXPECT_EQ(r.peak_nodes, 2);
  // 2 nodes from the first tick (one booting) to the last before the second job ends at 1120:
  // ticks 0, 15, ..., 1110.
  EXPECT_DOUBLE_EQ(r.gpu_hours, 75 * 2 * 8 * 15 / 3600.0);
}

// Scale-down removes idle nodes only; alternating directions count as reversals.
TEST(FleetReplayTest, ScaleDownTakesIdleNodesAndReversalsAreCounted) {
  FleetSettings s;
  s.max_nodes = 4;
  s.initial_nodes = 2;
  s.restart_s = 0;
  const std::vector<FleetJob> busy = {{0, 300, 16}};
  const FleetResult held = ReplayFleet(busy, s, Fixed(1));
  EXPECT_EQ(held.scale_actions, 0);  // both nodes busy: nothing to remove
  EXPECT_EQ(held.peak_nodes, 2);
  int calls = 0;
  auto flip = [&calls](double, int32_t, const FleetReading&) { return ++calls % 2 == 1 ? 3 : 2; };
  const std::vector<FleetJob> small = {{0, 150, 1}};
  const FleetResult r = ReplayFleet(small, s, flip);
  EXPECT_EQ(r.scale_actions, 10);  // ticks 0..135: up, down, up, ...
  EXPECT_EQ(r.reversals, 9);
}

TEST(FleetReplayTest, JobsLargerThanTheFleetAreSetAside) {
  FleetSettings s;
  s.max_nodes = 2;
  const FleetResult r = ReplayFleet({{0, 10, 24}, {0, 10, 8}}, s, Fixed(2));
  EXPECT_EQ(r.jobs, 1);
  EXPECT_EQ(r.jobs_too_large, 1);
}

}  // namespace
}  // namespace seedance::control
