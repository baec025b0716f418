#include "seedance/probe/probe.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "seedance/topo/topology.h"

namespace seedance::probe {

Probe::Probe(base::Env& env, std::unique_ptr<GpuSource> gpus, HostOptions options)
    : env_(env), gpus_(std::move(gpus)), options_(options) {
  if (auto h = env.ReadFile("/proc/sys/kernel/hostname"); h.ok()) {
    hostname_ = *h;
    while (!hostname_.empty() && (hostname_.back() == '\n' || hostname_.back() == ' ')) {
      hostname_.pop_back();
    }
  }
  if (hostname_.empty()) hostname_ = "localhost";
  const topo::Topology t = topo::DiscoverTopology(env);
  for (const auto& nic : t.nics) {
    if (!nic.interface.empty() && nic.speed_gbits_per_s > 0) {
      line_rates_[nic.interface] = nic.speed_gbits_per_s * 1e9 / 8;
    }
  }
}

double Probe::LineRateBytesPerSecond(const std::string& interface) const {
  auto it = line_rates_.find(interface);
  return it == line_rates_.end() ? 0 : it->second;
}

base::StatusOr<Snapshot> Probe::Read() {
  Snapshot s;
  s.unix_nanos = env_.NowUnixNanos();
  auto host = ReadHost(env_, options_);
  if (!host.ok()) return host.status();
  s.host = std::move(*host);
  s.notes = s.host.notes;
  if (gpus_) {
    s.gpus = gpus_->Read();
    if (const auto note = gpus_->note(); !note.empty()) s.notes.push_back(note);
  } else {
    s.notes.push_back("GPU metrics off");
  }
  return s;
}

const std::vector<std::string>& ValueNames() {
  static const std::vector<std::string> names = {
      "cpu.util",      "cpu.user",      "cpu.system",       "cpu.iowait",         "cpu.steal",
      "mem.used",      "mem.available", "disk.read_bytes",  "disk.write_bytes",   "disk.util",
      "net.in_bytes",  "net.out_bytes", "net.share",        "task.cpu",           "task.rss",
      "gpu.util",      "gpu.mem_bw",    "gpu.mem_used",     "gpu.mem_used_bytes", "gpu.power",
      "gpu.temp",      "gpu.sm_clock",  "gpu.pcie_tx",      "gpu.pcie_rx",        "gpu.nvlink_tx",
      "gpu.nvlink_rx", "host.power",    "host.power_total",
  };
  return names;
}

namespace {

bool Wanted(const std::vector<std::string>& filter, const std::string& name) {
  if (filter.empty()) return true;
  for (const auto& f : filter) {
    if (name == f || (name.rfind(f + ".", 0) == 0)) return true;
  }
  return false;
}

double Rate(uint64_t before, uint64_t after, double seconds) {
  if (seconds <= 0 || after < before) return 0;  // counter reset: no rate this window
  return static_cast<double>(after - before) / seconds;
}

}  // namespace

std::vector<Value> WindowValues(const Probe& probe, const Snapshot& a, const Snapshot& b,
                                const std::vector<std::string>& filter) {
  std::vector<Value> out;
  auto add = [&](std::string name, std::vector<std::pair<std::string, std::string>> labels,
                 double v, std::string unit) {
    if (Wanted(filter, name))
      out.push_back({std::move(name), std::move(labels), v, std::move(unit)});
  };
  const double dt = static_cast<double>(b.host.monotonic_nanos - a.host.monotonic_nanos) / 1e9;
  // CPU: shares of all CPU time in the window.
  double total = 0;
  double d[kCpuModeCount];
  for (int m = 0; m < kCpuModeCount; ++m) {
    d[m] = std::max(0.0, b.host.cpu_seconds[m] - a.host.cpu_seconds[m]);
    total += d[m];
  }
  if (total > 0) {
    add("cpu.util", {}, 100 * (total - d[3] - d[4]) / total, "%");
    add("cpu.user", {}, 100 * (d[0] + d[1]) / total, "%");
    add("cpu.system", {}, 100 * (d[2] + d[5] + d[6]) / total, "%");
    add("cpu.iowait", {}, 100 * d[4] / total, "%");
    add("cpu.steal", {}, 100 * d[7] / total, "%");
  }
  if (b.host.memory_total_bytes && b.host.memory_available_bytes && *b.host.memory_total_bytes) {
    add("mem.used", {},
        100.0 * (1.0 - static_cast<double>(*b.host.memory_available_bytes) /
                           static_cast<double>(*b.host.memory_total_bytes)),
        "%");
    add("mem.available", {}, static_cast<double>(*b.host.memory_available_bytes), "B");
  }
  for (const auto& [dev, after] : b.host.disks) {
    auto it = a.host.disks.find(dev);
    if (it == a.host.disks.end()) continue;
    add("disk.read_bytes", {{"device", dev}}, Rate(it->second.read_bytes, after.read_bytes, dt),
        "B/s");
    add("disk.write_bytes", {{"device", dev}},
        Rate(it->second.written_bytes, after.written_bytes, dt), "B/s");
    add("disk.util", {{"device", dev}},
        std::min(100.0, Rate(it->second.io_time_ms, after.io_time_ms, dt) / 10.0), "%");
  }
  for (const auto& [name, after] : b.host.nets) {
    auto it = a.host.nets.find(name);
    if (it == a.host.nets.end()) continue;
    const double in = Rate(it->second.receive_bytes, after.receive_bytes, dt);
    const double outb = Rate(it->second.transmit_bytes, after.transmit_bytes, dt);
    add("net.in_bytes", {{"interface", name}}, in, "B/s");
    add("net.out_bytes", {{"interface", name}}, outb, "B/s");
    // Full duplex: the busier direction against the line rate.
    if (const double line = probe.LineRateBytesPerSecond(name); line > 0) {
      add("net.share", {{"interface", name}}, 100 * std::max(in, outb) / line, "%");
    }
  }
  // RAPL: watts from the energy counters, across a wrap of the counter.
  if (dt > 0) {
    std::map<std::string, double> watts;
    for (const auto& [dir, after] : b.host.rapl) {
      auto it = a.host.rapl.find(dir);
      if (it == a.host.rapl.end()) continue;
      uint64_t delta = after.energy_uj - it->second.energy_uj;
      if (after.energy_uj < it->second.energy_uj) {
        if (after.max_energy_range_uj < it->second.energy_uj) continue;  // unknown range
        delta = after.max_energy_range_uj - it->second.energy_uj + after.energy_uj;
      }
      watts[dir] = static_cast<double>(delta) / 1e6 / dt;
      add("host.power", {{"zone", dir}, {"name", after.name}}, watts[dir], "W");
    }
    if (!watts.empty()) {
      double sum = 0;
      bool complete = true;
      for (const std::string& dir : RaplTotalZones(b.host.rapl)) {
        auto it = watts.find(dir);
        complete = complete && it != watts.end();
        if (it != watts.end()) sum += it->second;
      }
      if (complete) add("host.power_total", {}, sum, "W");
    }
  }
  if (a.host.task && b.host.task) {
    const std::string pid = std::to_string(b.host.task->pid);
    if (dt > 0) {
      add("task.cpu", {{"pid", pid}},
          std::max(0.0, b.host.task->cpu_seconds - a.host.task->cpu_seconds) / dt, "cores");
    }
    add("task.rss", {{"pid", pid}}, static_cast<double>(b.host.task->resident_bytes), "B");
  }
  for (const auto& g : b.gpus) {
    const std::vector<std::pair<std::string, std::string>> l = {{"gpu", std::to_string(g.index)}};
    if (g.gpu_util_pct) add("gpu.util", l, *g.gpu_util_pct, "%");
    if (g.memory_util_pct) add("gpu.mem_bw", l, *g.memory_util_pct, "%");
    if (g.memory_used_bytes && g.memory_total_bytes && *g.memory_total_bytes) {
      add("gpu.mem_used", l,
          100.0 * static_cast<double>(*g.memory_used_bytes) /
              static_cast<double>(*g.memory_total_bytes),
          "%");
    }
    if (g.memory_used_bytes)
      add("gpu.mem_used_bytes", l, static_cast<double>(*g.memory_used_bytes), "B");
    if (g.power_watts) add("gpu.power", l, *g.power_watts, "W");
    if (g.temperature_celsius) add("gpu.temp", l, *g.temperature_celsius, "C");
    if (g.sm_clock_mhz) add("gpu.sm_clock", l, *g.sm_clock_mhz, "MHz");
    if (g.pcie_tx_bytes_per_s)
      add("gpu.pcie_tx", l, static_cast<double>(*g.pcie_tx_bytes_per_s), "B/s");
    if (g.pcie_rx_bytes_per_s)
      add("gpu.pcie_rx", l, static_cast<double>(*g.pcie_rx_bytes_per_s), "B/s");
    for (const auto& prev : a.gpus) {
      if (prev.index != g.index) continue;
      if (prev.nvlink_tx_bytes && g.nvlink_tx_bytes) {
        add("gpu.nvlink_tx", l, Rate(*prev.nvlink_tx_bytes, *g.nvlink_tx_bytes, dt), "B/s");
      }
      if (prev.nvlink_rx_bytes && g.nvlink_rx_bytes) {
        add("gpu.nvlink_rx", l, Rate(*prev.nvlink_rx_bytes, *g.nvlink_rx_bytes, dt), "B/s");
      }
    }
  }
  return out;
}

base::Report ValuesToReport(const std::vector<Value>& values) {
  base::Report list = base::Report::array();
  for (const auto& v : values) {
    base::Report labels = base::Report::object();
    for (const auto& [k, val] : v.labels) labels[k] = val;
    list.push_back(
        {{"metric", v.metric}, {"labels", labels}, {"value", v.value}, {"unit", v.unit}});
  }
  return list;
}

}  // namespace seedance::probe

