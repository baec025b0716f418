// The event mode on hand-made traces whose timelines can be worked out on
// paper, and on the Philly trace's first jobs with invariants checked after
// every event.
#include "seedance/sched/event_sim.h"

#include <gtest/gtest.h>

#include <random>

#include "seedance/base/env.h"
#include "seedance/base/testing/data.h"
#include "seedance/sched/readers.h"

namespace seedance::sched {
namespace {

Node GpuNode(std::string name, int gpus) {
  Node n;
  n.name = std::move(name);
  n.cpu_milli = 64000;
  n.memory_mib = 1 << 20;
  n.gpu_count = gpus;
  n.gpu_model = "G";
  return n;
}

EventJob MakeJob(std::string id, int64_t submit, double duration, int gpus, int priority = 0) {
  EventJob j;
  j.id = std::move(id);
  j.group = priority ? "high" : "low";
  j.submit_s = submit;
  j.duration_s = duration;
  j.priority = priority;
  Pod p;
  p.name = j.id;
  p.num_gpu = gpus;
  p.gpu_milli = 1000;
  j.members = {p};
  return j;
}

TEST(EventSim, TimelineByHand) {
  // One 4-GPU node. a: t=0, 3 GPUs, 10 s. b: t=1, 2 GPUs, 5 s -> waits for a,
  // starts at 10, ends 15. c: t=2, 1 GPU, 4 s -> backfills at 2, ends 6.
  // d: t=3, 8 GPUs -> can never fit.
  std::vector<EventJob> jobs = {MakeJob("a", 0, 10, 3), MakeJob("b", 1, 5, 2),
                                MakeJob("c", 2, 4, 1), MakeJob("d", 3, 1, 8)};
  EventRunOptions o;
  o.check_invariants = true;
  auto r = RunEvents({GpuNode("n", 4)}, jobs, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->jobs, 4);
  EXPECT_EQ(r->never_fit, 1);
  EXPECT_EQ(r->completed, 3);
  EXPECT_EQ(r->still_queued, 0);
  // Queue delays: a 0, c 0, b 9. base::Quantile interpolates at rank h = (n - 1) q: p50 at h = 1
  // is 0; p99 at h = 1.98 is 0 + 0.98 x 9.
  EXPECT_DOUBLE_EQ(r->queue_delay_s.p50, 0);
  EXPECT_DOUBLE_EQ(r->queue_delay_s.p99, 0.98 * 9);
  // JCTs: c 4, a 10, b 14: p99 = 10 + 0.98 x 4.
  EXPECT_DOUBLE_EQ(r->jct_s.p50, 10);
  EXPECT_DOUBLE_EQ(r->jct_s.p99, 10 + 0.98 * 4);
  EXPECT_DOUBLE_EQ(r->makespan_s, 15);
  // GPU-seconds: 3*10 + 2*5 + 1*4 = 44 -> 44/3600 GPU-h; mean use 44 / (4 * 15).
  EXPECT_NEAR(r->gpu_hours, 44.0 / 3600, 1e-12);
  EXPECT_NEAR(r->mean_gpu_used_pct, 100.0 * 44 / 60, 1e-9);
  double area = 0;
  for (double u : r->gpu_used_pct_over_time) area += u;
  EXPECT_NEAR(area / 100, 100.0 * 44 / 60, 1e-9);
}

TEST(EventSim, PriorityFirstAndGangsAllOrNothing) {
  // Two 2-GPU nodes, both busy until t=10. At t=10 the high-priority job
  // (submitted last) starts first; the 4-GPU gang needs both nodes.
  std::vector<EventJob> jobs = {MakeJob("busy1", 0, 10, 2), MakeJob("busy2", 0, 10, 2),
                                MakeJob("low", 1, 5, 2), MakeJob("high", 2, 5, 2, 1)};
  EventJob gang = MakeJob("gang", 3, 5, 2);
  gang.members.push_back(gang.members[0]);  // two members of 2 GPUs
  jobs.push_back(gang);
  EventRunOptions o;
  o.check_invariants = true;
  auto r = RunEvents({GpuNode("n0", 2), GpuNode("n1", 2)}, jobs, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->completed, 5);
  // high: 10 - 2 = 8; low: 10 - 1 = 9 (both start at 10); gang waits for
  // both to finish at 15: 15 - 3 = 12.
  ASSERT_EQ(r->groups.size(), 2u);
  EXPECT_EQ(r->groups[0].group, "high");
  EXPECT_DOUBLE_EQ(r->groups[0].queue_delay_s.p50, 8);
  EXPECT_DOUBLE_EQ(r->groups[0].slo_attainment_pct, -1);  // no SLO given
  // SLO of 9 s for "low": busy1, busy2 and low (9) meet it, the gang (12) does not.
  o.slo_queue_delay_s = {{"low", 9.0}};
  auto with_slo = RunEvents({GpuNode("n0", 2), GpuNode("n1", 2)}, jobs, o);
  ASSERT_TRUE(with_slo.ok());
  EXPECT_DOUBLE_EQ(with_slo->groups[1].slo_attainment_pct, 75.0);
  // All delays 0, 0, 8, 9, 12: p99 at rank 3.96 = 9 + 0.96 x 3.
  EXPECT_DOUBLE_EQ(r->queue_delay_s.p99, 9 + 0.96 * 3);
  EXPECT_DOUBLE_EQ(r->makespan_s, 20);
}

// Pools A and B with one 2-GPU node each, and a 2-GPU job of a group.
std::vector<Node> TwoPools() {
  Node na = GpuNode("a0", 2), nb = GpuNode("b0", 2);
  na.pool = "A";
  nb.pool = "B";
  return {na, nb};
}

EventJob GroupJob(std::string id, std::string group, int64_t t, double d) {
  EventJob j = MakeJob(std::move(id), t, d, 2);
  j.group = std::move(group);
  return j;
}

TEST(EventSim, QuotaOwnerPreemptsABorrower) {
  // Pools A and B, one 2-GPU node each. b1 (B, 2 GPUs, 100 s) fits B's
  // quota; b2 (B, 2 GPUs, 100 s) borrows A's idle node. At t=10 a1 (A, 2 GPUs,
  // 50 s) is within A's quota and finds no GPU: b2 is preempted after 10 s
  // of work (no checkpoint yet: all lost), requeued with 100 + 60 s restore
  // left, and restarts when a1 ends at 60: done at 220.
  std::vector<EventJob> jobs = {GroupJob("b1", "B", 0, 100), GroupJob("b2", "B", 0, 100),
                                GroupJob("a1", "A", 10, 50)};
  EventRunOptions o;
  o.quotas = true;
  o.check_invariants = true;
  auto r = RunEvents(TwoPools(), jobs, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->preemptions, 1);
  EXPECT_NEAR(r->lost_gpu_hours, 2.0 * 10 / 3600, 1e-12);
  EXPECT_EQ(r->completed, 3);
  EXPECT_DOUBLE_EQ(r->makespan_s, 220);
  // JCTs 50 (a1), 100 (b1), 220 (b2); nobody waited for a first start.
  EXPECT_DOUBLE_EQ(r->jct_s.p50, 100);
  EXPECT_DOUBLE_EQ(r->jct_s.p99, 100 + 0.98 * 120);  // rank 1.98
  EXPECT_DOUBLE_EQ(r->queue_delay_s.p99, 0);
  // GPU time: b1 2x100, b2 2x10 + 2x160, a1 2x50 = 640 GPU-s.
  EXPECT_NEAR(r->gpu_hours, 640.0 / 3600, 1e-12);
  // Without quotas nobody is preempted: a1 waits for b1 or b2 to end at 100.
  o.quotas = false;
  auto plain = RunEvents(TwoPools(), jobs, o);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->preemptions, 0);
  EXPECT_DOUBLE_EQ(plain->queue_delay_s.p99, 0.98 * 90);  // delays 0, 0, 90
}

TEST(EventSim, CheckpointsKeepWork) {
  // As above, but b2 has run 25 s with a checkpoint every 10 s: 20 s kept,
  // 5 s lost, 100 - 20 + 60 = 140 s left after the restart at 60: done at 200.
  EventRunOptions o;
  o.quotas = true;
  o.checkpoint_interval_s = 10;
  auto r = RunEvents(
      TwoPools(),
      {GroupJob("b1", "B", 0, 100), GroupJob("b2", "B", 0, 100), GroupJob("a1", "A", 25, 35)}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->lost_gpu_hours, 2.0 * 5 / 3600, 1e-12);
  EXPECT_DOUBLE_EQ(r->makespan_s, 200);
}

TEST(QosTiers, FormulasAndNames) {
  // Silver scale max(0.3, 1.2 - 0.5 load): 1.2 idle, 1.0 at 0.4, 0.7 full,
  // 0.3 from load 1.8 on (GPU shared beyond capacity).
  const std::pair<double, double> scale[] = {{0.0, 1.2}, {0.4, 1.0}, {1.0, 0.7},
                                             {1.8, 0.3}, {3.0, 0.3}, {-1.0, 1.2}};
  for (const auto& [load, expected] : scale) {
    EXPECT_NEAR(SilverQuotaScale(load), expected, 1e-12) << load;
  }
  EXPECT_DOUBLE_EQ(OvercommitMargin(Tier::kGold), 1.15);
  EXPECT_DOUBLE_EQ(OvercommitMargin(Tier::kSilver), 1.35);
  EXPECT_DOUBLE_EQ(OvercommitMargin(Tier::kBronze), 2.0);
  EXPECT_EQ(TierOfQos(Qos::kLatencySensitive), Tier::kGold);
  EXPECT_EQ(TierOfQos(Qos::kGuaranteed), Tier::kGold);
  EXPECT_EQ(TierOfQos(Qos::kBurstable), Tier::kSilver);
  EXPECT_EQ(TierOfQos(Qos::kBestEffort), Tier::kBronze);
  for (Tier t : {Tier::kGold, Tier::kSilver, Tier::kBronze}) EXPECT_EQ(*ParseTier(TierName(t)), t);
  const auto bad = ParseTier("platinum", "--tier-of");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "expected gold, silver or bronze, got 'platinum'");
  EXPECT_EQ(bad.status().where(), "--tier-of");
}

