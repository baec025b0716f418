// Binding helpers (feature TOPO-2): put the calling thread on one NUMA node's
// CPUs and memory, or next to a GPU. Python: seedance.topo.bind_to_numa_node
// and seedance.torch.numa_worker_init_fn (a DataLoader worker_init_fn).
#pragma once

#include <vector>

#include "seedance/base/status.h"
#include "seedance/port/numa_bind.h"
#include "seedance/topo/topology.h"

namespace seedance::topo {

// Binds the calling thread to node `node`'s CPUs and (policy) its memory.
// NotFound for a node the topology does not have.
base::Status BindToNumaNode(const Topology& topology, int node,
                            port::MemoryPolicy policy = port::MemoryPolicy::kPreferred);

// The CPUs local to GPU `gpu` (its local_cpulist, else its node's CPUs) and
// its NUMA node (-1 when unknown). NotFound for a GPU index out of range.
struct GpuPlacement {
  std::vector<int> cpus;
  int numa_node = -1;
};
base::StatusOr<GpuPlacement> PlacementNearGpu(const Topology& topology, int gpu);

}  // namespace seedance::topo
