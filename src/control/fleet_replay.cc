#include "seedance/control/fleet_replay.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>

#include "seedance/base/quantile.h"

namespace seedance::control {
namespace {

struct Running {
  double end_s;
  int32_t gpus;
  bool operator>(const Running& o) const { return end_s > o.end_s; }
};

// Of sorted waits; no job waited: 0 s.
double Quantile(const std::vector<double>& sorted, double q) {
  return sorted.empty() ? 0.0 : base::QuantileOfSorted(sorted, q);
}

}  // namespace

FleetResult ReplayFleet(const std::vector<FleetJob>& input, const FleetSettings& s,
                        const FleetScaler& scaler) {
  FleetResult r;
  const int64_t largest = int64_t{s.max_nodes} * s.gpus_per_node;
  std::vector<FleetJob> jobs;
  for (const FleetJob& j : input) {
    if (j.gpus > largest) {
      ++r.jobs_too_large;
    } else {
      jobs.push_back(j);
    }
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const FleetJob& a, const FleetJob& b) { return a.submit_s < b.submit_s; });
  r.jobs = static_cast<int64_t>(jobs.size());
  if (jobs.empty()) return r;

  std::priority_queue<Running, std::vector<Running>, std::greater<>> running;
  std::deque<size_t> queue;    // indices into jobs, arrival order
  std::deque<double> booting;  // ready times, ascending
  int32_t ready = std::clamp(s.initial_nodes, s.min_nodes, s.max_nodes);
  int64_t busy = 0;
  size_t next = 0;
  int last_direction = 0;
  double node_ticks = 0;
  int64_t ticks = 0;
  std::vector<double> waits;
  waits.reserve(jobs.size());
  const double start = std::floor(jobs.front().submit_s / s.tick_s) * s.tick_s;
  double last_end = start;
  for (double t = start;; t += s.tick_s) {
    while (!running.empty() && running.top().end_s <= t) {
      busy -= running.top().gpus;
      running.pop();
    }
    while (!booting.empty() && booting.front() <= t) {
      booting.pop_front();
      ++ready;
    }
    while (next < jobs.size() && jobs[next].submit_s <= t) queue.push_back(next++);
    int64_t free = int64_t{ready} * s.gpus_per_node - busy;
    for (auto it = queue.begin(); it != queue.end() && free > 0;) {
      const FleetJob& j = jobs[*it];
      if (j.gpus <= free) {
        free -= j.gpus;
        busy += j.gpus;
        running.push({t + j.duration_s, j.gpus});
        last_end = std::max(last_end, t + j.duration_s);
        waits.push_back(t - j.submit_s);
        it = queue.erase(it);
      } else {
        ++it;
      }
    }
    if (next == jobs.size() && queue.empty() && running.empty()) break;

    FleetReading reading;
    const int64_t ready_gpus = int64_t{ready} * s.gpus_per_node;
    reading.allocated_share =
        ready_gpus > 0 ? static_cast<double>(busy) / static_cast<double>(ready_gpus) : 1.0;
    reading.queued_jobs = static_cast<int64_t>(queue.size());
    for (size_t i : queue) reading.queued_gpus += jobs[i].gpus;
    const auto current = static_cast<int32_t>(ready + static_cast<int32_t>(booting.size()));
    const int32_t desired = std::clamp(scaler(t, current, reading), s.min_nodes, s.max_nodes);
    int direction = 0;
    if (desired > current) {
      for (int32_t i = current; i < desired; ++i) booting.push_back(t + s.restart_s);
      direction = 1;
    } else if (desired < current) {
      int32_t remove = current - desired;
      while (remove > 0 && !booting.empty()) {
        booting.pop_back();
        --remove;
      }
      const int64_t idle_nodes = (int64_t{ready} * s.gpus_per_node - busy) / s.gpus_per_node;
      const auto idle = static_cast<int32_t>(std::min<int64_t>(idle_nodes, remove));
      ready -= std::min(idle, ready - s.min_nodes);
      if (ready + static_cast<int32_t>(booting.size()) < current) direction = -1;
    }
    if (direction != 0) {
      ++r.scale_actions;
      if (last_direction != 0 && direction != last_direction) ++r.reversals;
      last_direction = direction;
    }
    const auto nodes = static_cast<double>(ready + static_cast<int32_t>(booting.size()));
    node_ticks += nodes;
    r.booting_gpu_hours += static_cast<double>(booting.size()) * s.gpus_per_node * s.tick_s / 3600;
    r.peak_nodes = std::max(r.peak_nodes, ready + static_cast<int32_t>(booting.size()));
    ++ticks;
  }
  r.gpu_hours = node_ticks * s.gpus_per_node * s.tick_s / 3600;
  r.mean_nodes = ticks > 0 ? node_ticks / static_cast<double>(ticks) : 0;
  std::sort(waits.begin(), waits.end());
  r.queue_p50_s = Quantile(waits, 0.5);
  r.queue_p95_s = Quantile(waits, 0.95);
  r.queue_max_s = waits.empty() ? 0 : waits.back();
  r.makespan_s = last_end - jobs.front().submit_s;
  return r;
}

base::Report FleetResultToReport(const FleetResult& r) {
  base::Report out = base::Report::object();
  out["jobs"] = r.jobs;
  out["jobs_too_large"] = r.jobs_too_large;
  out["gpu_hours"] = r.gpu_hours;
  out["booting_gpu_hours"] = r.booting_gpu_hours;
  out["queue_p50_s"] = r.queue_p50_s;
  out["queue_p95_s"] = r.queue_p95_s;
  out["queue_max_s"] = r.queue_max_s;
  out["scale_actions"] = r.scale_actions;
  out["reversals"] = r.reversals;
  out["mean_nodes"] = r.mean_nodes;
  out["peak_nodes"] = r.peak_nodes;
  out["makespan_s"] = r.makespan_s;
  return out;
}

}  // namespace seedance::control