EventJob TierJob(std::string id, std::string group, Tier tier, int64_t t, double d, int gpus) {
  EventJob j = MakeJob(std::move(id), t, d, gpus);
  j.group = std::move(group);
  j.tier = tier;
  return j;
}

TEST(EventSim, GoldPreemptsBronzeAndBronzeNeverPreempts) {
  // One 2-GPU node, no pools, checkpoints every 1,800 s. bronze (2 GPUs,
  // 100 s) starts at 0; gold (2 GPUs, 50 s) arrives at 10 and preempts it
  // (10 s lost; 100 + 60 s restore left): bronze restarts at 60. gold2
  // arrives at 70 and preempts it again (10 s lost; 160 + 60 left): gold2
  // runs 70-120, bronze 120-340.
  std::vector<EventJob> jobs = {TierJob("bronze", "x", Tier::kBronze, 0, 100, 2),
                                TierJob("gold", "y", Tier::kGold, 10, 50, 2),
                                TierJob("gold2", "y", Tier::kGold, 70, 50, 2)};
  EventRunOptions o;
  o.tiers = true;
  o.check_invariants = true;
  auto r = RunEvents({GpuNode("n", 2)}, jobs, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->preemptions, 2);
  EXPECT_DOUBLE_EQ(r->makespan_s, 340);
  ASSERT_EQ(r->tiers.size(), 2u);  // gold, bronze
  EXPECT_EQ(r->tiers[0].tier, Tier::kGold);
  EXPECT_EQ(r->tiers[0].preemptions, 0);
  EXPECT_DOUBLE_EQ(r->tiers[0].queue_delay_s.p99, 0);
  EXPECT_EQ(r->tiers[1].tier, Tier::kBronze);
  EXPECT_EQ(r->tiers[1].preemptions, 2);
  // With at most one preemption per job, bronze (60-220) is not preempted
  // again: gold2 waits from 70 to 220 and ends at 270.
  o.max_retries = 1;
  auto limited = RunEvents({GpuNode("n", 2)}, jobs, o);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->preemptions, 1);
  EXPECT_EQ(limited->retry_limited, 1);
  EXPECT_DOUBLE_EQ(limited->makespan_s, 270);
  // gold1 0, gold2 150 (70 -> 220): p99 at rank 0.99.
  EXPECT_DOUBLE_EQ(limited->tiers[0].queue_delay_s.p99, 0.99 * 150);
  // Bronze does not preempt: swap the tiers and nobody is preempted.
  std::vector<EventJob> swapped = {TierJob("gold", "x", Tier::kGold, 0, 100, 2),
                                   TierJob("bronze", "y", Tier::kBronze, 10, 50, 2)};
  auto calm = RunEvents({GpuNode("n", 2)}, swapped, o);
  ASSERT_TRUE(calm.ok());
  EXPECT_EQ(calm->preemptions, 0);
  EXPECT_DOUBLE_EQ(calm->makespan_s, 150);
}

