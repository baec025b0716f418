// NCCL settings from a topology (SPEC COMM-5): `seedancectl comm advise`.
//
// The topology comes from a YAML file or from the machine (through Env, so
// tests use fake /sys trees): InfiniBand/RoCE HCAs under /sys/class/infiniband
// (link layer, state, rate), network interfaces under /sys/class/net (speed,
// operstate; virtual ones skipped), NVIDIA GPUs on the PCI bus. NVLink cannot
// be seen without NVML and must come from the file.
//
// Each advice is (variable, value, reason); the rules, with the NCCL
// documentation they rest on, are listed in docs/design/comm.md. Only
// settings that change NCCL's behaviour for this topology are given.
//
// Thread safety: pure functions (detection reads through the Env passed in).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::comm {

struct Nic {
  std::string name;
  std::string type;  // "infiniband", "roce", "ethernet"
  double speed_gbps = 0;
  bool up = true;
  int numa_node = -1;
};

struct Topology {
  int nodes = 1;
  int gpus_per_node = 0;
  bool nvlink = false;
  std::string gpu_nic_affinity = "unknown";  // same-pcie-switch, same-numa, cross-numa, unknown
  std::vector<Nic> nics;
  std::string source;  // the file, or "detected"
};

// topology: {nodes, gpus_per_node, nvlink, gpu_nic_affinity, nics: [{name, type, speed_gbps, up,
// numa_node}]}
base::StatusOr<Topology> ParseTopologyYaml(std::string_view text, const std::string& file);
Topology DetectTopology(base::Env& env);

struct NcclAdvice {
  std::string variable;
  std::string value;
  std::string reason;
};

std::vector<NcclAdvice> AdviseNccl(const Topology& topology);

base::Report TopologyToReport(const Topology& t);
base::Report AdviceToReport(const std::vector<NcclAdvice>& advice);

}  // namespace seedance::comm
