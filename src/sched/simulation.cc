#include "src/sched/simulation.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace seedance::sched {
namespace {

// Whether every member fits on `trial` (first fit, members bound as they go).
bool FitsGreedily(Cluster trial, const std::vector<Pod>& members) {
  for (const Pod& p : members) {
    bool placed = false;
    for (int n = 0; n < static_cast<int>(trial.nodes().size()) && !placed; ++n) {
      if (auto g = trial.Place(p, n)) {
        trial.Bind(p, n, *g);
        placed = true;
      }
    }
    if (!placed) return false;
  }
  return true;
}

SchedulerOptions SchedulerOptionsOf(const EventRunOptions& o) {
  SchedulerOptions s;
  s.ties = o.ties;
  s.seed = o.seed;
  s.score_cache = true;  // exact; used where the policy and the plugins allow
  return s;
}

// Jobs in submit order, equal submit times by id; member pods named by job index and member
// (the Scheduler knows a pod by its name, and a trace may repeat one).
std::vector<EventJob> Sorted(std::vector<EventJob> jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const EventJob& a, const EventJob& b) {
    return std::tie(a.submit_s, a.id) < std::tie(b.submit_s, b.id);
  });
  for (size_t i = 0; i < jobs.size(); ++i) {
    for (size_t m = 0; m < jobs[i].members.size(); ++m) {
      jobs[i].members[m].name = std::to_string(i) + "/" + std::to_string(m);
    }
  }
  return jobs;
}

}  // namespace

Simulation::Simulation(const std::vector<Node>& nodes, std::vector<EventJob> jobs,
                       const EventRunOptions& options, std::unique_ptr<Policy> policy)
    : nodes_(nodes),
      o_(options),
      jobs_(Sorted(std::move(jobs))),
      st_(jobs_.size()),
      sched_(std::move(policy), nodes, SchedulerOptionsOf(options)),
      spot_(nodes,
            SpotOptions{options.spot_interruptions_per_day, options.spot_recovery_s, options.seed}),
      quota_(nodes, QuotaOptions{options.quotas, options.tiers, options.max_retries}),
      empty_cluster_(nodes) {
  // Without spot nodes the spot filter passes every node: leave it out, so that incremental
  // scoring (which no filter may accompany) can choose.
  if (spot_.any()) sched_.framework().AddFilter(MakeSpotFilter(&spot_));
  if (o_.overcommit) {
    sched_.framework().AddFilter(MakeOvercommitFilter(&shares_));
    sched_.framework().AddReserve(MakeOvercommitReserve(&shares_));
  }
  for (size_t i = 0; i < jobs_.size(); ++i) {
    st_[i].remaining = jobs_[i].duration_s;
    st_[i].forever = jobs_[i].duration_s < 0;
    if (IsShare(i)) Book(i, jobs_[i].members[0].gpu_milli);
  }
  job_events = static_cast<int64_t>(jobs_.size());
}

bool Simulation::IsShare(size_t id) const {
  const auto& m = jobs_[id].members;
  return m.size() == 1 && m[0].num_gpu == 1 && m[0].gpu_milli < 1000;
}

int64_t Simulation::DemandOf(size_t id) const {
  int64_t d = 0;
  for (const Pod& p : jobs_[id].members) d += p.gpu_demand_milli();
  return d;
}

void Simulation::Book(size_t id, int milli) {
  // Only a share whose utilization is known is over-committed: nothing says that one of unknown
  // utilization leaves any of its request unused (ShareTable::Booking).
  const ShareProfile p{jobs_[id].tier, jobs_[id].gpu_util_pct, milli};
  shares_.Declare(jobs_[id].members[0].name, id, p);
  jobs_[id].members[0].gpu_milli = o_.overcommit ? ShareTable::Booking(p) : milli;
}

Simulation::QueueKey Simulation::KeyOf(size_t id) const {
  return {QueueRank(jobs_[id].tier, o_.tiers), -jobs_[id].priority, id};
}

base::StatusOr<bool> Simulation::TryPlace(size_t id) {
  auto place_on = [&]() -> base::StatusOr<bool> {
    SEEDANCE_ASSIGN_OR_RETURN(auto at, sched_.ScheduleGang(jobs_[id].members));
    if (!at) return false;
    for (const Pod& p : jobs_[id].members) SEEDANCE_RETURN_IF_ERROR(sched_.Bind(p.name));
    st_[id].at = std::move(*at);
    return true;
  };
  // Cheapest first: spot nodes, then any node.
  auto spot_first = [&]() -> base::StatusOr<bool> {
    if (spot_.any()) {
      spot_.set_spot_only(true);
      base::StatusOr<bool> ok = place_on();
      spot_.set_spot_only(false);
      if (!ok.ok() || *ok) return ok;
    }
    return place_on();
  };
  shares_.set_contention_allowed(false);
  SEEDANCE_ASSIGN_OR_RETURN(bool placed, spot_first());
  if (placed || !o_.overcommit) return placed;
  shares_.set_contention_allowed(true);  // kept: the reserve plugin read it for this placement
  return spot_first();
}

