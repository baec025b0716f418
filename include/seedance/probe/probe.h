// The probe (feature PROBE-1): one Snapshot = host counters + GPU readings at an
// instant; a window between two snapshots gives the values people read
// ("gpu.util 93 %", "net.out_bytes 1.4 GB/s"): rates for counters, the later
// reading for gauges. Rules (rules.h) turn window values into findings; the
// exporter (exposition.h, exporter.h) serves snapshots to Prometheus.
//
// Thread safety: a Probe is used from one thread at a time.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/port/nvml.h"
#include "seedance/probe/gpu.h"
#include "seedance/probe/host.h"

namespace seedance::probe {

struct Snapshot {
  int64_t unix_nanos = 0;
  HostReading host;
  std::vector<port::NvmlReading> gpus;
  std::vector<std::string> notes;
};

class Probe {
 public:
  // `gpus` may be null (no GPU metrics). The NIC line rates come from sysfs
  // through `env` once, at construction.
  Probe(base::Env& env, std::unique_ptr<GpuSource> gpus, HostOptions options);

  base::StatusOr<Snapshot> Read();

  const std::string& hostname() const { return hostname_; }
  std::string driver_version() const { return gpus_ ? gpus_->driver_version() : ""; }
  // Line rate of an interface in bytes/s (0 when unknown).
  double LineRateBytesPerSecond(const std::string& interface) const;

 private:
  base::Env& env_;
  std::unique_ptr<GpuSource> gpus_;
  HostOptions options_;
  std::string hostname_;
  std::map<std::string, double> line_rates_;
};

// One value of a window, named as the probe prints it: "gpu.util", "net.out_bytes", ...
struct Value {
  std::string metric;
  std::vector<std::pair<std::string, std::string>> labels;  // ("gpu", "0"), ("interface", "eth0")
  double value = 0;
  std::string unit;  // "%", "B/s", "B", "W", "MHz", "C", "cores"
};

// Every value of the window (before, after]; metrics filters by name prefix
// ("gpu" keeps gpu.*, "net.out_bytes" keeps that one). Empty filter: all.
std::vector<Value> WindowValues(const Probe& probe, const Snapshot& before, const Snapshot& after,
                                const std::vector<std::string>& metrics = {});

// The names WindowValues can produce, for --metrics validation and docs.
const std::vector<std::string>& ValueNames();

base::Report ValuesToReport(const std::vector<Value>& values);

// One measured sample for the power model's fit (`seedancectl cost power-fit`, feature COST-7),
// from a window's values (unfiltered) and its closing snapshot: the measured power is RAPL's
// host.power_total plus every GPU's board power (gpu.power), the load the CPU utilization and,
// when NVML gives utilization, power and power limit for every GPU, their mean utilization (0..1),
// count and mean limit (the TDP column of the fit). nullopt when the window has no power reading
// (no RAPL and no GPU power).
struct PowerSampleRow {
  double watts = 0;
  double cpu_utilization_pct = 0;
  bool has_gpus = false;
  double gpu_utilization = 0;
  int gpus = 0;
  double gpu_tdp_watts = 0;
};
std::optional<PowerSampleRow> PowerSampleOf(const std::vector<Value>& values,
                                            const Snapshot& after);

// The samples as the CSV cost power-fit reads: watts,cpu_utilization_pct and, when the first row
// has GPUs, gpu_utilization,gpus,gpu_tdp_watts (rows without them leave those columns 0).
std::string PowerSamplesCsv(const std::vector<PowerSampleRow>& rows);

}  // namespace seedance::probe
