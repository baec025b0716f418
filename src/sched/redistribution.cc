// Load redistribution between nodes (event_sim.h): a post-pass rebalancer of the event simulator.
#include <algorithm>
#include <vector>

#include "src/sched/simulation.h"

namespace seedance::sched {
namespace {

// Each node's load: the busy milli-GPU of its shares over its GPU capacity.
std::vector<double> NodeLoads(Simulation& sim) {
  const auto& nodes = sim.nodes();
  std::vector<double> load(nodes.size(), 0);
  for (const auto& [gpu, there] : sim.shares().gpus()) {
    if (!there.empty()) load[static_cast<size_t>(gpu.first)] += sim.shares().GpuBusy(gpu);
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    const int gpus = nodes[n].gpu_count;
    load[n] = gpus ? load[n] / (1000.0 * gpus) : 0;
  }
  return load;
}

}  // namespace

// For each contended GPU, hottest first, the share with the most busy time there moves to the
// least loaded eligible node with a GPU where it runs without contention.
base::Status Redistributor::Pass(Simulation& sim, double t) {
  const EventRunOptions& o = sim.options();
  const auto& nodes = sim.nodes();
  ShareTable& shares = sim.shares();
  std::vector<double> load = NodeLoads(sim);
  const double hottest =
      load.empty() ? 0 : std::max(0.0, *std::max_element(load.begin(), load.end()));
  std::vector<std::pair<double, GpuSlot>> hot;
  for (const auto& [gpu, there] : shares.gpus()) {
    if (there.size() > 1 && shares.GpuBusy(gpu) > 1000) hot.push_back({shares.GpuBusy(gpu), gpu});
  }
  std::sort(hot.rbegin(), hot.rend());
  for (const auto& [busy, gpu] : hot) {
    const std::vector<size_t>& there = shares.On(gpu);
    if (shares.GpuBusy(gpu) <= 1000 || there.size() < 2) continue;  // relieved by an earlier move
    const size_t mover = *std::max_element(there.begin(), there.end(), [&](size_t a, size_t b) {
      return shares.Busy(a) < shares.Busy(b);
    });
    const int from = gpu.first;
    const Pod& pod = sim.job(mover).members[0];
    const auto ufrom = static_cast<size_t>(from);
    int best = -1, best_gpu = -1;
    for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
      const auto un = static_cast<size_t>(n);
      if (n == from || sim.spot().down(un) ||
          load[un] > load[ufrom] - o.redistribute_gap * hottest) {
        continue;
      }
      if (auto it = last_exchange_.find(std::minmax(from, n));
          it != last_exchange_.end() && t - it->second < o.redistribute_cooldown_s) {
        continue;
      }
      if (best >= 0 && load[un] >= load[static_cast<size_t>(best)]) continue;
      for (int g = 0; g < nodes[un].gpu_count; ++g) {
        if (shares.MarginOk(pod, mover, sim.cluster(), n, g, false)) {  // runs there uncontended
          best = n;
          best_gpu = g;
          break;
        }
      }
    }
    if (best < 0) continue;
    SEEDANCE_ASSIGN_OR_RETURN(const bool guaranteed, sim.CheckpointOut(mover, t));
    SEEDANCE_RETURN_IF_ERROR(sim.PlaceAt(mover, best, best_gpu));
    last_exchange_[std::minmax(from, best)] = t;
    const double busy_gpus = shares.Busy(mover) / 1000.0;
    load[ufrom] -= busy_gpus / nodes[ufrom].gpu_count;
    load[static_cast<size_t>(best)] += busy_gpus / nodes[static_cast<size_t>(best)].gpu_count;
    ++sim.run().redistributions;
    sim.BeginSegment(mover, t, guaranteed);
  }
  return base::OkStatus();
}

}  // namespace seedance::sched