bool Simulation::FitsWithout(size_t id, const std::vector<size_t>& victims) const {
  // Necessary: the GPU left once the victims are gone covers the job's demand.
  int64_t freed = 0;
  for (size_t v : victims) freed += DemandOf(v);
  const Cluster& cluster = sched_.cluster();
  if (cluster.total_gpu_milli() - cluster.used_gpu_milli() + freed < DemandOf(id)) return false;
  // The trial: the states of the nodes the victims free, on top of the cluster (a copy of the
  // whole cluster per prefix tried made preemption searches slow on large clusters).
  std::map<int, NodeState> trial;
  auto at = [&](int n) -> NodeState& {
    return trial.try_emplace(n, cluster.state(n)).first->second;
  };
  for (size_t v : victims) {
    for (size_t m = 0; m < st_[v].at.size(); ++m) {
      const Pod& p = jobs_[v].members[m];
      NodeState& s = at(st_[v].at[m].node);
      s.cpu_left += p.cpu_milli;
      s.mem_left += p.memory_mib;
      for (int g : st_[v].at[m].gpus) s.gpu_left[static_cast<size_t>(g)] += p.gpu_milli;
    }
  }
  auto state_of = [&](int n) -> const NodeState& {
    auto it = trial.find(n);
    return it != trial.end() ? it->second : cluster.state(n);
  };
  const int node_count = static_cast<int>(nodes_.size());
  if (!o_.overcommit || !IsShare(id)) {
    // First fit, members bound on the trial as they go.
    for (const Pod& p : jobs_[id].members) {
      bool placed = false;
      for (int n = 0; n < node_count && !placed; ++n) {
        if (auto g = cluster.PlaceOn(p, n, state_of(n))) {
          NodeState& s = at(n);
          s.cpu_left -= p.cpu_milli;
          s.mem_left -= p.memory_mib;
          for (int k : *g) s.gpu_left[static_cast<size_t>(k)] -= p.gpu_milli;
          placed = true;
        }
      }
      if (!placed) return false;
    }
    return true;
  }
  // A share also needs a GPU whose contention stays within every margin once the victims are
  // gone.
  const Pod& pod = jobs_[id].members[0];
  for (int n = 0; n < node_count; ++n) {
    if (spot_.down(static_cast<size_t>(n))) continue;
    for (int g = 0; g < nodes_[static_cast<size_t>(n)].gpu_count; ++g) {
      if (shares_.MarginOk(pod, id, state_of(n), n, g, true, victims)) return true;
    }
  }
  return false;
}

bool Simulation::FitsEmpty(size_t id) {
  const EventJob& j = jobs_[id];
  if (j.members.empty() || !j.members[0].gpu_models.empty()) {
    return FitsGreedily(empty_cluster_, j.members);
  }
  std::vector<std::tuple<int64_t, int64_t, int, int>> shape;
  for (const Pod& p : j.members)
    shape.emplace_back(p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli);
  auto [it, inserted] = shape_fits_.try_emplace(std::move(shape), false);
  if (inserted) it->second = FitsGreedily(empty_cluster_, j.members);
  return it->second;
}

void Simulation::Advance(size_t id, double t) {
  JobState& s = st_[id];
  const double dt = t - s.mark;
  if (o_.overcommit && IsShare(id) && dt > 0) {
    run_.share_run_s += dt;
    tally_.slowdown_area += dt / s.rate;
    auto& [ran, beyond] = tally_.tier_share_s[jobs_[id].tier];
    ran += dt;
    if (s.rate < 1) run_.slowed_s += dt;
    if (1 / s.rate > OvercommitMargin(jobs_[id].tier) + 1e-9) {
      run_.above_margin_s += dt;
      beyond += dt;
    }
  }
  // Clamped: rounding must not turn a finishing job into one that never ends.
  if (!s.forever) s.remaining = std::max(0.0, s.remaining - dt * s.rate);
  s.mark = t;
}

