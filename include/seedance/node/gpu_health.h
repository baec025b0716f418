// The node agent's view of its GPUs and their health (feature SCHED-8, the node half): the GPUs
// NVML (or a fixture) reads, with the NUMA node topology discovery gives each, and the rule that
// marks one unhealthy — as kubelet's ListAndWatch then reports, and the extender reads from the
// Node's `seedance.io/unhealthy-gpus` annotation.
//
// The rule, after NVIDIA's device plugin:
//   - a critical XID event marks the GPU unhealthy, except the XIDs an application causes on its
//     own (13 graphics engine exception, 31 memory page fault, 43 a stopped channel, 45 preemptive
//     cleanup, 68 video processor exception, 109 context switch timeout);
//   - uncorrected ECC errors above the count at the agent's start mark it unhealthy;
//   - a GPU NVML no longer reports is unhealthy until it is reported again.
// XID and ECC marks stay until the agent restarts (the GPU needs a reset and a drain).
//
// Thread safety: a GpuHealth is one caller's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "seedance/k8s/objects.h"
#include "seedance/node/gpu_shares.h"
#include "seedance/port/nvml.h"
#include "seedance/topo/topology.h"

namespace seedance::node {

using k8s::kUnhealthyGpusAnnotation;

// The GPUs of one reading, in index order, with their NUMA nodes from `topology` (matched by PCI
// address; -1 where it has no match).
std::vector<AgentGpu> GpusFromReadings(const std::vector<port::NvmlReading>& readings,
                                       const topo::Topology& topology);

bool IsApplicationXid(uint64_t xid);

class GpuHealth {
 public:
  // `gpus` is the agent's list, fixed at start; ECC baselines come from the first Update.
  explicit GpuHealth(std::vector<AgentGpu> gpus) : gpus_(std::move(gpus)) {}
  // Applies a new reading; true when any GPU's health changed.
  bool Update(const std::vector<port::NvmlReading>& readings);
  const std::vector<AgentGpu>& gpus() const { return gpus_; }

 private:
  std::vector<AgentGpu> gpus_;
  std::map<std::string, uint64_t> ecc_baseline_;  // by GPU key
  std::map<std::string, std::string> sticky_;     // GPU key -> why (XID, ECC)
  bool first_ = true;
};

// "2,5": the indices of the unhealthy GPUs ("" when all are healthy).
std::string UnhealthyGpuList(const std::vector<AgentGpu>& gpus);

}  // namespace seedance::node
