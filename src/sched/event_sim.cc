// The event loop of the event-mode simulator (event_sim.h); the steps it calls are in
// simulation.h and the files it lists.
#include "seedance/sched/event_sim.h"

#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/sched/policy.h"
#include "src/sched/simulation.h"

namespace seedance::sched {
namespace {

// A spot node is reclaimed: the jobs with a member on it are preempted and queued again; the
// node returns after the recovery time.
base::Status Reclaim(Simulation& sim, size_t node, double now) {
  ++sim.run().spot_interruptions;
  sim.spot().set_down(node, true);
  std::vector<size_t> victims;
  for (size_t r : sim.running()) {
    for (const Candidate& member : sim.state(r).at) {
      if (member.node == static_cast<int>(node)) {
        victims.push_back(r);
        break;
      }
    }
  }
  // A victim's old completion stays queued (and counts down when it pops, ignored by its
  // epoch); its rerun pushes a new one.
  std::vector<size_t> back;
  for (size_t v : victims) SEEDANCE_RETURN_IF_ERROR(sim.Preempt(v, now, back));
  for (size_t v : back) sim.queue().insert(sim.KeyOf(v));
  sim.events().Push(now + sim.spot().recovery_s(), EventKind::kNodeBack, node);
  return base::OkStatus();
}

// One event. `last_effect` is the time of the last arrival or live completion: a stale
// completion (of a run that was preempted or re-rated) can still pop later and must not extend
// the run.
base::Status Handle(Simulation& sim, const Event& e, double& last_effect) {
  switch (e.kind) {
    case EventKind::kNodeReclaimed:
      return Reclaim(sim, e.subject, e.time);
    case EventKind::kNodeBack:  // its next reclaim is drawn
      sim.spot().set_down(e.subject, false);
      sim.events().Push(e.time + sim.spot().NextGap(), EventKind::kNodeReclaimed, e.subject);
      return base::OkStatus();
    case EventKind::kConsolidationDue:  // the pass consolidates what is due
      return base::OkStatus();
    case EventKind::kArrival:
      --sim.job_events;
      // A job no empty cluster could hold never runs: count it, do not queue it.
      if (!sim.FitsEmpty(e.subject)) {
        ++sim.run().never_fit;
        return base::OkStatus();
      }
      sim.queue().insert(sim.KeyOf(e.subject));
      last_effect = e.time;
      return base::OkStatus();
    case EventKind::kCompletion:
      --sim.job_events;
      if (e.epoch != sim.state(e.subject).epoch || sim.state(e.subject).segment_start < 0) {
        return base::OkStatus();  // stale
      }
      SEEDANCE_RETURN_IF_ERROR(sim.Stop(e.subject, e.time));
      ++sim.run().completed;
      sim.tally().jct.push_back(e.time - static_cast<double>(sim.job(e.subject).submit_s));
      last_effect = e.time;
      return base::OkStatus();
  }
  return base::OkStatus();
}

// Time-weighted GPU use, after the pass at `now`.
void RecordUse(Simulation& sim, double now) {
  Tally& tally = sim.tally();
  const double used = static_cast<double>(sim.cluster().used_gpu_milli()) /
                      static_cast<double>(sim.cluster().total_gpu_milli());
  tally.used_area += (now - tally.last_t) * (tally.use.empty() ? 0 : tally.use.back().second);
  tally.last_t = now;
  tally.use.push_back({now, used});
}

base::Status TooManyEvents(const EventRun& run) {
  return base::ResourceExhaustedError(
      "the run has not ended after " + std::to_string(run.events) + " events (" +
      std::to_string(run.preemptions) + " preemptions, " + std::to_string(run.completed) + " of " +
      std::to_string(run.jobs) +
      " jobs completed): preemptions undo work faster than jobs make it; checkpoint more often "
      "or lower the spot reclaim rate");
}

}  // namespace

base::StatusOr<EventRun> RunEvents(const std::vector<Node>& nodes, std::vector<EventJob> jobs,
                                   const EventRunOptions& o) {
  const int64_t start = base::Env::Default()->NowMonotonicNanos();
  if (jobs.empty()) return base::InvalidArgumentError("no jobs");
  std::vector<Pod> workload;  // built only for a policy that reads it (a copy of every pod)
  if (PolicyUsesWorkload(o.policy)) {
    for (const auto& j : jobs) workload.insert(workload.end(), j.members.begin(), j.members.end());
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto policy, MakePolicy(o.policy, workload));
  workload.clear();
  Simulation sim(nodes, std::move(jobs), o, std::move(policy));
  if (sim.cluster().total_gpu_milli() == 0) {
    return base::InvalidArgumentError("the cluster has no GPUs");
  }
  sim.run().jobs = static_cast<int64_t>(sim.jobs().size());
  for (size_t i = 0; i < sim.jobs().size(); ++i) {
    sim.events().Push(static_cast<double>(sim.job(i).submit_s), EventKind::kArrival, i);
  }
  const double t0 = static_cast<double>(sim.job(0).submit_s);
  sim.tally().last_t = t0;
  if (sim.spot().reclaims()) {
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (nodes[n].spot) sim.events().Push(t0 + sim.spot().NextGap(), EventKind::kNodeReclaimed, n);
    }
  }
  Redistributor redistributor;
  double last_effect = t0;
  // A run in which preemptions undo work faster than jobs make it (spot reclaims more often
  // than checkpoints) would never end: stop it.
  const int64_t max_events = o.max_events > 0 ? o.max_events : 100 * sim.run().jobs + 1'000'000;
  while (!sim.events().empty() && sim.job_events > 0) {
    if (sim.run().events > max_events) return TooManyEvents(sim.run());
    const double now = sim.events().top().time;
    while (!sim.events().empty() && sim.events().top().time == now) {
      ++sim.run().events;
      SEEDANCE_RETURN_IF_ERROR(Handle(sim, sim.events().Pop(), last_effect));
    }
    if (o.consolidate) SEEDANCE_RETURN_IF_ERROR(ConsolidatePass(sim, now));
    SEEDANCE_RETURN_IF_ERROR(SchedulingPass(sim, now));
    // After placing: contention the pass just created is relieved at once.
    if (o.overcommit && o.redistribute) SEEDANCE_RETURN_IF_ERROR(redistributor.Pass(sim, now));
    if (o.check_invariants) SEEDANCE_RETURN_IF_ERROR(sim.scheduler().Check());
    RecordUse(sim, now);
  }
  // Still running at the end.
  for (size_t id : std::vector<size_t>(sim.running())) {
    SEEDANCE_RETURN_IF_ERROR(sim.Stop(id, last_effect));
  }
  FinishReport(sim, t0, last_effect);
  EventRun run = std::move(sim.run());
  run.runtime_ms = static_cast<double>(base::Env::Default()->NowMonotonicNanos() - start) / 1e6;
  return run;
}

}  // namespace seedance::sched
