// Host counters from procfs (feature PROBE-1): CPU time by mode (/proc/stat),
// memory (/proc/meminfo), disk I/O (/proc/diskstats), network bytes per
// interface (/proc/net/dev), the energy counters of RAPL power zones
// (/sys/class/powercap/intel-rapl:*), and optionally one task (/proc/PID/stat, statm).
// Everything is a raw reading; rates come from two readings (probe.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"

namespace seedance::probe {

// The modes of /proc/stat's "cpu" line, in the kernel's order.
inline constexpr const char* kCpuModes[] = {"user",   "nice", "system",  "idle",
                                            "iowait", "irq",  "softirq", "steal"};
inline constexpr int kCpuModeCount = 8;

struct DiskCounters {
  uint64_t read_bytes = 0, written_bytes = 0;
  uint64_t io_time_ms = 0;  // time the device had I/O in flight
};

struct NetCounters {
  uint64_t receive_bytes = 0, transmit_bytes = 0;
};

// One RAPL zone (a CPU package, its DRAM, the platform): energy since an arbitrary start, which
// wraps to 0 after max_energy_range_uj.
struct RaplZone {
  std::string name;  // the zone's `name` file: "package-0", "dram", "core", "psys"
  uint64_t energy_uj = 0;
  uint64_t max_energy_range_uj = 0;
};

// The zones that sum to the host's measured power without counting anything twice: "psys" (the
// whole platform) when there is one, else every package (the top-level zones) plus their "dram"
// subzones (which packages do not include). Keys of HostReading::rapl.
std::vector<std::string> RaplTotalZones(const std::map<std::string, RaplZone>& zones);

struct TaskCounters {
  int pid = 0;
  double cpu_seconds = 0;  // user + system
  uint64_t resident_bytes = 0;
  int threads = 0;
};

struct HostReading {
  int64_t monotonic_nanos = 0;
  int cpu_count = 0;
  double cpu_seconds[kCpuModeCount] = {};  // summed over CPUs
  std::optional<uint64_t> memory_total_bytes, memory_available_bytes;
  std::map<std::string, DiskCounters> disks;  // whole disks only, no partitions
  std::map<std::string, NetCounters> nets;    // without lo
  // By the zone's directory name ("intel-rapl:0", "intel-rapl:0:1"); empty without RAPL. Reading
  // energy_uj needs root on kernels since 2020 (a note says so when it is refused).
  std::map<std::string, RaplZone> rapl;
  std::optional<TaskCounters> task;
  std::vector<std::string> notes;
};

struct HostOptions {
  int task_pid = -1;           // -1: no task
  int ticks_per_second = 100;  // USER_HZ of /proc/stat and /proc/PID/stat
  int page_size = 4096;
};

// Reads every source; a missing or garbled one becomes a note. Fails only
// when --task-id names a process that does not exist.
base::StatusOr<HostReading> ReadHost(base::Env& env, const HostOptions& options);

}  // namespace seedance::probe
