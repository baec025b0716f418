// Prometheus text exposition (format 0.0.4) of a probe snapshot (feature PROBE-2).
//
// Seedance naming: `seedance_` prefix, base units in the name (bytes,
// seconds, joules, hertz, ratio), `_total` on counters, HELP and TYPE lines
// for every family. DCGM naming renames the GPU families to the names and
// labels of NVIDIA's dcgm-exporter (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED,
// ... with gpu, UUID, device, modelName, Hostname, pci_bus_id), in DCGM's
// units (percent, MiB, MHz, mJ), so existing Grafana dashboards work
// unchanged; host families keep Seedance names. docs/design/node.md has the
// full table.
#pragma once

#include <string>
#include <string_view>

#include "seedance/base/prometheus_text.h"
#include "seedance/base/status.h"
#include "seedance/probe/probe.h"

namespace seedance::probe {

enum class Naming { kSeedance, kDcgm };
std::string_view NamingName(Naming naming);  // "seedance", "dcgm"
base::StatusOr<Naming> ParseNaming(std::string_view name, std::string_view where);

struct ExpositionContext {
  std::string hostname;
  std::string version;         // Seedance version, for seedance_probe_info
  std::string driver_version;  // NVIDIA driver, may be empty
  // The previous snapshot, for the rate families of DCGM naming (NVLink bytes
  // per second); null on the first scrape.
  const Snapshot* previous = nullptr;
};

std::string RenderPrometheus(const Snapshot& snapshot, Naming naming,
                             const ExpositionContext& context);

// Label escaping and number spelling (base/prometheus_text.h), as the probe's names.
using base::EscapeLabelValue;
using base::FormatSampleValue;

}  // namespace seedance::probe
