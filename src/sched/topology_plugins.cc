#include "seedance/sched/topology_plugins.h"

#include <algorithm>
#include <vector>

namespace seedance::sched {

int NumaDomainOf(const Node& node, int gpu) {
  const int domains = std::clamp(node.numa_nodes, 1, std::max(1, node.gpu_count));
  return node.gpu_count <= 0 ? 0 : gpu * domains / node.gpu_count;
}

bool TalksAcrossNodes(const Pod& pod) { return pod.rdma || pod.gang > 1; }

base::Status NumaAwareReserve::Reserve(Cluster& cluster, const Pod& pod, Candidate& at) {
  if (!enabled_ || pod.num_gpu < 2 || pod.gpu_milli < 1000) return base::OkStatus();
  const Node& node = cluster.nodes()[static_cast<size_t>(at.node)];
  const int domains = std::clamp(node.numa_nodes, 1, std::max(1, node.gpu_count));
  if (domains < 2) return base::OkStatus();
  const int first = NumaDomainOf(node, at.gpus.front());
  if (std::all_of(at.gpus.begin(), at.gpus.end(),
                  [&](int g) { return NumaDomainOf(node, g) == first; })) {
    return base::OkStatus();
  }
  cluster.Unbind(pod, at.node, at.gpus);  // the free GPUs as they were before the pod
  const NodeState& s = cluster.state(at.node);
  std::vector<std::vector<int>> free(static_cast<size_t>(domains));
  for (int g = 0; g < node.gpu_count; ++g) {
    if (s.gpu_left[static_cast<size_t>(g)] >= 1000) {
      free[static_cast<size_t>(NumaDomainOf(node, g))].push_back(g);
    }
  }
  int best = -1;
  for (int d = 0; d < domains; ++d) {
    const size_t n = free[static_cast<size_t>(d)].size();
    if (n < static_cast<size_t>(pod.num_gpu)) continue;
    if (best < 0 || n < free[static_cast<size_t>(best)].size()) best = d;
  }
  if (best >= 0) {
    const auto& in = free[static_cast<size_t>(best)];
    at.gpus.assign(in.begin(), in.begin() + pod.num_gpu);
  }
  cluster.Bind(pod, at.node, at.gpus);
  return base::OkStatus();
}

bool RdmaFilter::Filter(const Cluster& cluster, const Pod& pod, int node) const {
  return !enabled_ || !TalksAcrossNodes(pod) || cluster.nodes()[static_cast<size_t>(node)].nics > 0;
}

}  // namespace seedance::sched
