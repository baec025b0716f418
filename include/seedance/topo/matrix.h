// The device connection matrix of `seedancectl topo show`, in the legend of
// `nvidia-smi topo -m`:
//
//   X     the device itself
//   NV#   a bonded set of # NVLinks
//   PIX   at most one PCIe switch between the two (same switch, or a bridge)
//   PXB   several PCIe bridges, no host bridge
//   PHB   through one PCIe host bridge (same root complex, different root ports)
//   NODE  through the interconnect between host bridges of one NUMA node
//   SYS   through the interconnect between NUMA nodes (QPI/UPI, Infinity Fabric)
//
// Devices are the GPUs (GPU0..) followed by the NICs (NIC0..), as nvidia-smi
// lists them. The PCI classification reads the devices' sysfs paths; NV# needs
// an NVLink source (NVML, or a saved `nvidia-smi topo -m` matrix).
#pragma once

#include <string>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/topo/topology.h"

namespace seedance::topo {

enum class Link { kSelf, kNvlink, kPix, kPxb, kPhb, kNode, kSys };

struct Connection {
  Link link = Link::kSys;
  int nvlinks = 0;  // for kNvlink
};

// "X", "NV12", "PIX", ...
std::string LinkLabel(const Connection& c);

// The PCI relation of two devices given their PCI chains (host bridge first)
// and NUMA nodes; never kNvlink or kSelf. A NUMA node of -1 counts as "same
// node" when the machine has at most one node.
Link PciRelation(const std::vector<std::string>& a, int node_a, const std::vector<std::string>& b,
                 int node_b, bool single_node);

// Device names in matrix order ("GPU0", ..., "NIC0", ...).
std::vector<std::string> MatrixDeviceNames(const Topology& topology);

// The full matrix, rows and columns in MatrixDeviceNames order.
std::vector<std::vector<Connection>> ConnectionMatrix(const Topology& topology);

// Reads the NV# cells between GPUs from saved `nvidia-smi topo -m` output.
// Returns an n x n link-count matrix (n = the GPU rows found). Errors name
// `file` and the line.
base::StatusOr<std::vector<std::vector<int>>> ParseNvidiaSmiTopo(const std::string& text,
                                                                 const std::string& file);

// The text form of `topo show`: the matrix with CPU and NUMA affinity columns,
// the legend, the NIC legend, then the NUMA nodes and notes.
std::string RenderTopologyTable(const Topology& topology);

}  // namespace seedance::topo
