#include "seedance/probe/host.h"

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "seedance/base/parse.h"

namespace seedance::probe {

namespace {

void ReadStat(base::Env& env, const HostOptions& o, HostReading& r) {
  auto text = env.ReadFile("/proc/stat");
  if (!text.ok()) {
    r.notes.push_back("/proc/stat: " + std::string(text.status().message()));
    return;
  }
  std::istringstream in(*text);
  std::string line;
  bool total_seen = false;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0) continue;
    if (line.size() > 3 && line[3] != ' ') {
      ++r.cpu_count;  // "cpu0 ..."
      continue;
    }
    std::istringstream words(line.substr(3));
    for (int m = 0; m < kCpuModeCount; ++m) {
      uint64_t ticks = 0;
      if (!(words >> ticks)) {
        if (m < 4) r.notes.push_back("/proc/stat: the cpu line has fewer than 4 counters");
        break;
      }
      r.cpu_seconds[m] = static_cast<double>(ticks) / o.ticks_per_second;
    }
    total_seen = true;
  }
  if (!total_seen) r.notes.push_back("/proc/stat: no 'cpu' line");
}

void ReadMeminfo(base::Env& env, HostReading& r) {
  auto text = env.ReadFile("/proc/meminfo");
  if (!text.ok()) {
    r.notes.push_back("/proc/meminfo: " + std::string(text.status().message()));
    return;
  }
  std::istringstream in(*text);
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    if (!(words >> key >> kb)) continue;
    if (key == "MemTotal:") r.memory_total_bytes = kb * 1024;
    if (key == "MemAvailable:") r.memory_available_bytes = kb * 1024;
  }
  if (!r.memory_total_bytes) r.notes.push_back("/proc/meminfo: no MemTotal line");
}

// Whole disks: a name whose /sys/block entry exists (partitions live below it).
void ReadDiskstats(base::Env& env, HostReading& r) {
  auto text = env.ReadFile("/proc/diskstats");
  if (!text.ok()) {
    r.notes.push_back("/proc/diskstats: " + std::string(text.status().message()));
    return;
  }
  auto blocks = env.ListDirectory("/sys/block");
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    unsigned major = 0, minor = 0;
    std::string name;
    uint64_t f[10] = {};
    if (!(w >> major >> minor >> name)) continue;
    int got = 0;
    while (got < 10 && (w >> f[got])) ++got;
    if (got < 10) continue;
    if (name.rfind("loop", 0) == 0 || name.rfind("ram", 0) == 0) continue;
    if (blocks.ok()) {
      bool whole = false;
      for (const auto& b : *blocks) whole |= (b == name);
      if (!whole) continue;
    }
    // Fields after the name: reads, merged, sectors read (2), ms reading,
    // writes, merged, sectors written (6), ms writing, in flight, io ms (9).
    DiskCounters d;
    d.read_bytes = f[2] * 512;
    d.written_bytes = f[6] * 512;
    d.io_time_ms = f[9];
    r.disks[name] = d;
  }
}

void ReadNetDev(base::Env& env, HostReading& r) {
  auto text = env.ReadFile("/proc/net/dev");
  if (!text.ok()) {
    r.notes.push_back("/proc/net/dev: " + std::string(text.status().message()));
    return;
  }
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;  // the two header lines
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if (name == "lo" || name.empty()) continue;
    std::istringstream w(line.substr(colon + 1));
    uint64_t v[9] = {};
    int got = 0;
    while (got < 9 && (w >> v[got])) ++got;
    if (got < 9) {
      r.notes.push_back("/proc/net/dev: short line for " + name);
      continue;
    }
    r.nets[name] = {v[0], v[8]};  // receive bytes, transmit bytes
  }
}

base::Status ReadTask(base::Env& env, const HostOptions& o, HostReading& r) {
  const std::string dir = "/proc/" + std::to_string(o.task_pid);
  auto stat = env.ReadFile(dir + "/stat");
  if (!stat.ok()) {
    return base::NotFoundError("no such process", "--task-id " + std::to_string(o.task_pid));
  }
  TaskCounters t;
  t.pid = o.task_pid;
  const size_t close = stat->rfind(')');
  std::istringstream w(close == std::string::npos ? std::string() : stat->substr(close + 1));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 20 && (w >> field); ++i) {
    // Clock ticks and a thread count; a field that is not a number counts as 0.
    if (i == 14) utime = base::ParseFiniteDouble(field).value_or(0);
    if (i == 15) stime = base::ParseFiniteDouble(field).value_or(0);
    if (i == 20) {
      t.threads =
          static_cast<int>(std::clamp<int64_t>(base::ParseInt64(field).value_or(0), 0, INT32_MAX));
    }
  }
  t.cpu_seconds = (utime + stime) / o.ticks_per_second;
  if (auto statm = env.ReadFile(dir + "/statm"); statm.ok()) {
    std::istringstream s(*statm);
    uint64_t size = 0, resident = 0;
    if (s >> size >> resident) t.resident_bytes = resident * static_cast<uint64_t>(o.page_size);
  }
  r.task = t;
  return base::OkStatus();
}

}  // namespace

base::StatusOr<HostReading> ReadHost(base::Env& env, const HostOptions& options) {
  HostReading r;
  r.monotonic_nanos = env.NowMonotonicNanos();
  ReadStat(env, options, r);
  ReadMeminfo(env, r);
  ReadDiskstats(env, r);
  ReadNetDev(env, r);
  if (options.task_pid >= 0) {
    if (auto s = ReadTask(env, options, r); !s.ok()) return s;
  }
  return r;
}

}  // namespace seedance::probe
