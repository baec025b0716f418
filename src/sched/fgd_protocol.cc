#include "seedance/sched/fgd_protocol.h"

#include <algorithm>
#include <random>
#include <string>

#include "seedance/base/env.h"
#include "seedance/sched/cluster.h"
#include "seedance/sched/policy.h"
#include "seedance/sched/scheduler.h"
#include "src/sched/fragmentation.h"

namespace seedance::sched {

base::StatusOr<FgdRun> RunFgdProtocol(const std::vector<Node>& nodes, const std::vector<Pod>& pods,
                                      const FgdRunOptions& o) {
  const int64_t start = base::Env::Default()->NowMonotonicNanos();
  if (pods.empty()) return base::InvalidArgumentError("no pods");
  SEEDANCE_ASSIGN_OR_RETURN(auto policy, MakePolicy(o.policy, pods));
  SchedulerOptions options;
  options.ties = o.ties;
  options.seed = o.seed;
  options.score_cache = true;  // exact; used where the policy allows (score_cache.h)
  Scheduler scheduler(std::move(policy), nodes, options);
  const Cluster& cluster = scheduler.cluster();
  if (cluster.total_gpu_milli() == 0) return base::InvalidArgumentError("the cluster has no GPUs");
  // The arrival order is drawn from the scheduler's own stream, before its first cycle.
  std::mt19937_64& rng = scheduler.rng();

  // Arrival order: by name, shuffled, then tuned to `tune` x capacity.
  std::vector<const Pod*> order;
  order.reserve(pods.size());
  for (const Pod& p : pods) order.push_back(&p);
  std::sort(order.begin(), order.end(),
            [](const Pod* a, const Pod* b) { return a->name < b->name; });
  std::shuffle(order.begin(), order.end(), rng);
  const double target = o.tune * static_cast<double>(cluster.total_gpu_milli());
  double requested = 0;
  for (const Pod* p : order) requested += static_cast<double>(p->gpu_demand_milli());
  while (requested < target) {
    const Pod* p = &pods[rng() % pods.size()];
    order.push_back(p);
    requested += static_cast<double>(p->gpu_demand_milli());
  }
  while (requested > target && !order.empty()) {
    const size_t i = rng() % order.size();
    const double d = static_cast<double>(order[i]->gpu_demand_milli());
    if (requested - d < target) break;
    requested -= d;
    order.erase(order.begin() + static_cast<int64_t>(i));
  }

  FgdRun run;
  run.alloc_pct_at.assign(9, 0.0);
  run.frag_pct_at.assign(9, 0.0);
  if (o.record_nodes) run.node_gpu_used_at.assign(9, {});
  const double capacity = static_cast<double>(cluster.total_gpu_milli());
  const FragmentationCache frag(TypicalPods(pods));
  auto record = [&](size_t mark) {
    run.alloc_pct_at[mark] = static_cast<double>(cluster.used_gpu_milli()) * 100 / capacity;
    double f = 0;
    for (int n = 0; n < static_cast<int>(nodes.size()); ++n) f += frag.Current(cluster, n);
    run.frag_pct_at[mark] = f * 100 / capacity;
    if (o.record_nodes) {
      std::vector<float> used(nodes.size(), 0.0f);
      for (size_t n = 0; n < nodes.size(); ++n) {
        const int gpus = nodes[n].gpu_count;
        if (gpus > 0) {
          used[n] = static_cast<float>(
              1.0 - static_cast<double>(cluster.state(static_cast<int>(n)).gpu_left_total()) /
                        (1000.0 * gpus));
        }
      }
      run.node_gpu_used_at[mark] = std::move(used);
    }
  };
  double arrived = 0;
  size_t next_mark = 0;  // 50 + 10 * next_mark
  for (const Pod* p : order) {
    const double arrived_after = arrived + static_cast<double>(p->gpu_demand_milli());
    // Marks passed by this pod's arrival take the allocation before it.
    while (next_mark < 9 && arrived_after * 100 / capacity > 50.0 + 10.0 * next_mark) {
      record(next_mark++);
    }
    arrived = arrived_after;
    ++run.pods;
    // The tuning step repeats pods; the scheduler knows each copy by its own name.
    Pod copy = *p;
    copy.name = std::to_string(run.pods);
    SEEDANCE_ASSIGN_OR_RETURN(const auto at, scheduler.Schedule(copy));
    if (o.record_arrivals) {
      FgdArrival a;
      a.pod = static_cast<int>(p - pods.data());
      if (at) {
        a.node = at->node;
        a.gpus = at->gpus;
      }
      run.arrivals.push_back(std::move(a));
    }
    if (!at) {
      ++run.failed;
      continue;
    }
    SEEDANCE_RETURN_IF_ERROR(scheduler.Bind(copy.name));
    ++run.scheduled;
    if (o.check_invariants) SEEDANCE_RETURN_IF_ERROR(scheduler.Check());
  }
  while (next_mark < 9) record(next_mark++);
  run.unallocated_pct_at_130 = 100 - run.alloc_pct_at[8];
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    for (int left : cluster.state(n).gpu_left) {
      if (left == 1000) {
        run.idle_whole_gpu_pct += 100.0 * 1000 / capacity;
      } else if (left > 0) {
        run.idle_partial_gpu_pct += 100.0 * left / capacity;
        ++run.remnant_gpus[left];
      }
    }
  }
  run.runtime_ms = static_cast<double>(base::Env::Default()->NowMonotonicNanos() - start) / 1e6;
  return run;
}

}  // namespace seedance::sched
