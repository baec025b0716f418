#include "seedance/probe/exposition.h"

#include <functional>

#include "seedance/base/enum_names.h"
#include "seedance/base/prometheus_text.h"

namespace seedance::probe {

namespace {

inline constexpr base::EnumTable<Naming, 2> kNamingNames = {{
    {Naming::kSeedance, "seedance"},
    {Naming::kDcgm, "dcgm"},
}};

}  // namespace

std::string_view NamingName(Naming naming) { return base::EnumName(kNamingNames, naming); }

base::StatusOr<Naming> ParseNaming(std::string_view name, std::string_view where) {
  return base::ParseEnum(kNamingNames, name, where);
}

namespace {

using Labels = base::PrometheusWriter::Labels;
using Writer = base::PrometheusWriter;

template <typename T, typename F>
void GpuFamily(Writer& w, const Snapshot& s, const std::string& name, const char* type,
               const std::string& help, F field, double scale,
               const std::function<Labels(const port::NvmlReading&)>& labels) {
  bool any = false;
  for (const auto& g : s.gpus) any |= field(g).has_value();
  if (!any) return;
  w.Family(name, type, help);
  for (const auto& g : s.gpus) {
    if (auto v = field(g)) w.Sample(labels(g), static_cast<double>(*v) * scale);
  }
}

void HostFamilies(Writer& w, const Snapshot& s) {
  const HostReading& h = s.host;
  w.Family("seedance_cpu_seconds_total", "counter",
           "CPU time spent in each mode, summed over CPUs (/proc/stat).");
  for (int m = 0; m < kCpuModeCount; ++m) w.Sample({{"mode", kCpuModes[m]}}, h.cpu_seconds[m]);
  w.Family("seedance_cpus", "gauge", "Online CPUs.");
  w.Sample({}, h.cpu_count);
  if (h.memory_total_bytes) {
    w.Family("seedance_memory_total_bytes", "gauge", "Physical memory (/proc/meminfo MemTotal).");
    w.Sample({}, static_cast<double>(*h.memory_total_bytes));
  }
  if (h.memory_available_bytes) {
    w.Family("seedance_memory_available_bytes", "gauge",
             "Memory available for new work without swapping (/proc/meminfo MemAvailable).");
    w.Sample({}, static_cast<double>(*h.memory_available_bytes));
  }
  if (!h.disks.empty()) {
    w.Family("seedance_disk_read_bytes_total", "counter", "Bytes read from each disk.");
    for (const auto& [d, c] : h.disks) w.Sample({{"device", d}}, static_cast<double>(c.read_bytes));
    w.Family("seedance_disk_written_bytes_total", "counter", "Bytes written to each disk.");
    for (const auto& [d, c] : h.disks)
      w.Sample({{"device", d}}, static_cast<double>(c.written_bytes));
    w.Family("seedance_disk_io_time_seconds_total", "counter", "Time each disk had I/O in flight.");
    for (const auto& [d, c] : h.disks)
      w.Sample({{"device", d}}, static_cast<double>(c.io_time_ms) / 1000);
  }
  if (!h.nets.empty()) {
    w.Family("seedance_network_receive_bytes_total", "counter", "Bytes received per interface.");
    for (const auto& [n, c] : h.nets)
      w.Sample({{"interface", n}}, static_cast<double>(c.receive_bytes));
    w.Family("seedance_network_transmit_bytes_total", "counter",
             "Bytes transmitted per interface.");
    for (const auto& [n, c] : h.nets)
      w.Sample({{"interface", n}}, static_cast<double>(c.transmit_bytes));
  }
  if (!h.rapl.empty()) {
    w.Family("seedance_host_energy_joules_total", "counter",
             "Energy of each RAPL power zone (the counter wraps at the zone's range).");
    for (const auto& [dir, z] : h.rapl) {
      w.Sample({{"zone", dir}, {"name", z.name}}, static_cast<double>(z.energy_uj) / 1e6);
    }
  }
  if (h.task) {
    const Labels l = {{"pid", std::to_string(h.task->pid)}};
    w.Family("seedance_task_cpu_seconds_total", "counter", "CPU time of the watched task.");
    w.Sample(l, h.task->cpu_seconds);
    w.Family("seedance_task_resident_memory_bytes", "gauge",
             "Resident memory of the watched task.");
    w.Sample(l, static_cast<double>(h.task->resident_bytes));
    w.Family("seedance_task_threads", "gauge", "Threads of the watched task.");
    w.Sample(l, h.task->threads);
  }
}

void SeedanceGpuFamilies(Writer& w, const Snapshot& s) {
  auto labels = [](const port::NvmlReading& g) -> Labels {
    return {{"gpu", std::to_string(g.index)},
            {"uuid", g.uuid},
            {"model", g.name},
            {"pci_bus_id", g.pci_address}};
  };
  using R = const port::NvmlReading&;
  auto ratio = [](std::optional<double> v) -> std::optional<double> {
    if (v) return *v / 100;
    return std::nullopt;
  };
  GpuFamily<double>(
      w, s, "seedance_gpu_utilization_ratio", "gauge",
      "Share of the last sample period in which a kernel ran (NVML).",
      [&](R g) { return ratio(g.gpu_util_pct); }, 1, labels);
  GpuFamily<double>(
      w, s, "seedance_gpu_memory_busy_ratio", "gauge",
      "Share of the last sample period in which device memory was read or written.",
      [&](R g) { return ratio(g.memory_util_pct); }, 1, labels);
  GpuFamily<uint64_t>(
      w, s, "seedance_gpu_memory_used_bytes", "gauge", "Device memory in use.",
      [](R g) { return g.memory_used_bytes; }, 1, labels);
  GpuFamily<uint64_t>(
      w, s, "seedance_gpu_memory_total_bytes", "gauge", "Device memory.",
      [](R g) { return g.memory_total_bytes; }, 1, labels);
  GpuFamily<double>(
      w, s, "seedance_gpu_power_watts", "gauge", "Board power draw.",
      [](R g) { return g.power_watts; }, 1, labels);
  GpuFamily<uint64_t>(
      w, s, "seedance_gpu_energy_joules_total", "counter", "Energy used since the driver loaded.",
      [](R g) { return g.energy_millijoules; }, 1e-3, labels);
  GpuFamily<double>(
      w, s, "seedance_gpu_temperature_celsius", "gauge", "GPU die temperature.",
      [](R g) { return g.temperature_celsius; }, 1, labels);
  GpuFamily<uint32_t>(
      w, s, "seedance_gpu_sm_clock_hertz", "gauge", "SM clock.", [](R g) { return g.sm_clock_mhz; },
      1e6, labels);
  GpuFamily<uint32_t>(
      w, s, "seedance_gpu_memory_clock_hertz", "gauge", "Memory clock.",
      [](R g) { return g.memory_clock_mhz; }, 1e6, labels);
  GpuFamily<uint64_t>(
      w, s, "seedance_gpu_pcie_transmit_bytes_per_second", "gauge",
      "PCIe transmit throughput over NVML's 20 ms window.",
      [](R g) { return g.pcie_tx_bytes_per_s; }, 1, labels);
  GpuFamily<uint64_t>(
      w, s, "seedance_gpu_pcie_receive_bytes_per_second", "gauge",
      "PCIe receive throughput over NVML's 20 ms window.",
      [](R g) { return g.pcie_rx_bytes_per_s; }, 1, labels);
  GpuFamily<uint64_t>(
      w, s, "seedance_gpu_nvlink_transmit_bytes_total", "counter",
      "NVLink data bytes transmitted, all links.", [](R g) { return g.nvlink_tx_bytes; }, 1,
      labels);
  GpuFamily<uint64_t>(
      w, s, "seedance_gpu_nvlink_receive_bytes_total", "counter",
      "NVLink data bytes received, all links.", [](R g) { return g.nvlink_rx_bytes; }, 1, labels);
}

void DcgmGpuFamilies(Writer& w, const Snapshot& s, const ExpositionContext& c) {
  auto labels = [&c](const port::NvmlReading& g) -> Labels {
    // dcgm-exporter's pci_bus_id has the 8-digit domain of NVML.
    return {{"gpu", std::to_string(g.index)},
            {"UUID", g.uuid},
            {"pci_bus_id", "0000" + g.pci_address},
            {"device", "nvidia" + std::to_string(g.index)},
            {"modelName", g.name},
            {"Hostname", c.hostname}};
  };
  using R = const port::NvmlReading&;
  GpuFamily<double>(
      w, s, "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).",
      [](R g) { return g.gpu_util_pct; }, 1, labels);
  GpuFamily<double>(
      w, s, "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).",
      [](R g) { return g.memory_util_pct; }, 1, labels);
  // DCGM reports whole MiB.
  auto mib = [](std::optional<uint64_t> bytes) -> std::optional<uint64_t> {
    if (bytes) return *bytes >> 20;
    return std::nullopt;
  };
  GpuFamily<uint64_t>(
      w, s, "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).",
      [&](R g) { return mib(g.memory_used_bytes); }, 1, labels);
  GpuFamily<uint64_t>(
      w, s, "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).",
      [](R g) -> std::optional<uint64_t> {
        if (g.memory_total_bytes && g.memory_used_bytes &&
            *g.memory_total_bytes >= *g.memory_used_bytes) {
          return (*g.memory_total_bytes >> 20) - (*g.memory_used_bytes >> 20);
        }
        return std::nullopt;
      },
      1, labels);
  GpuFamily<double>(
      w, s, "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).",
      [](R g) { return g.power_watts; }, 1, labels);
  GpuFamily<uint64_t>(
      w, s, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
      "Total energy consumption since boot (in mJ).", [](R g) { return g.energy_millijoules; }, 1,
      labels);
  GpuFamily<double>(
      w, s, "DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).",
      [](R g) { return g.temperature_celsius; }, 1, labels);
  GpuFamily<uint32_t>(
      w, s, "DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).",
      [](R g) { return g.sm_clock_mhz; }, 1, labels);
  GpuFamily<uint32_t>(
      w, s, "DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).",
      [](R g) { return g.memory_clock_mhz; }, 1, labels);
  GpuFamily<uint64_t>(
      w, s, "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge",
      "The rate of data transmitted over the PCIe bus (in bytes per second).",
      [](R g) { return g.pcie_tx_bytes_per_s; }, 1, labels);
  GpuFamily<uint64_t>(
      w, s, "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge",
      "The rate of data received over the PCIe bus (in bytes per second).",
      [](R g) { return g.pcie_rx_bytes_per_s; }, 1, labels);
  if (c.previous != nullptr) {
    const double dt = static_cast<double>(s.unix_nanos - c.previous->unix_nanos) / 1e9;
    auto rate = [&](R g, bool tx) -> std::optional<double> {
      if (dt <= 0) return std::nullopt;
      for (const auto& p : c.previous->gpus) {
        if (p.index != g.index) continue;
        const auto& now = tx ? g.nvlink_tx_bytes : g.nvlink_rx_bytes;
        const auto& before = tx ? p.nvlink_tx_bytes : p.nvlink_rx_bytes;
        if (now && before && *now >= *before) return static_cast<double>(*now - *before) / dt;
      }
      return std::nullopt;
    };
    GpuFamily<double>(
        w, s, "DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge",
        "The rate of data transmitted over NVLink (in bytes per second).",
        [&](R g) { return rate(g, true); }, 1, labels);
    GpuFamily<double>(
        w, s, "DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge",
        "The rate of data received over NVLink (in bytes per second).",
        [&](R g) { return rate(g, false); }, 1, labels);
  }
}

}  // namespace

std::string RenderPrometheus(const Snapshot& s, Naming naming, const ExpositionContext& c) {
  Writer w;
  w.Family("seedance_probe_info", "gauge", "Seedance probe build and GPU driver (value is 1).");
  w.Sample({{"version", c.version}, {"driver_version", c.driver_version}, {"hostname", c.hostname}},
           1);
  w.Family("seedance_probe_sample_timestamp_seconds", "gauge",
           "When the probe took the sample these values come from (Unix time).");
  const int64_t whole_ms = s.unix_nanos / 1000000;  // truncated on purpose
  w.Sample({}, static_cast<double>(whole_ms) / 1000.0);
  w.Family("seedance_probe_gpus", "gauge", "GPUs the probe reads (0 without NVML).");
  w.Sample({}, static_cast<double>(s.gpus.size()));
  HostFamilies(w, s);
  if (naming == Naming::kDcgm) {
    DcgmGpuFamilies(w, s, c);
  } else {
    SeedanceGpuFamilies(w, s);
  }
  return w.str();
}

}  // namespace seedance::probe
