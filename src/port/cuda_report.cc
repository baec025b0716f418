// The CUDA report, one builder for the CLI and Python (cuda_info.h).
#include <string>

#include "seedance/port/cuda_info.h"

namespace seedance::port {
namespace {

// CUDA encodes versions as 1000 * major + 10 * minor: 13000 is "13.0".
std::string VersionText(int version) {
  if (version <= 0) return "none";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

base::Report CudaInfoToReport(const CudaInfo& info) {
  base::Report c;
  c["compiled"] = info.compiled;
  c["compiled_version"] = VersionText(info.compiled_version);
  c["driver_version"] = VersionText(info.driver_version);
  c["device_count"] = info.devices.size();
  if (!info.error.empty()) c["status"] = info.error;
  base::Report devices = base::Report::array();
  for (const auto& d : info.devices) {
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"memory_bytes", d.memory_bytes},
                       {"compute_capability",
                        std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)}});
  }
  c["devices"] = devices;
  return c;
}

}  // namespace seedance::port
