#include "seedance/topo/bind.h"

namespace seedance::topo {

base::Status BindToNumaNode(const Topology& t, int node, port::MemoryPolicy policy) {
  for (const auto& n : t.nodes) {
    if (n.id != node) continue;
    if (n.cpus.empty()) {
      return base::FailedPreconditionError("NUMA node " + std::to_string(node) +
                                           " has no CPUs (a memory-only node)");
    }
    return port::BindCallingThread(n.cpus, node, policy);
  }
  return base::NotFoundError("no NUMA node " + std::to_string(node) + " on this machine");
}

base::StatusOr<GpuPlacement> PlacementNearGpu(const Topology& t, int gpu) {
  if (gpu < 0 || gpu >= static_cast<int>(t.gpus.size())) {
    return base::NotFoundError("no GPU " + std::to_string(gpu) + " (the machine has " +
                               std::to_string(t.gpus.size()) + ")");
  }
  const Gpu& g = t.gpus[gpu];
  GpuPlacement p;
  p.numa_node = g.numa_node;
  p.cpus = g.local_cpus;
  if (p.cpus.empty()) {
    for (const auto& n : t.nodes) {
      if (n.id == g.numa_node) p.cpus = n.cpus;
    }
  }
  if (p.cpus.empty()) p.cpus = t.online_cpus;
  return p;
}

}  // namespace seedance::topo
