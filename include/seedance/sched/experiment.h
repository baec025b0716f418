// Scheduler experiments (feature SCHED-7): a node list and a pod or job trace, scheduled with each
// of several policies, once per seed, and averaged — the report of `seedancectl simulate` and of
// `seedance.sched.simulate` in Python, built here once for both.
//
//   protocol "fgd"     the FGD paper's protocol (fgd_protocol.h) on an Alibaba 2023 pod list
//   protocol "events"  the event mode (event_sim.h) on an Alibaba pod list or a Philly job list
//
// Input formats are recognised by their header line: nodes are an Alibaba 2023 node list, a PAI
// 2020 machine spec or Philly's VC node counts ("vc,node num"); pods are an Alibaba 2023 pod list
// or a Philly job list ("timestamp,duration,num_gpus,..."). Files are read through Env.
//
// Rules checked before any work (ValidateExperiment): event-mode settings need the event
// protocol; a tier map needs tiers; redistribution needs over-commit; consolidation needs a
// utilization file; the FGD protocol needs an Alibaba pod list.
//
// Report (keys in this order): nodes, pods, [protocol: "events"], seeds, baseline, policies — one
// object per policy, its name first, then the figures averaged over the seeds (FGD protocol:
// allocation and fragmentation at each arrived share of capacity, what is unallocated at 130%;
// event mode: job counts, JCT and queueing-delay percentiles, GPU use, spot, preemption,
// consolidation, over-commit figures), and figures of the first seed where a mean means nothing
// (per group, per tier, GPU use over time). Counts that are means over seeds are numbers, not
// integers, unless every seed gives the same (jobs, never_fit, events of the first seed). Each
// policy's `seed_spread` gives its headline figures per seed with the 95% bootstrap interval of
// their mean (FGD protocol: unallocated_gpu_pct_at_130, alloc_ratio_pct_at_100; event mode:
// jct_s_p50, queue_delay_s_p99, mean_gpu_used_pct), and `comparisons` (last) each other policy
// against the baseline, paired by seed, with the interval of the mean difference and a p-value
// (src/sched/seed_stats.h).
//
// Thread safety: RunExperiment runs seeds on `threads` threads, each run owning its cluster and
// policy; `progress` is called under a lock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/sched/event_sim.h"
#include "seedance/sched/qos_tiers.h"

namespace seedance::sched {

struct ExperimentSpec {
  std::string nodes_file, pods_file;
  std::string protocol = "fgd";  // "fgd" or "events"
  std::vector<std::string> policies = {"fgd"};
  // The policy the others are compared with, paired by seed (empty: the first of `policies`).
  std::string baseline;
  // "auto" (shuffled-names under the FGD protocol, random in event mode), "name",
  // "shuffled-names" or "random" (policy.h, TieBreak).
  std::string ties = "auto";
  int seeds = 10;  // seeds first_seed, first_seed + 1, ...
  uint64_t first_seed = 42;
  int threads = 1;
  int gpus_per_node = 8;  // for Philly's VC node counts

  // Event mode. `events.policy`, `seed` and `ties` are set per run; the rest applies as given
  // (quotas, tiers, retries, consolidation, over-commit, redistribution, checkpoints, spot
  // reclaims and price, SLOs).
  EventRunOptions events;
  double spot_fraction = 0;             // share of nodes that are spot, spread evenly
  std::map<std::string, Tier> tier_of;  // tiers by group (needs events.tiers)
  std::string job_util_file;            // CSV id,gpu_util_pct (empty: none)

  bool html = false;  // also render the self-contained HTML report
  // FGD protocol: also record the first seed's arrivals and decisions (ExperimentResult::
  // placements), what `seedancectl simulate --placements` writes for a replay on a cluster.
  bool placements = false;
};

struct ExperimentResult {
  base::Report report;
  std::string html;  // with ExperimentSpec::html
  // With ExperimentSpec::placements: {seed, ties, tune, capacity_gpu_milli, nodes: [names],
  // pods: [names] (the input list), policies: [{policy, alloc_pct_at, arrivals: [[pod, node,
  // [gpus]]...]}]} — pod and node index those lists, node -1 where the pod fit nowhere.
  base::Report placements;
};

// Seeds done of one policy's runs: (policy, done, total).
using ExperimentProgress = std::function<void(std::string_view policy, int done, int total)>;

base::Status ValidateExperiment(const ExperimentSpec& spec);
base::StatusOr<ExperimentResult> RunExperiment(const ExperimentSpec& spec, base::Env& env,
                                               const ExperimentProgress& progress = {});

// The settings' text forms. "LS=60,BE=3600": queueing-delay SLOs in seconds, finite, 0 to 10^8.
base::StatusOr<std::map<std::string, double>> ParseSloList(std::string_view text,
                                                           std::string_view where = "--slo");
// "6214e9=gold,11cb48=bronze": tiers by group.
base::StatusOr<std::map<std::string, Tier>> ParseTierList(std::string_view text,
                                                          std::string_view where = "--tier-of");

}  // namespace seedance::sched
