// GPU readings for the probe: from NVML (port/nvml.h) on a machine with the
// NVIDIA driver, or from a fixture file that replays readings (tests, demos,
// a reading saved on another machine). No NVML is not an error: the source
// reports no GPUs and one note.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/port/nvml.h"

namespace seedance::probe {

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  virtual std::vector<port::NvmlReading> Read() = 0;
  // Why there are no GPU metrics (empty when there are).
  virtual std::string note() const = 0;
  virtual std::string driver_version() const = 0;
};

// NVML when it loads; otherwise a source with no GPUs and a note.
std::unique_ptr<GpuSource> NewNvmlGpuSource();

// Readings from a JSON file: {"driver_version": "...", "gpus": [{"index": 0,
// "name": ..., "uuid": ..., "pci_address": ..., "gpu_util_pct": 93, ...}]},
// field names as in port::NvmlReading. Each Read() advances the counters
// (energy, NVLink bytes) by the file's "per_read" increments when given, so a
// replay looks like a running GPU. Errors name the file and the field.
base::StatusOr<std::unique_ptr<GpuSource>> NewFixtureGpuSource(base::Env& env,
                                                               const std::string& file);

}  // namespace seedance::probe