TEST(EventSim, SilverQuotaShrinksWithLoad) {
  // Pools A and B, one 2-GPU node each, all Silver. b1 and b2 (B, 2 GPUs
  // each) start at 0: b1, at load 0, is within 1.2 x B's 2 GPUs (guaranteed);
  // b2, at load 0.5 (scale 0.95), would bring B to 4 GPUs > 1.9: it borrows
  // A's node. At t=10 the cluster is full (load 1, scale 0.7: A may count
  // 1.4 GPUs as guaranteed):
  //   - a 2-GPU job of A is not guaranteed: it waits for b1 at 100;
  //   - a 1-GPU job of A is: it preempts the borrower b2.
  auto jobs = [](int a1_gpus) {
    return std::vector<EventJob>{TierJob("b1", "B", Tier::kSilver, 0, 100, 2),
                                 TierJob("b2", "B", Tier::kSilver, 0, 100, 2),
                                 TierJob("a1", "A", Tier::kSilver, 10, 50, a1_gpus)};
  };
  EventRunOptions o;
  o.quotas = true;
  o.tiers = true;
  o.check_invariants = true;
  auto big = RunEvents(TwoPools(), jobs(2), o);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->preemptions, 0);
  EXPECT_DOUBLE_EQ(big->queue_delay_s.p99, 0.98 * 90);  // delays 0, 0, 90
  auto small = RunEvents(TwoPools(), jobs(1), o);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->preemptions, 1);
  EXPECT_DOUBLE_EQ(small->queue_delay_s.p99, 0);
  // Without tiers the 2-GPU job is within A's whole quota and preempts b2.
  o.tiers = false;
  auto plain = RunEvents(TwoPools(), jobs(2), o);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->preemptions, 1);
}

