// NCCL settings from a topology (feature COMM-5): `seedancectl comm advise`.
//
// The topology comes from a YAML file or from the node's topology (topo::Topology, the one
// reader of sysfs, NVML and saved `nvidia-smi topo -m` printouts; FromNodeTopology): its NICs
// (InfiniBand, RoCE, Ethernet), NVIDIA GPUs, NVLink, and how close each GPU's nearest RDMA NIC
// is.
//
// Each advice is (variable, value, reason); the rules, with the NCCL
// documentation they rest on, are listed in docs/design/comm.md. Only
// settings that change NCCL's behaviour for this topology are given.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/topo/topology.h"

namespace seedance::comm {

struct Nic {
  std::string name;
  std::string type;  // "infiniband", "roce", "ethernet"
  double speed_gbits_per_s = 0;
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

// topology: {nodes, gpus_per_node, nvlink, gpu_nic_affinity, nics: [{name, type, speed_gbits_per_s,
// up, numa_node}]}
base::StatusOr<Topology> ParseTopologyYaml(std::string_view text, const std::string& file);
// One node's topology in the advisor's terms (nodes = 1, source "detected"): its NICs in the
// node topology's order (RDMA devices, then interfaces that are not an RDMA device's; wireless
// ones left out), the NVIDIA GPUs, NVLink when any pair has links, and gpu_nic_affinity from
// the PCI relation of each NVIDIA GPU to its nearest RDMA NIC whose port is up, the farthest
// over the GPUs: PIX or PXB for every GPU -> same-pcie-switch; at worst PHB or NODE ->
// same-numa; SYS -> cross-numa; no such GPU or NIC -> unknown.
Topology FromNodeTopology(const topo::Topology& node);

struct NcclAdvice {
  std::string variable;
  std::string value;
  std::string reason;
};

std::vector<NcclAdvice> AdviseNccl(const Topology& topology);

base::Report TopologyToReport(const Topology& t);
base::Report AdviceToReport(const std::vector<NcclAdvice>& advice);

// What `seedancectl comm advise` is asked: a topology file's text (named `topology_file` in
// errors), or else this node as topo reads it (under `root`, NVLink from `nvlink_from`) times
// `nodes`.
struct AdviseRequest {
  std::string topology_yaml;
  std::string topology_file;  // non-empty: use topology_yaml
  std::string root;           // "" = "/"
  std::string nvlink_from;
  int nodes = 1;
};
// {topology, advice}: the report `comm advise -o json` prints and seedance.comm.advise returns.
base::StatusOr<base::Report> AdviseReport(const AdviseRequest& request);

}  // namespace seedance::comm
