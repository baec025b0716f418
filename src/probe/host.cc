#include "seedance/probe/host.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string_view>

#include "seedance/base/parse.h"

namespace seedance::probe {

namespace {

// A counter of a /proc file: a whole number >= 0.
std::optional<uint64_t> Counter(std::string_view field) {
  const std::optional<int64_t> v = base::ParseInt64(field);
  if (!v || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

void ReadStat(base::Env& env, const HostOptions& o, HostReading& r) {
  auto text = env.ReadFile("/proc/stat");
  if (!text.ok()) {
    r.notes.push_back("/proc/stat: " + std::string(text.status().message()));
    return;
  }
  bool total_seen = false;
  for (std::string_view line : base::SplitLines(*text)) {
    if (!line.starts_with("cpu")) continue;
    if (line.size() > 3 && line[3] != ' ') {
      ++r.cpu_count;  // "cpu0 ..."
      continue;
    }
    const auto fields = base::SplitFields(line.substr(3));
    for (int m = 0; m < kCpuModeCount; ++m) {
      const std::optional<uint64_t> ticks = static_cast<size_t>(m) < fields.size()
                                                ? Counter(fields[static_cast<size_t>(m)])
                                                : std::nullopt;
      if (!ticks) {
        if (m < 4) r.notes.push_back("/proc/stat: the cpu line has fewer than 4 counters");
        break;
      }
      r.cpu_seconds[m] = static_cast<double>(*ticks) / o.ticks_per_second;
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
  for (std::string_view line : base::SplitLines(*text)) {
    const auto fields = base::SplitFields(line);  // "MemTotal:", kB, "kB"
    if (fields.size() < 2) continue;
    const std::optional<uint64_t> kb = Counter(fields[1]);
    if (!kb) continue;
    if (fields[0] == "MemTotal:") r.memory_total_bytes = *kb * 1024;
    if (fields[0] == "MemAvailable:") r.memory_available_bytes = *kb * 1024;
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
  for (std::string_view line : base::SplitLines(*text)) {
    // major, minor, name, then the counters.
    const auto fields = base::SplitFields(line);
    if (fields.size() < 13 || !Counter(fields[0]) || !Counter(fields[1])) continue;
    const std::string name(fields[2]);
    uint64_t f[10] = {};
    bool counters = true;
    for (size_t k = 0; k < 10 && counters; ++k) {
      const std::optional<uint64_t> v = Counter(fields[3 + k]);
      counters = v.has_value();
      f[k] = v.value_or(0);
    }
    if (!counters) continue;
    if (name.starts_with("loop") || name.starts_with("ram")) continue;
    if (blocks.ok() && std::find(blocks->begin(), blocks->end(), name) == blocks->end()) continue;
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
  for (std::string_view line : base::SplitLines(*text)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // the two header lines
    const auto names = base::SplitFields(line.substr(0, colon));
    if (names.size() != 1 || names[0] == "lo") continue;
    const std::string name(names[0]);
    const auto fields = base::SplitFields(line.substr(colon + 1));
    uint64_t v[9] = {};
    size_t got = 0;
    for (; got < 9 && got < fields.size(); ++got) {
      const std::optional<uint64_t> c = Counter(fields[got]);
      if (!c) break;
      v[got] = *c;
    }
    if (got < 9) {
      r.notes.push_back("/proc/net/dev: short line for " + name);
      continue;
    }
    r.nets[name] = {v[0], v[8]};  // receive bytes, transmit bytes
  }
}

void ReadRapl(base::Env& env, HostReading& r) {
  const std::string root = "/sys/class/powercap";
  auto entries = env.ListDirectory(root);
  if (!entries.ok()) return;  // no powercap: nothing to note, most machines have none
  for (const std::string& dir : *entries) {
    if (dir.rfind("intel-rapl:", 0) != 0) continue;  // "intel-rapl" itself is the control type
    const std::string path = root + "/" + dir;
    auto energy = env.ReadFile(path + "/energy_uj");
    if (!energy.ok()) {
      r.notes.push_back(path + "/energy_uj: " + std::string(energy.status().message()) +
                        " (RAPL energy is readable by root only on recent kernels)");
      continue;
    }
    const auto fields = base::SplitFields(*energy);
    const std::optional<uint64_t> uj = fields.size() == 1 ? Counter(fields[0]) : std::nullopt;
    if (!uj) {
      r.notes.push_back(path + "/energy_uj: not a counter");
      continue;
    }
    RaplZone z;
    z.energy_uj = *uj;
    if (auto name = env.ReadFile(path + "/name"); name.ok()) {
      const auto n = base::SplitFields(*name);
      if (n.size() == 1) z.name = std::string(n[0]);
    }
    if (auto range = env.ReadFile(path + "/max_energy_range_uj"); range.ok()) {
      const auto f = base::SplitFields(*range);
      if (f.size() == 1) z.max_energy_range_uj = Counter(f[0]).value_or(0);
    }
    r.rapl[dir] = z;
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
  const auto fields = base::SplitFields(
      close == std::string::npos ? std::string_view() : std::string_view(*stat).substr(close + 1));
  // Fields 3.. after the command: clock ticks (14, 15) and a thread count (20); a field that is
  // not a number counts as 0.
  auto field = [&](size_t number) {
    return number - 3 < fields.size() ? fields[number - 3] : std::string_view();
  };
  const double utime = base::ParseFiniteDouble(field(14)).value_or(0);
  const double stime = base::ParseFiniteDouble(field(15)).value_or(0);
  t.threads =
      static_cast<int>(std::clamp<int64_t>(base::ParseInt64(field(20)).value_or(0), 0, INT32_MAX));
  t.cpu_seconds = (utime + stime) / o.ticks_per_second;
  if (auto statm = env.ReadFile(dir + "/statm"); statm.ok()) {
    const auto pages = base::SplitFields(*statm);  // size, resident, ...
    const std::optional<uint64_t> resident =
        pages.size() >= 2 && Counter(pages[0]) ? Counter(pages[1]) : std::nullopt;
    if (resident) t.resident_bytes = *resident * static_cast<uint64_t>(o.page_size);
  }
  r.task = t;
  return base::OkStatus();
}

}  // namespace

std::vector<std::string> RaplTotalZones(const std::map<std::string, RaplZone>& zones) {
  for (const auto& [dir, z] : zones) {
    if (z.name == "psys") return {dir};
  }
  std::vector<std::string> out;
  for (const auto& [dir, z] : zones) {
    const bool top_level = std::count(dir.begin(), dir.end(), ':') == 1;
    if (top_level || z.name == "dram") out.push_back(dir);
  }
  return out;
}

base::StatusOr<HostReading> ReadHost(base::Env& env, const HostOptions& options) {
  HostReading r;
  r.monotonic_nanos = env.NowMonotonicNanos();
  ReadStat(env, options, r);
  ReadMeminfo(env, r);
  ReadDiskstats(env, r);
  ReadNetDev(env, r);
  ReadRapl(env, r);
  if (options.task_pid >= 0) {
    if (auto s = ReadTask(env, options, r); !s.ok()) return s;
  }
  return r;
}

}  // namespace seedance::probe