TEST(EventSim, LongTailJobIsConsolidatedOntoAShare) {
  // One 3-GPU node. idle (2 GPUs, 1000 s, 2% utilization) starts at 0; work
  // (2 GPUs, 100 s, 90%) arrives at 10 and waits. At 100 idle has run the
  // 100 s it takes to be called long-tail: it is checkpointed (100 s kept),
  // moved onto a 100 milli-GPU share and restored (960 s left: ends at 1060),
  // and work starts at 100 on the two freed GPUs (ends at 200).
  EventJob idle = MakeJob("idle", 0, 1000, 2), work = MakeJob("work", 10, 100, 2);
  idle.gpu_util_pct = 2;
  work.gpu_util_pct = 90;
  EventRunOptions o;
  o.consolidate = true;
  o.consolidate_after_s = 100;
  o.check_invariants = true;
  auto r = RunEvents({GpuNode("n", 3)}, {idle, work}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->consolidations, 1);
  EXPECT_EQ(r->completed, 2);
  EXPECT_DOUBLE_EQ(r->queue_delay_s.p99, 0.99 * 90);  // delays 0, 90
  EXPECT_DOUBLE_EQ(r->makespan_s, 1060);
  // GPU-seconds: idle 2 x 100 + 0.1 x 960, work 2 x 100 = 496.
  EXPECT_NEAR(r->gpu_hours, 496.0 / 3600, 1e-12);
  // Handed back: 1.9 GPU for the 960 s idle ran on its share.
  EXPECT_NEAR(r->consolidation_freed_gpu_hours, 1.9 * 960 / 3600, 1e-12);
  // Without consolidation work waits for idle to end at 1000.
  o.consolidate = false;
  auto plain = RunEvents({GpuNode("n", 3)}, {idle, work}, o);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->consolidations, 0);
  EXPECT_DOUBLE_EQ(plain->queue_delay_s.p99, 0.99 * 990);  // delays 0, 990
  EXPECT_DOUBLE_EQ(plain->makespan_s, 1100);
  // A busy job (or one of unknown utilization) is never moved.
  o.consolidate = true;
  idle.gpu_util_pct = 50;
  auto busy = RunEvents({GpuNode("n", 3)}, {idle, work}, o);
  ASSERT_TRUE(busy.ok());
  EXPECT_EQ(busy->consolidations, 0);
}

// A share of known utilization (100% unless said otherwise): only those are
// over-committed.
EventJob Share(std::string id, Tier tier, int64_t t, double d, int milli, double util = 100) {
  EventJob j = MakeJob(std::move(id), t, d, 1);
  j.members[0].gpu_milli = milli;
  j.tier = tier;
  j.gpu_util_pct = util;
  return j;
}

