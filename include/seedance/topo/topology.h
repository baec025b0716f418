// Node topology (feature TOPO-1): NUMA nodes with their CPUs, caches, memory and
// distance matrix; the GPUs and NICs on the PCI bus with their NUMA node, local
// CPUs and PCI path; and, where a source gives them, NVLink links between GPUs.
//
// Everything is read through base::Env, so an Env rooted at a fake tree (see
// tests/fixtures/fake_node.py) serves a made-up machine. Discovery never fails
// on a bad file: a missing or garbled entry becomes a note in
// Topology::notes and the field keeps its "unknown" value (-1 or empty).
//
// Thread safety: the functions are pure apart from reading through the Env.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::topo {

struct Cache {
  int level = 0;
  std::string type;  // "Data", "Instruction", "Unified"
  int64_t size_bytes = 0;
  std::vector<int> cpus;  // the CPUs that share it
};

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
  int64_t memory_total_bytes = -1;  // -1: unknown
  std::vector<int> distances;       // to every node, in the order of Topology::nodes
  std::vector<Cache> caches;        // each cache shared by this node's CPUs, once
};

struct Gpu {
  int index = 0;       // nvidia-smi order: GPUs sorted by PCI address
  std::string vendor;  // "nvidia", "amd"
  std::string pci_address;
  uint32_t pci_class = 0;   // e.g. 0x030200 (3D controller)
  uint16_t pci_vendor = 0;  // 0x10de, 0x1002
  uint16_t pci_device = 0;  // the device id, 0 when unreadable
  int numa_node = -1;
  std::vector<int> local_cpus;
  std::vector<std::string> pci_path;  // host bridge, then every bridge down to the device
};

struct Nic {
  std::string name;         // RDMA device (mlx5_0) or interface (eth0)
  std::string kind;         // "infiniband", "roce", "ethernet"
  std::string interface;    // the netdev of an RDMA device, when known
  std::string pci_address;  // empty for a device without PCI parent
  uint32_t pci_class = 0;   // e.g. 0x020700 (InfiniBand), 0x020000 (Ethernet)
  uint16_t pci_vendor = 0;
  int numa_node = -1;
  double speed_gbits_per_s = 0;
  bool up = false;
  std::vector<int> local_cpus;
  std::vector<std::string> pci_path;
};

struct Topology {
  bool numa_info = false;  // /sys/devices/system/node was readable
  std::vector<NumaNode> nodes;
  std::vector<int> online_cpus;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  // nvlinks[i][j]: NVLink links between GPUs i and j (0: none). Empty when no
  // source gave links (no NVML, no --nvlink-from file).
  std::vector<std::vector<int>> nvlinks;
  std::string nvlink_source;       // "nvml", a file name, or empty
  std::vector<std::string> notes;  // what could not be read, and why

  // The node whose CPUs include `cpu`, or -1.
  int NodeOfCpu(int cpu) const;
};

// Reads the whole topology. Never fails: problems become notes.
Topology DiscoverTopology(base::Env& env);

// Installs an NVLink matrix (one row per GPU, in Topology::gpus order).
// InvalidArgument when its shape does not match the GPUs found.
base::Status SetNvlinks(Topology& topology, std::vector<std::vector<int>> links,
                        std::string source);

// The kernel's limits: CONFIG_NR_CPUS is at most 8,192, MAX_NUMNODES 1,024 (NODES_SHIFT 10).
inline constexpr int kMaxCpus = 8192;
inline constexpr int kMaxNumaNodes = 1024;

// "0-3,8,10-11" <-> {0,1,2,3,8,10,11}. Every number must be below `limit`
// (kMaxCpus for CPU lists, kMaxNumaNodes for node lists), so a damaged file
// cannot make millions of entries. Parse errors name `where`.
base::StatusOr<std::vector<int>> ParseCpuList(std::string_view text, const std::string& where = {},
                                              int limit = kMaxCpus);
std::string FormatCpuList(const std::vector<int>& cpus);

// The JSON/table report of `topo show`, including the connection matrix.
base::Report TopologyToReport(const Topology& topology);

}  // namespace seedance::topo
