// The labels the node agent writes on its Node from this machine's discovery (feature SCHED-8,
// TOPO-1), so that nobody writes them by hand — the extender's topology plugins read them
// (k8s/objects.h):
//   seedance.io/gpu-model   NVML's name without the "NVIDIA " prefix, spaces as '-'
//                           ("NVIDIA A100-SXM4-80GB" -> "A100-SXM4-80GB"), as the Alibaba trace
//                           and the pods' seedance.io/gpu-spec name models;
//   seedance.io/numa-nodes  the NUMA nodes the GPUs sit on (1 when unknown);
//   seedance.io/rdma-nics   RDMA NICs (InfiniBand or RoCE) from sysfs.
// A node without GPUs gets the labels removed. The annotation seedance.io/unhealthy-gpus lists
// the GPUs the agent reports unhealthy (gpu_health.h).
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/node/gpu_shares.h"
#include "seedance/topo/topology.h"

namespace seedance::node {

// A label value: at most 63 characters of [A-Za-z0-9._-], starting and ending alphanumeric.
std::string GpuModelLabel(std::string_view nvml_name);

// Label -> value, or nullopt for a label to remove.
std::map<std::string, std::optional<std::string>> NodeLabels(const topo::Topology& topology,
                                                             const std::vector<AgentGpu>& gpus);

// The merge patch of the Node: the labels and the unhealthy-GPU annotation (removed when none).
std::string NodePatch(const std::map<std::string, std::optional<std::string>>& labels,
                      const std::vector<AgentGpu>& gpus);

}  // namespace seedance::node