TEST(EventSim, OvercommittedSharesSlowEachOtherDown) {
  // One 1-GPU node. Two Bronze shares of 800 milli-GPU, 100 s each, at t=0.
  // Without over-commit the second waits: 0-100, 100-200.
  std::vector<EventJob> two = {Share("a", Tier::kBronze, 0, 100, 800),
                               Share("b", Tier::kBronze, 0, 100, 800)};
  EventRunOptions o;
  o.check_invariants = true;
  auto plain = RunEvents({GpuNode("n", 1)}, two, o);
  ASSERT_TRUE(plain.ok());
  EXPECT_DOUBLE_EQ(plain->makespan_s, 200);
  // With it each books ceil(800 / 2) = 400: both run at once; busy 1,600
  // (100% utilization) slows both to 1/1.6, done at 160 - within Bronze's
  // 2x margin.
  o.overcommit = true;
  auto r = RunEvents({GpuNode("n", 1)}, two, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->makespan_s, 160);
  EXPECT_DOUBLE_EQ(r->share_run_s, 320);
  EXPECT_DOUBLE_EQ(r->slowed_s, 320);
  EXPECT_DOUBLE_EQ(r->above_margin_s, 0);
  EXPECT_NEAR(r->mean_share_slowdown, 1.6, 1e-12);
  EXPECT_NEAR(r->gpu_hours, 2 * 0.4 * 160 / 3600, 1e-12);  // booked GPU over wall time
  // Of unknown utilization they are not over-committed: 0-100, 100-200.
  auto unknown = RunEvents(
      {GpuNode("n", 1)},
      {Share("a", Tier::kBronze, 0, 100, 800, -1), Share("b", Tier::kBronze, 0, 100, 800, -1)}, o);
  ASSERT_TRUE(unknown.ok());
  EXPECT_DOUBLE_EQ(unknown->makespan_s, 200);
  EXPECT_DOUBLE_EQ(unknown->slowed_s, 0);
  // At 50% utilization the two fit in one GPU's work: no slowdown.
  auto half = RunEvents(
      {GpuNode("n", 1)},
      {Share("a", Tier::kBronze, 0, 100, 800, 50), Share("b", Tier::kBronze, 0, 100, 800, 50)}, o);
  ASSERT_TRUE(half.ok());
  EXPECT_DOUBLE_EQ(half->makespan_s, 100);
  EXPECT_DOUBLE_EQ(half->slowed_s, 0);
  // Gold books ceil(800 / 1.15) = 696: two never share one GPU.
  auto gold =
      RunEvents({GpuNode("n", 1)},
                {Share("a", Tier::kGold, 0, 100, 800), Share("b", Tier::kGold, 0, 100, 800)}, o);
  ASSERT_TRUE(gold.ok());
  EXPECT_DOUBLE_EQ(gold->makespan_s, 200);
  // Mixed tiers: beside Gold 500 (books 435), Bronze 800 (books 400) would
  // slow both by 1.3, beyond Gold's 1.15: it waits (0-100, 100-200). Bronze
  // 300 fits in the GPU's work (busy 800): both run at once.
  o.tiers = true;
  auto mixed =
      RunEvents({GpuNode("n", 1)},
                {Share("g", Tier::kGold, 0, 100, 500), Share("b", Tier::kBronze, 0, 100, 800)}, o);
  ASSERT_TRUE(mixed.ok());
  EXPECT_DOUBLE_EQ(mixed->makespan_s, 200);
  EXPECT_DOUBLE_EQ(mixed->above_margin_s, 0);
  ASSERT_EQ(mixed->tiers.size(), 2u);
  EXPECT_DOUBLE_EQ(mixed->tiers[0].share_run_s, 100);  // gold
  auto small =
      RunEvents({GpuNode("n", 1)},
                {Share("g", Tier::kGold, 0, 100, 500), Share("b", Tier::kBronze, 0, 100, 300)}, o);
  ASSERT_TRUE(small.ok());
  EXPECT_DOUBLE_EQ(small->makespan_s, 100);
}

