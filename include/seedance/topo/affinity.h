// Process placement and the affinity check (feature TOPO-2, TOPO-3).
//
// ReadProcessPlacement reads, through Env, where a process may run and where
// its memory lives: CPU and memory masks of every thread
// (/proc/PID/task/TID/status), the CPU each thread last ran on (stat field
// 39), resident bytes per NUMA node (/proc/PID/numa_maps), and the GPUs and
// RDMA NICs it has open (/proc/PID/fd links to /dev/nvidiaN and
// /dev/infiniband/uverbsN).
//
// CheckAffinity turns that into findings and the exit code of
// `seedancectl topo check`:
//   0  consistent (or a single NUMA node: every placement is local)
//   1  the machine gives no NUMA information (/sys/devices/system/node)
//   2  the process is unbound: its CPU mask spans more than one NUMA node
//   3  its memory is not local: resident bytes on nodes outside its CPUs'
//      nodes exceed remote_to_local_limit x the local bytes
// Findings that do not change the exit code (warnings): a thread allowed on
// one node while the GPU or NIC it drives sits on another, threads whose
// masks disagree with the process's.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/topo/topology.h"

namespace seedance::topo {

struct ThreadPlacement {
  int tid = 0;
  std::string name;
  std::vector<int> allowed_cpus;
  int last_cpu = -1;
};

struct ProcessPlacement {
  int pid = 0;
  std::string command;
  std::vector<int> allowed_cpus;  // the main thread's
  std::vector<int> allowed_mems;
  std::vector<ThreadPlacement> threads;
  std::map<int, int64_t> resident_bytes_per_node;  // from numa_maps
  bool numa_maps_readable = false;
  std::vector<int> gpus;          // Topology::gpus indices with an open /dev/nvidiaN
  std::vector<std::string> nics;  // RDMA devices with an open uverbs file
};

// NotFound when the process does not exist; other problems (an unreadable
// numa_maps, a garbled status line) leave fields empty.
base::StatusOr<ProcessPlacement> ReadProcessPlacement(base::Env& env, int pid,
                                                      const Topology& topology);

struct AffinityOptions {
  // Remote-to-local resident bytes above which memory is "not local"
  //.
  double remote_to_local_limit = 0.30;
};

struct AffinityFinding {
  std::string severity;  // "info", "warning", "error"
  std::string code;      // "unbound", "memory_remote", "device_remote", "thread_split", ...
  std::string message;
  std::string advice;
  double score = 0;  // this finding's share of the process in [0, 1]
};

struct AffinityReport {
  int exit_code = 0;
  std::string verdict;             // "consistent", "no_numa_info", "unbound", "memory_not_local"
  std::vector<int> cpu_nodes;      // NUMA nodes the process's CPU mask touches
  double remote_memory_share = 0;  // remote / all resident bytes
  // The worst finding's score: 0 is perfect placement, 1 is everything remote.
  double mismatch_score = 0;
  std::vector<AffinityFinding> findings;
};

AffinityReport CheckAffinity(const Topology& topology, const ProcessPlacement& placement,
                             const AffinityOptions& options = {});

base::Report AffinityToReport(const AffinityReport& report, const ProcessPlacement& placement);

}  // namespace seedance::topo
