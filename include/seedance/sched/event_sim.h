// Event mode of the simulator (feature SCHED-7): jobs arrive at
// their submit time, wait in a queue, run on the cluster for their duration
// and leave. Deterministic for a seed. Jobs are placed through the live
// Scheduler (scheduler.h); each mechanism below is a plugin or a post-pass
// rebalancer in a file of its own (src/sched/simulation.h lists them).
//
// Loop: events (arrivals, completions) in time order; after all events of
// one instant, a scheduling pass walks the queue — higher priority first,
// then submit order — and places each job with the policy (filter, score,
// bind), all members of a gang or none. A job that does not fit stays queued;
// the pass goes on to the next (backfill) but looks at no more than
// `backfill_window` waiting jobs, so that a long queue costs a bounded scan.
//
// Elastic quotas (feature SCHED-3), with `quotas` on: a group's guaranteed quota
// is the GPU of the nodes in the pool of the same name (Node::pool). A job
// that keeps its group within quota is guaranteed; beyond it, a job may
// borrow idle GPU anywhere but can be preempted. When a guaranteed job does
// not fit, borrowing jobs of other groups are preempted, most recently
// started first, until it fits (tried on a trial state first, so
// nothing is preempted in vain). A preempted job returns to the queue and
// loses the work since its last checkpoint (every checkpoint_interval_s of
// run time), then pays restore_cost_s when it starts again.
//
// Spot capacity (feature SCHED-6): nodes with Node::spot are cheaper
// (spot_price_ratio of an on-demand GPU-hour) and are reclaimed at random
// (a Poisson process of spot_interruptions_per_day per node, seeded): the
// jobs on a reclaimed node are preempted as above and the node is gone for
// spot_recovery_s. Jobs try spot nodes first (cheapest first), then
// on-demand ones. Cost is reported in on-demand GPU-hours.
//
// QoS tiers (feature SCHED-3, `tiers` on; qos_tiers.h): the queue is ordered by
// tier (Gold, Silver, Bronze), then priority, then submit time. Gold jobs
// are always guaranteed; a Silver job is guaranteed while its group's GPU use
// stays within SilverQuotaScale(load) x the group's quota (its pool's GPU
// with `quotas`, else the whole cluster's); Bronze jobs never are and never
// preempt. A guaranteed job that does not fit preempts non-guaranteed jobs —
// Bronze before Silver, the most recently started first — of a lower tier or
// another group. With `max_retries` >= 0, a job preempted that many times is
// not chosen again (it keeps its place: a bound on thrashing).
//
// Consolidation of long-tail jobs (feature SCHED-5, `consolidate` on):
// a job whose GPU utilization (EventJob::gpu_util_pct, an input —
// the traces do not carry it) is below `consolidate_below_pct` is marked
// long-tail once it has run `consolidate_after_s` since its last start, and
// is moved at the next scheduling pass onto a GPU share of
// `consolidate_share_milli` (one GPU): checkpointed where it stands (no work
// lost), restored at restore_cost_s, its old GPUs freed for the queue. Only
// single-pod jobs whose share is smaller than what they hold are moved, once.
//
// GPU over-commit of shares (`overcommit` on; feature SCHED-3's safety
// margins): a single-GPU share of known utilization
// (EventJob::gpu_util_pct) books only ceil(request / OvercommitMargin(tier))
// milli-GPU (Gold 1.15x, Silver 1.35x, Bronze 2x); one of unknown
// utilization books its request. Shares on a GPU contend: with busy = sum of
// request x utilization (unknown: 100%), each runs at 1 / max(1, busy/1000)
// of its speed, and its completion moves whenever a share joins or leaves
// its GPU. A share goes first where it runs without contention; only when no
// GPU offers that, where the slowdown after it joins stays within the margin
// of every share there (a filter plugin per node, then the GPU checked and
// changed if the policy picked one that is not). Preemption for a share
// checks the same. So no share runs beyond its margin; the report gives the
// share run time slowed and (always 0 by construction) beyond margin.
//
// Load redistribution (`redistribute` on, with overcommit; feature SCHED-4):
// a node's load is the busy milli-GPU of its shares over its
// GPU capacity. After each scheduling pass, for each contended GPU (slowdown >
// 1), hottest first, the share with the most busy time there moves to the
// least loaded node whose load is at least `redistribute_gap` (0.15) x the
// hottest node's load below its own, that has a GPU where the share books and
// runs without contention, and with which the source node has not exchanged
// a job in the last `redistribute_cooldown_s` (45 s). The move is a
// checkpoint where the job stands plus restore_cost_s, like consolidation.
// Each move is one job (docs/design/sched.md says why).
//
// Thread safety: a run owns its state.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/sched/model.h"
#include "seedance/sched/policy.h"
#include "seedance/sched/qos_tiers.h"