TEST(EventSim, OvercommitPicksTheGpuWithinEveryMargin) {
  // One node, two GPUs. b8 (Bronze 800, books 400) and gold (Gold 600, books
  // 522) start at 0 on different GPUs: together they would slow Gold by 1.4.
  // b6 (Bronze 600, books 300) arrives at 1: beside gold it would slow it by
  // 1.2 > 1.15, beside b8 by 1.4 <= 2 - so it joins b8 whatever GPU the
  // policy prefers. Gold runs unslowed; b8 and b6 share at 1/1.4.
  EventRunOptions o;
  o.overcommit = true;
  o.tiers = true;
  o.check_invariants = true;
  for (const char* policy : {"bestfit", "fgd", "random"}) {
    o.policy = policy;
    auto r =
        RunEvents({GpuNode("n", 2)},
                  {Share("b8", Tier::kBronze, 0, 100, 800), Share("gold", Tier::kGold, 0, 100, 600),
                   Share("b6", Tier::kBronze, 1, 100, 600)},
                  o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_DOUBLE_EQ(r->above_margin_s, 0) << policy;
    ASSERT_EQ(r->tiers.size(), 2u);
    EXPECT_DOUBLE_EQ(r->tiers[0].share_run_s, 100) << policy;  // gold, never slowed
    // b8: 1 s alone, then 99 s of work at 1/1.4 -> ends at 139.6; b6 did 99
    // by then, 1 s left alone -> ends at 140.6.
    EXPECT_NEAR(r->makespan_s, 140.6, 1e-9) << policy;
  }
}

TEST(EventSim, ContentionFollowsJoinsAndLeaves) {
  // a (800, 100 s) alone from 0 to 20: 80 s of work left. b (800, 50 s)
  // joins at 20: both at 1/1.6. b needs 50 x 1.6 = 80 s: ends at 100; a did
  // 50 more by then, 30 left at full speed: ends at 130.
  EventRunOptions o;
  o.overcommit = true;
  o.check_invariants = true;
  auto r = RunEvents(
      {GpuNode("n", 1)},
      {Share("a", Tier::kBronze, 0, 100, 800), Share("b", Tier::kBronze, 20, 50, 800)}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->makespan_s, 130);
  // JCTs b 80, a 130: p50 their mean, p99 at rank 0.99.
  EXPECT_DOUBLE_EQ(r->jct_s.p50, 105);
  EXPECT_DOUBLE_EQ(r->jct_s.p99, 80 + 0.99 * 50);
  EXPECT_DOUBLE_EQ(r->slowed_s, 160);  // both, from 20 to 100
  EXPECT_DOUBLE_EQ(r->share_run_s, 210);
}

TEST(EventSim, RedistributionMovesAShareOffAContendedGpu) {
  // Two 1-GPU nodes. At 0, a (Bronze 800, 100 s) and c (Gold 800, 50 s) each
  // get a GPU of their own. b (Bronze 800, 100 s) arrives at 1: no GPU takes
  // it without contention, c's Gold margin (1.15) keeps it off c's, so it
  // joins a at 1/1.6. At 50 c ends: a (1 + 49/1.6 = 31.625 s of work done)
  // moves to the idle node with a 10 s restore, 78.375 s left: ends at
  // 128.375; b runs alone from 50 with 69.375 left: ends at 119.375.
  std::vector<EventJob> jobs = {Share("a", Tier::kBronze, 0, 100, 800),
                                Share("c", Tier::kGold, 0, 50, 800),
                                Share("b", Tier::kBronze, 1, 100, 800)};
  EventRunOptions o;
  o.policy = "bestfit";
  o.overcommit = true;
  o.restore_cost_s = 10;
  o.check_invariants = true;
  // Without redistribution a and b share until the end: a's 68.375 s left
  // take 109.4 s (ends at 159.4), b's last second runs alone (ends at 160.4).
  auto stay = RunEvents({GpuNode("n0", 1), GpuNode("n1", 1)}, jobs, o);
  ASSERT_TRUE(stay.ok()) << stay.status().ToString();
  EXPECT_EQ(stay->redistributions, 0);
  EXPECT_NEAR(stay->makespan_s, 160.4, 1e-9);
  o.redistribute = true;
  auto r = RunEvents({GpuNode("n0", 1), GpuNode("n1", 1)}, jobs, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->redistributions, 1);
  EXPECT_NEAR(r->makespan_s, 128.375, 1e-9);
  EXPECT_NEAR(r->slowed_s, 2 * 49, 1e-9);  // a and b, from 1 to 50
}

TEST(EventSim, SpotFirstAndItsPrice) {
  // A spot node and an on-demand node; one 2-GPU job of 100 s goes to spot
  // (cheapest first) and costs 0.3 of its 200 GPU-s.
  Node spot = GpuNode("s0", 2), od = GpuNode("d0", 2);
  spot.spot = true;
  EventRunOptions o;
  o.spot_price_ratio = 0.3;
  auto r = RunEvents({od, spot}, {MakeJob("a", 0, 100, 2)}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->spot_gpu_hours, 200.0 / 3600, 1e-12);
  EXPECT_NEAR(r->cost_on_demand_gpu_hours, 0.3 * 200.0 / 3600, 1e-12);
  EXPECT_EQ(r->spot_interruptions, 0);
}

TEST(EventSim, SpotReclaimsPreemptButEveryJobFinishes) {
  // Four spot nodes reclaimed about 50 times a day each, two on-demand nodes;
  // 200 one-GPU jobs of an hour. Every job still completes, reclaims cause
  // preemptions, and the bill adds up: on-demand hours + ratio x spot hours.
  std::vector<Node> nodes;
  for (int i = 0; i < 6; ++i) {
    nodes.push_back(GpuNode("n" + std::to_string(i), 2));
    nodes.back().spot = i < 4;
  }
  std::vector<EventJob> jobs;
  for (int i = 0; i < 200; ++i) jobs.push_back(MakeJob("j" + std::to_string(i), 60 * i, 3600, 1));
  EventRunOptions o;
  o.spot_interruptions_per_day = 50;
  o.spot_recovery_s = 600;
  o.checkpoint_interval_s = 600;
  o.check_invariants = true;
  auto r = RunEvents(nodes, jobs, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->completed, 200);
  EXPECT_GT(r->spot_interruptions, 0);
  EXPECT_GT(r->preemptions, 0);
  EXPECT_NEAR(r->cost_on_demand_gpu_hours,
              (r->gpu_hours - r->spot_gpu_hours) + 0.3 * r->spot_gpu_hours, 1e-9);
  // Lost work is what ran past the last checkpoint: under 600 s per preemption.
  EXPECT_LT(r->lost_gpu_hours, r->preemptions * 600.0 / 3600 + 1e-9);
  // Same seed, same run.
  auto again = RunEvents(nodes, jobs, o);
  EXPECT_EQ(again->spot_interruptions, r->spot_interruptions);
  EXPECT_EQ(again->jct_s.p99, r->jct_s.p99);
}

TEST(EventSim, DeterministicWithInvariantsOnPhilly) {
  const auto dir = base::testing::DataDir() / "philly";
  SEEDANCE_REQUIRE_DATA(dir.string());
  auto* env = base::Env::Default();
  auto jobs = ReadPhillyJobs(*env->ReadFile((dir / "philly_jobs_pollux.csv").string()), "j");
  auto nodes = PhillyNodes(*env->ReadFile((dir / "philly_vc_nodes.csv").string()), "v", 8);
  ASSERT_TRUE(jobs.ok() && nodes.ok());
  jobs->resize(3000);
  EventRunOptions o;
  o.check_invariants = true;  // Cluster::Check after every event
  o.quotas = true;            // with preemption between VCs
  auto a = RunEvents(*nodes, JobsFromPhilly(*jobs, 8), o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->started + a->never_fit + a->still_queued, a->jobs);  // every job accounted for
  EXPECT_EQ(a->completed, a->started);                              // Philly jobs all end
  o.check_invariants = false;
  auto b = RunEvents(*nodes, JobsFromPhilly(*jobs, 8), o);
  EXPECT_EQ(a->queue_delay_s.p99, b->queue_delay_s.p99);
  EXPECT_EQ(a->gpu_used_pct_over_time, b->gpu_used_pct_over_time);
}

// Hardening finding 11: a scheduling cycle must not test every node. k copies of one random
// trace side by side (k times the nodes and the jobs, same arrival times): with a full scan the
// nodes examined per job grow k-fold; with incremental scoring they stay about flat. A work count,
// not a timing, so it holds on any machine.
TEST(EventSim, NodesExaminedPerJobDoNotGrowWithTheCluster) {
  auto examined_per_job = [](int k, const std::string& policy, TieBreak ties) {
    std::mt19937_64 rng(5);
    std::vector<EventJob> base;
    for (int i = 0; i < 400; ++i) {
      base.push_back(MakeJob("j" + std::to_string(i), static_cast<int64_t>(i) * 30,
                             60 + static_cast<double>(rng() % 3000),
                             1 + static_cast<int>(rng() % 4)));
    }
    std::vector<Node> nodes;
    std::vector<EventJob> jobs;
    for (int c = 0; c < k; ++c) {
      for (int n = 0; n < 40; ++n)
        nodes.push_back(GpuNode("c" + std::to_string(c) + "-n" + std::to_string(n), 4));
      for (EventJob j : base) {
        j.id += "-c" + std::to_string(c);
        jobs.push_back(std::move(j));
      }
    }
    EventRunOptions o;
    o.policy = policy;
    o.ties = ties;
    auto r = RunEvents(nodes, std::move(jobs), o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->completed, r->jobs);
    return static_cast<double>(r->nodes_examined) / static_cast<double>(r->jobs);
  };
  for (const char* policy : {"bestfit", "dotprod", "fgd"}) {
    for (TieBreak ties : {TieBreak::kRandom, TieBreak::kNodeName}) {
      const double one = examined_per_job(1, policy, ties),
                   eight = examined_per_job(8, policy, ties);
      // A full scan examines 8x as many nodes per job at k = 8 (40 -> 320 nodes).
      EXPECT_LT(eight, 2 * one) << policy << ": " << one << " -> " << eight;
    }
  }
}

// Random small traces through every mechanism at once — tiers, quotas,
// consolidation, over-commit, redistribution, spot reclaims — with the
// cluster checked after every event: every job is accounted for, every job
// with an end that started also ended, and no share ran beyond its margin.
TEST(EventSim, RandomTracesKeepTheirInvariantsWithEveryMechanism) {
  std::mt19937 rng(17);
  // preemptions, spot reclaims, consolidations, moves, contended runs, retry limits
  int64_t seen[6] = {0, 0, 0, 0, 0, 0};
  for (int trial = 0; trial < 150; ++trial) {
    std::vector<Node> nodes;
    for (int n = 0; n < 2 + static_cast<int>(rng() % 3); ++n) {
      Node node = GpuNode("n" + std::to_string(n), 1 + static_cast<int>(rng() % 3));
      node.pool = n % 2 ? "A" : "B";
      node.spot = rng() % 3 == 0;
      nodes.push_back(node);
    }
    std::vector<EventJob> jobs;
    for (int i = 0; i < 25; ++i) {
      EventJob j;
      j.id = "j" + std::to_string(i);
      j.group = rng() % 2 ? "A" : "B";
      j.submit_s = static_cast<int64_t>(rng() % 300);
      j.duration_s = rng() % 10 == 0 ? -1.0 : 1.0 + static_cast<double>(rng() % 200);
      j.tier = static_cast<Tier>(rng() % 3);
      j.gpu_util_pct = rng() % 4 == 0 ? -1.0 : static_cast<double>(rng() % 101);
      Pod p;
      p.name = j.id;
      p.cpu_milli = 1000;
      if (rng() % 2) {
        p.num_gpu = 1;
        p.gpu_milli = 50 + static_cast<int>(rng() % 900);
      } else {
        p.num_gpu = 1 + static_cast<int>(rng() % 2);
        p.gpu_milli = 1000;
      }
      j.members = {p};
      if (rng() % 8 == 0) j.members.push_back(p);  // a gang of two
      jobs.push_back(j);
    }
    EventRunOptions o;
    o.policy = std::vector<std::string>{"fgd", "bestfit", "random"}[rng() % 3];
    o.seed = rng();
    o.check_invariants = true;
    o.tiers = rng() % 2;
    o.quotas = rng() % 2;
    o.max_retries = rng() % 2 ? -1 : 2;
    o.consolidate = rng() % 2;
    o.consolidate_after_s = 20;
    o.overcommit = rng() % 2;
    o.redistribute = o.overcommit && rng() % 2;
    o.checkpoint_interval_s = 30;
    o.restore_cost_s = static_cast<double>(rng() % 20);
    o.spot_interruptions_per_day = rng() % 2 ? 200 : 0;
    o.spot_recovery_s = 50;
    auto r = RunEvents(nodes, jobs, o);
    ASSERT_TRUE(r.ok()) << "trial " << trial << ": " << r.status().ToString();
    // Every job never fit, or started, or waits; a preempted job that waits
    // again at the end is both started and still queued.
    EXPECT_LE(r->started + r->never_fit, r->jobs) << "trial " << trial;
    EXPECT_GE(r->started + r->never_fit + r->still_queued, r->jobs) << "trial " << trial;
    int64_t finite_started = r->started;
    for (const auto& j : jobs) finite_started -= j.duration_s < 0;  // may never end
    EXPECT_GE(r->completed, finite_started - r->still_queued) << "trial " << trial;
    EXPECT_EQ(r->above_margin_s, 0) << "trial " << trial;
    seen[0] += r->preemptions;
    seen[1] += r->spot_interruptions;
    seen[2] += r->consolidations;
    seen[3] += r->redistributions;
    seen[4] += r->slowed_s > 0;
    seen[5] += r->retry_limited;
  }
  // Every mechanism took part somewhere.
  for (int k = 0; k < 6; ++k) EXPECT_GT(seen[k], 0) << "mechanism " << k;
}

TEST(EventSim, ARunThatCannotEndStopsWithAClearError) {
  // One spot node reclaimed about every 9 s, checkpoints every 30 s and a
  // 10 s restore: a 100 s job loses more than it makes and would run forever.
  Node n = GpuNode("s", 1);
  n.spot = true;
  EventRunOptions o;
  o.spot_interruptions_per_day = 10000;
  o.spot_recovery_s = 1;
  o.checkpoint_interval_s = 30;
  o.restore_cost_s = 10;
  o.max_events = 100000;
  auto r = RunEvents({n}, {MakeJob("j", 0, 100, 1)}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("has not ended after 100001 events"), std::string::npos)
      << r.status().ToString();
}

TEST(EventSim, PhillyNodesErrors) {
  EXPECT_FALSE(PhillyNodes("vc,nodes\na,1\n", "f", 8).ok());
  auto bad = PhillyNodes("vc,node num\na,x\n", "f", 8);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "f:2: node num");
  auto ok = PhillyNodes("vc,node num\na,2\nb,1\n", "f", 4);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 3u);
  EXPECT_EQ((*ok)[2].gpu_count, 4);
}

}  // namespace
}  // namespace seedance::sched