namespace seedance::probe {

std::optional<PowerSampleRow> PowerSampleOf(const std::vector<Value>& values,
                                            const Snapshot& after) {
  PowerSampleRow row;
  bool measured = false;
  double gpu_power = 0;
  int gpu_powers = 0;
  for (const Value& v : values) {
    if (v.metric == "host.power_total") {
      row.watts += v.value;
      measured = true;
    } else if (v.metric == "gpu.power") {
      gpu_power += v.value;
      ++gpu_powers;
    } else if (v.metric == "cpu.util") {
      row.cpu_utilization_pct = v.value;
    }
  }
  if (gpu_powers > 0) {
    row.watts += gpu_power;
    measured = true;
  }
  if (!measured) return std::nullopt;
  double util = 0, limit = 0;
  bool complete = !after.gpus.empty();
  for (const auto& g : after.gpus) {
    complete = complete && g.gpu_util_pct && g.power_watts && g.power_limit_watts;
    if (!complete) break;
    util += *g.gpu_util_pct / 100.0;
    limit += *g.power_limit_watts;
  }
  if (complete) {
    row.has_gpus = true;
    row.gpus = static_cast<int>(after.gpus.size());
    row.gpu_utilization = util / row.gpus;
    row.gpu_tdp_watts = limit / row.gpus;
  }
  return row;
}

std::string PowerSamplesCsv(const std::vector<PowerSampleRow>& rows) {
  const bool gpus = !rows.empty() && rows.front().has_gpus;
  std::string out = gpus ? "watts,cpu_utilization_pct,gpu_utilization,gpus,gpu_tdp_watts\n"
                         : "watts,cpu_utilization_pct\n";
  char line[160];
  for (const PowerSampleRow& r : rows) {
    if (gpus) {
      std::snprintf(line, sizeof(line), "%.6g,%.6g,%.6g,%d,%.6g\n", r.watts, r.cpu_utilization_pct,
                    r.gpu_utilization, r.gpus, r.gpu_tdp_watts);
    } else {
      std::snprintf(line, sizeof(line), "%.6g,%.6g\n", r.watts, r.cpu_utilization_pct);
    }
    out += line;
  }
  return out;
}

}  // namespace seedance::probe
