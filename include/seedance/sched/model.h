// The cluster model of the scheduler and simulator (feature SCHED-1): nodes with
// CPU, memory and GPUs, pods (Alibaba 2023) and jobs (Philly) with their
// requests and times.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::sched {

enum class Qos { kLatencySensitive, kBestEffort, kBurstable, kGuaranteed };
std::string_view QosName(Qos q);  // "LS", "BE", "Burstable", "Guaranteed"
base::StatusOr<Qos> ParseQos(std::string_view name, std::string_view where = "qos");

struct Node {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpu_count = 0;
  std::string gpu_model;  // empty for CPU-only nodes
  // Topology; the Alibaba lists do not carry it, so one domain of each.
  int nvlink_domains = 1;
  int numa_nodes = 1;
  int nics = 0;
  // The quota pool the node belongs to (a Philly virtual cluster); empty: none.
  std::string pool;
  // Spot capacity: cheaper, and reclaimed by the provider now and then.
  bool spot = false;
};

struct Pod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;                    // per GPU: 1..1000 (< 1000 only when num_gpu == 1)
  std::vector<std::string> gpu_models;  // allowed types; empty: any
  Qos qos = Qos::kLatencySensitive;
  int priority = 0;
  int gang = 1;
  bool rdma = false;  // talks to other nodes over RDMA (topology_plugins.h)
  std::string phase;  // Running, Failed, Pending, Succeeded ("" when the file has none)
  std::optional<int64_t> creation_s, deletion_s, scheduled_s;

  // GPU demand in milli-GPU: num_gpu * gpu_milli.
  int64_t gpu_demand_milli() const { return static_cast<int64_t>(num_gpu) * gpu_milli; }
};

// A Philly job: submit time, run time and GPUs (feature SCHED-1, event mode).
struct Job {
  int64_t submit_s = 0;  // seconds since the Unix epoch, the trace's local time read as UTC
  double duration_s = 0;
  int num_gpus = 0;
  std::string vc;
};

}  // namespace seedance::sched
