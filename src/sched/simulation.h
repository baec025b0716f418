// The state of one event-mode run (event_sim.h) and the steps every mechanism shares (private to
// seedance::sched). RunEvents (event_sim.cc) owns the loop: it pops the events of an instant,
// runs the post-pass rebalancers and one scheduling pass, and builds the report.
//
// The pieces, one file each:
//   event_queue.h        typed events in time order
//   simulation.cc        a job's life: placement (through the live Scheduler), run segments,
//                        work at a rate, stop, preemption, checkpointed moves
//   scheduling_pass.cc   one pass over the head of the wait queue, with preemption
//   quota_preemption.h   quotas and tiers: the guarantee rule and the victims (PostFilter)
//   spot_capacity.h      spot nodes: filter plugin and reclaim times
//   overcommit.h         shares on GPUs: filter and reserve plugins, contention
//   consolidation.cc     long-tail jobs onto a share (a post-pass rebalancer)
//   redistribution.cc    shares off contended GPUs (a post-pass rebalancer)
//   event_report.cc      percentiles, per-group and per-tier figures, GPU use over time
//
// Work is tracked at a rate: JobState::remaining is the work left as of `mark`, done at `rate`
// (1 unless its GPU is contended); `epoch` counts a job's runs and re-ratings, so that a
// completion pushed for an earlier one is recognised as stale.
//
// Thread safety: a run owns its state.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/sched/event_sim.h"
#include "seedance/sched/scheduler.h"
#include "src/sched/event_queue.h"
#include "src/sched/overcommit.h"
#include "src/sched/quota_preemption.h"
#include "src/sched/spot_capacity.h"

namespace seedance::sched {

struct JobState {
  std::vector<Candidate> at;  // where each member runs, while placed
  double started_at = -1;     // its first start; < 0: never started
  double segment_start = -1;  // start of the current run; < 0: not running
  double remaining = 0;       // work left as of `mark` (run time at full speed)
  double mark = 0;
  double rate = 1;
  double seg_work = 0;  // `remaining` when the current run began
  int epoch = 0;
  int preempted = 0;
  bool borrowing = false;  // started beyond its guarantee: preemptible
  bool consolidated = false;
  bool forever = false;  // runs past the end of the trace
  double shrunk_by = 0;  // milli-GPU handed back by consolidation
};

// What the report is built from, gathered as the run goes.
struct Tally {
  std::vector<double> jct, delay;
  std::map<std::string, std::vector<double>> group_delay;
  std::map<Tier, std::vector<double>> tier_delay;
  std::map<Tier, int64_t> tier_preempted;
  std::map<Tier, std::pair<double, double>> tier_share_s;  // (run, beyond margin) per tier
  double slowdown_area = 0;
  std::vector<std::pair<double, double>> use;  // (time, used fraction from then on)
  double used_area = 0, last_t = 0;
};

class Simulation {
 public:
  Simulation(const std::vector<Node>& nodes, std::vector<EventJob> jobs,
             const EventRunOptions& options, std::unique_ptr<Policy> policy);

  const EventRunOptions& options() const { return o_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  EventJob& job(size_t id) { return jobs_[id]; }
  const std::vector<EventJob>& jobs() const { return jobs_; }
  JobState& state(size_t id) { return st_[id]; }
  const Cluster& cluster() const { return sched_.cluster(); }
  Scheduler& scheduler() { return sched_; }
  EventQueue& events() { return events_; }
  EventRun& run() { return run_; }
  Tally& tally() { return tally_; }
  ShareTable& shares() { return shares_; }
  SpotCapacity& spot() { return spot_; }
  QuotaPreemption& quota() { return quota_; }
  const std::vector<size_t>& running() const { return running_; }

  bool IsShare(size_t id) const;
  int64_t DemandOf(size_t id) const;
  // Sets a share's request and its booking (below the request only with over-commit).
  void Book(size_t id, int milli);
  GpuSlot GpuOf(size_t id) const { return {st_[id].at[0].node, st_[id].at[0].gpus[0]}; }

  // Places the job (every member or none): spot nodes first, then any; with over-commit, first
  // where shares run uncontended, then within margins. Records where in JobState::at.
  base::StatusOr<bool> TryPlace(size_t id);
  // Whether the job could be placed once `victims` were gone (tried on a copy, greedily).
  bool FitsWithout(size_t id, const std::vector<size_t>& victims) const;
  // Whether an empty cluster could hold the job (memoised by shape for untyped jobs).
  bool FitsEmpty(size_t id);

  // A placed job starts (or resumes) running at t.
  void BeginSegment(size_t id, double t, bool guaranteed);
  // Frees a running job's resources at t and books its GPU time.
  base::Status Stop(size_t id, double t);
  // A running job is preempted at t: the work since its last checkpoint is lost, a restore
  // is added; it is appended to `requeue`.
  base::Status Preempt(size_t id, double t, std::vector<size_t>& requeue);
  // A move: checkpointed where it stands (no work lost), freed, a restore added. Returns
  // whether it was guaranteed.
  base::StatusOr<bool> CheckpointOut(size_t id, double t);
  // A job placed outside a cycle (a rebalancer's choice) on one GPU.
  base::Status PlaceAt(size_t id, int node, int gpu);

  // Brings a job's remaining work to time t (and the over-commit figures with it).
  void Advance(size_t id, double t);
  // The shares on a GPU changed at t: each gets its new rate and a new completion.
  void Reshare(GpuSlot gpu, double t);

  // The wait queue, in the order jobs are tried: tier (with tiers), priority descending, then
  // submit time and id — the job's index, as jobs are sorted by them.
  using QueueKey = std::tuple<int, int, size_t>;
  QueueKey KeyOf(size_t id) const;
  std::set<QueueKey>& queue() { return queue_; }

  // Job events (arrivals, live completions) still pending: the loop ends at zero.
  int64_t job_events = 0;

 private:
  void PushCompletion(size_t id, double t);

  const std::vector<Node>& nodes_;
  const EventRunOptions& o_;
  std::vector<EventJob> jobs_;
  std::vector<JobState> st_;
  Scheduler sched_;
  ShareTable shares_;
  SpotCapacity spot_;
  QuotaPreemption quota_;
  EventQueue events_;
  EventRun run_;
  Tally tally_;
  std::set<QueueKey> queue_;
  std::vector<size_t> running_;  // ids, in start order
  const Cluster empty_cluster_;
  std::map<std::vector<std::tuple<int64_t, int64_t, int, int>>, bool> shape_fits_;
};

// Post-pass rebalancers (one file each).
base::Status ConsolidatePass(Simulation& sim, double t);
class Redistributor {
 public:
  base::Status Pass(Simulation& sim, double t);

 private:
  std::map<std::pair<int, int>, double> last_exchange_;  // node pair -> time
};

// One scheduling pass over the head of the queue at t (scheduling_pass.cc).
base::Status SchedulingPass(Simulation& sim, double t);
// The report's figures from the tally (event_report.cc).
void FinishReport(Simulation& sim, double t0, double end);

}  // namespace seedance::sched