void Simulation::PushCompletion(size_t id, double t) {
  const JobState& s = st_[id];
  if (s.forever) return;
  events_.Push(t + s.remaining / s.rate, EventKind::kCompletion, id, s.epoch);
  ++job_events;
}

void Simulation::Reshare(GpuSlot gpu, double t) {
  const std::vector<size_t>& there = shares_.On(gpu);
  const double speed = shares_.Speed(gpu);
  for (size_t j : there) {
    Advance(j, t);
    st_[j].rate = speed;
    ++st_[j].epoch;
    PushCompletion(j, t);
  }
}

void Simulation::BeginSegment(size_t id, double t, bool guaranteed) {
  JobState& s = st_[id];
  s.segment_start = t;
  s.borrowing = quota_.enabled() && !guaranteed;
  quota_.Start(jobs_[id].group, DemandOf(id));
  running_.push_back(id);
  s.mark = t;
  s.seg_work = s.remaining;
  s.rate = 1;
  if (o_.overcommit && IsShare(id)) {
    // The reserve plugin put the share on a GPU within the margins.
    shares_.Join(id, GpuOf(id));
    Reshare(GpuOf(id), t);  // pushes its completion too
  } else {
    PushCompletion(id, t);
  }
  const EventJob& j = jobs_[id];
  if (o_.consolidate && !s.consolidated && j.gpu_util_pct >= 0 &&
      j.gpu_util_pct < o_.consolidate_below_pct) {
    events_.Push(t + o_.consolidate_after_s, EventKind::kConsolidationDue, id, s.epoch);
  }
}

base::Status Simulation::Stop(size_t id, double t) {
  Advance(id, t);
  JobState& s = st_[id];
  if (o_.overcommit && IsShare(id)) {
    shares_.Leave(id, GpuOf(id));
    Reshare(GpuOf(id), t);
  }
  const EventJob& j = jobs_[id];
  for (const Pod& p : j.members) SEEDANCE_RETURN_IF_ERROR(sched_.RemovePod(p.name));
  const double hours = (t - s.segment_start) / 3600.0;
  for (size_t m = 0; m < s.at.size(); ++m) {
    const double gpu_h = static_cast<double>(j.members[m].gpu_demand_milli()) / 1000.0 * hours;
    const bool spot = nodes_[static_cast<size_t>(s.at[m].node)].spot;
    run_.gpu_hours += gpu_h;
    if (spot) run_.spot_gpu_hours += gpu_h;
    run_.cost_on_demand_gpu_hours += spot ? gpu_h * o_.spot_price_ratio : gpu_h;
  }
  run_.consolidation_freed_gpu_hours += s.shrunk_by / 1000.0 * hours;
  quota_.Stop(j.group, DemandOf(id));
  running_.erase(std::find(running_.begin(), running_.end(), id));
  s.segment_start = -1;
  s.at.clear();
  return base::OkStatus();
}

base::Status Simulation::Preempt(size_t v, double t, std::vector<size_t>& requeue) {
  Advance(v, t);
  JobState& s = st_[v];
  // Work done in this run (wall time when the job has no end).
  const double ran = s.forever ? t - s.segment_start : s.seg_work - s.remaining;
  const double kept_work =
      o_.checkpoint_interval_s > 0
          ? std::floor(ran / o_.checkpoint_interval_s) * o_.checkpoint_interval_s
          : 0;
  run_.lost_gpu_hours += static_cast<double>(DemandOf(v)) / 1000.0 * (ran - kept_work) / 3600.0;
  if (!s.forever) s.remaining = s.seg_work - kept_work + o_.restore_cost_s;
  SEEDANCE_RETURN_IF_ERROR(Stop(v, t));
  ++s.epoch;
  ++run_.preemptions;
  ++tally_.tier_preempted[jobs_[v].tier];
  if (++s.preempted == o_.max_retries) ++run_.retry_limited;
  requeue.push_back(v);
  return base::OkStatus();
}

base::StatusOr<bool> Simulation::CheckpointOut(size_t id, double t) {
  const bool guaranteed = !st_[id].borrowing;
  SEEDANCE_RETURN_IF_ERROR(Stop(id, t));  // brings remaining to t
  ++st_[id].epoch;
  if (!st_[id].forever) st_[id].remaining += o_.restore_cost_s;
  return guaranteed;
}

base::Status Simulation::PlaceAt(size_t id, int node, int gpu) {
  SEEDANCE_RETURN_IF_ERROR(sched_.AddPod(jobs_[id].members[0], node, {gpu}));
  st_[id].at = {Candidate{node, 0, {gpu}}};
  return base::OkStatus();
}

}  // namespace seedance::sched
