// One scheduling pass of the event simulator over the head of the wait queue.
#include <set>
#include <vector>

#include "src/sched/simulation.h"

namespace seedance::sched {
namespace {

using Shape = std::vector<std::tuple<int64_t, int64_t, int, int>>;

Shape ShapeOf(const EventJob& j) {
  Shape shape;
  for (const Pod& p : j.members) {
    shape.emplace_back(p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli);
  }
  return shape;
}

// The PostFilter of a guaranteed job that fits nowhere: preempts the victims QuotaPreemption
// selects (appending them to `requeued`) and tries again. Whether the job is placed.
base::StatusOr<bool> PreemptFor(Simulation& sim, size_t id, double t,
                                std::vector<size_t>& requeued) {
  std::vector<RunningJob> newest_first;
  const auto& running = sim.running();
  newest_first.reserve(running.size());
  for (auto it = running.rbegin(); it != running.rend(); ++it) {
    const JobState& s = sim.state(*it);
    newest_first.push_back(
        RunningJob{*it, &sim.job(*it).group, sim.job(*it).tier, s.borrowing, s.preempted});
  }
  const EventJob& j = sim.job(id);
  const std::vector<size_t> victims = sim.quota().SelectVictims(
      j.group, j.tier, newest_first,
      [&](const std::vector<size_t>& v) { return sim.FitsWithout(id, v); });
  if (victims.empty()) return false;
  for (size_t v : victims) SEEDANCE_RETURN_IF_ERROR(sim.Preempt(v, t, requeued));
  return sim.TryPlace(id);
}

void RecordStart(Simulation& sim, size_t id, double t) {
  JobState& s = sim.state(id);
  if (s.started_at >= 0) return;
  const EventJob& j = sim.job(id);
  ++sim.run().started;
  s.started_at = t;
  const double d = t - static_cast<double>(j.submit_s);
  Tally& tally = sim.tally();
  tally.delay.push_back(d);
  tally.group_delay[j.group].push_back(d);
  tally.tier_delay[j.tier].push_back(d);
}

}  // namespace

// Within one pass resources only shrink, so an untyped shape that failed fails again: failed
// shapes are remembered, and jobs asking for more GPU than is free at all are skipped (unless
// preemption may free it). Only the first backfill_window jobs are looked at; a job placed
// leaves the queue, a job preempted in the pass joins it after the pass.
base::Status SchedulingPass(Simulation& sim, double t) {
  auto& queue = sim.queue();
  const Cluster& cluster = sim.cluster();
  std::vector<size_t> requeued;
  size_t looked = 0;
  std::set<Shape> failed;
  const auto window = static_cast<size_t>(sim.options().backfill_window);
  for (auto next = queue.begin(); next != queue.end() && looked < window;) {
    const auto here = next++;
    const size_t id = std::get<2>(*here);
    ++looked;
    const EventJob& j = sim.job(id);
    const int64_t demand = sim.DemandOf(id);
    const Shape shape = ShapeOf(j);
    const bool guaranteed = sim.quota().Guaranteed(j.group, j.tier, demand, cluster);
    const bool typed = !j.members.empty() && !j.members[0].gpu_models.empty();
    bool placed = false;
    if (demand <= cluster.total_gpu_milli() - cluster.used_gpu_milli() &&
        (typed || !failed.count(shape))) {
      SEEDANCE_ASSIGN_OR_RETURN(placed, sim.TryPlace(id));
      if (!placed && !typed) failed.insert(shape);
    }
    if (!placed && guaranteed) {
      SEEDANCE_ASSIGN_OR_RETURN(placed, PreemptFor(sim, id, t, requeued));
    }
    if (!placed) continue;
    queue.erase(here);
    RecordStart(sim, id, t);
    sim.BeginSegment(id, t, guaranteed);
  }
  for (size_t v : requeued) queue.insert(sim.KeyOf(v));
  return base::OkStatus();
}

}  // namespace seedance::sched