namespace seedance::sched {

struct EventJob {
  std::string id;
  std::string group;  // QoS class or virtual cluster, for per-group figures
  int64_t submit_s = 0;
  double duration_s = 0;  // < 0: runs past the end of the trace
  int priority = 0;       // higher first
  Tier tier = Tier::kSilver;
  double gpu_util_pct = -1;  // mean utilization of what it is allocated; < 0: unknown
  std::vector<Pod> members;  // a gang: all placed or none
};

// Philly jobs as gangs of whole-GPU pods of at most `gpus_per_node` GPUs.
std::vector<EventJob> JobsFromPhilly(const std::vector<Job>& jobs, int gpus_per_node);
// Alibaba pods (creation and deletion times); pods without a deletion time run
// past the end. Priority: LS and Guaranteed 1, others 0; tier: TierOfQos.
std::vector<EventJob> JobsFromAlibaba(const std::vector<Pod>& pods);
// A cluster for Philly: `nodes` machines of `gpus_per_node` GPUs per VC line
// of philly_vc_nodes.csv ("vc,node num"). Each VC once; node counts are whole
// numbers, at most kMaxPhillyNodes in one VC and in all.
inline constexpr int64_t kMaxPhillyNodes = 100'000;
base::StatusOr<std::vector<Node>> PhillyNodes(std::string_view vc_nodes_csv,
                                              const std::string& file, int gpus_per_node);

struct EventRunOptions {
  std::string policy = "bestfit";
  uint64_t seed = 42;
  int backfill_window = 64;
  TieBreak ties = TieBreak::kRandom;  // as kube-scheduler (policy.h)
  bool check_invariants = false;      // Cluster::Check after every event (debug tests)
  bool quotas = false;
  bool tiers = false;
  int max_retries = -1;  // preemptions a job may suffer; < 0: no limit
  bool consolidate = false;
  double consolidate_below_pct = 5;
  double consolidate_after_s = 600;
  int consolidate_share_milli = 100;
  bool overcommit = false;
  // The run stops with an error after this many events (0: 100 x jobs +
  // 1,000,000) — the guard against runs that never end.
  int64_t max_events = 0;
  bool redistribute = false;
  double redistribute_gap = 0.15;
  double redistribute_cooldown_s = 45;
  double checkpoint_interval_s = 1800;
  double restore_cost_s = 60;
  double spot_interruptions_per_day = 0;
  double spot_recovery_s = 600;
  double spot_price_ratio = 0.3;  // an input: set it from the provider's price list
  // Per group: the queueing delay a job may see and still meet its SLO.
  std::map<std::string, double> slo_queue_delay_s;
};

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0;
};

struct GroupFigures {
  std::string group;
  int64_t jobs = 0;
  Percentiles queue_delay_s;
  // With an SLO for the group: jobs that started within it, % of the group's
  // jobs (never started = missed); else -1.
  double slo_attainment_pct = -1;
};

struct TierFigures {
  Tier tier = Tier::kSilver;
  int64_t jobs = 0, started = 0;
  Percentiles queue_delay_s;
  int64_t preemptions = 0;  // suffered by the tier's jobs (spot reclaims included)
  // With overcommit: run time of the tier's shares, and the part of it spent
  // slowed beyond the tier's margin.
  double share_run_s = 0, above_margin_s = 0;
  // With an SLO for the tier (by its name, e.g. "gold"): jobs that started
  // within it, % of the tier's jobs; else -1.
  double slo_attainment_pct = -1;
};

struct EventRun {
  int64_t jobs = 0, started = 0, completed = 0, never_fit = 0, still_queued = 0;
  Percentiles jct_s, queue_delay_s;  // over completed jobs; delay over started ones
  std::vector<GroupFigures> groups;
  std::vector<TierFigures> tiers;  // with tiers on: the tiers that have jobs, Gold first
  int64_t preemptions = 0;
  int64_t retry_limited = 0;  // jobs that reached max_retries
  int64_t consolidations = 0;
  int64_t redistributions = 0;
  // GPU-hours handed back by consolidation: (milli-GPU held - share) x the
  // time the job then ran on its share.
  double consolidation_freed_gpu_hours = 0;
  // With overcommit: share run time, the part of it slowed by contention and
  // the part slowed beyond the job's tier margin; mean slowdown over it.
  double share_run_s = 0, slowed_s = 0, above_margin_s = 0, mean_share_slowdown = 1;
  double lost_gpu_hours = 0;  // work preempted jobs had done since their last checkpoint
  int64_t spot_interruptions = 0;
  double spot_gpu_hours = 0;
  double cost_on_demand_gpu_hours = 0;  // GPU-hours priced, spot at spot_price_ratio
  double gpu_hours = 0;                 // GPU time used, completed and running
  double makespan_s = 0;                // first submit to last event
  double mean_gpu_used_pct = 0;         // time-weighted
  // Time-weighted GPU use in 100 equal slices of the makespan.
  std::vector<double> gpu_used_pct_over_time;
  int64_t events = 0;
  // Nodes the scheduling cycles examined (Framework::nodes_examined): a work count, so that a test
  // can see growth with the cluster without timing anything. Not printed.
  int64_t nodes_examined = 0;
  double runtime_ms = 0;
};

base::StatusOr<EventRun> RunEvents(const std::vector<Node>& nodes, std::vector<EventJob> jobs,
                                   const EventRunOptions& options);

}  // namespace seedance::sched
