#include "seedance/node/gpu_shares.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "seedance/base/hash.h"

namespace seedance::node {

std::string AgentGpu::Key() const { return uuid.empty() ? "gpu" + std::to_string(index) : uuid; }

std::string ShareDeviceId(const AgentGpu& gpu, int slot) {
  char digits[8];
  std::snprintf(digits, sizeof digits, "%03d", slot);
  return gpu.Key() + "::" + digits;
}

std::vector<ShareDevice> ShareDevices(const std::vector<AgentGpu>& gpus) {
  std::vector<ShareDevice> out;
  out.reserve(gpus.size() * kDevicesPerGpu);
  for (const AgentGpu& g : gpus) {
    for (int slot = 0; slot < kDevicesPerGpu; ++slot) {
      out.push_back({ShareDeviceId(g, slot), g.healthy, g.numa_node});
    }
  }
  return out;
}

base::StatusOr<size_t> GpuOfDevice(const std::vector<AgentGpu>& gpus, std::string_view id) {
  const size_t sep = id.rfind("::");
  const std::string where = "device ID '" + std::string(id.substr(0, 80)) + "'";
  if (sep == std::string_view::npos || id.size() - sep != 5) {
    return base::InvalidArgumentError("expected <GPU key>::<slot 000..999>", where);
  }
  const std::string_view slot = id.substr(sep + 2);
  for (char c : slot) {
    if (c < '0' || c > '9') return base::InvalidArgumentError("the slot is not 3 digits", where);
  }
  const std::string_view key = id.substr(0, sep);
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i].Key() == key) return i;
  }
  return base::NotFoundError("no GPU '" + std::string(key.substr(0, 64)) + "' on this node", where);
}

base::StatusOr<DeviceSpread> SpreadOf(const std::vector<AgentGpu>& gpus,
                                      const std::vector<std::string>& ids) {
  std::map<size_t, int64_t> count;
  for (const std::string& id : ids) {
    SEEDANCE_ASSIGN_OR_RETURN(size_t g, GpuOfDevice(gpus, id));
    ++count[g];
  }
  DeviceSpread out;
  for (const auto& [g, n] : count) {
    out.gpus.push_back(g);
    out.counts.push_back(n);
  }
  return out;
}

std::string DeviceFingerprint(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  uint64_t h = base::Mix64(ids.size());
  for (const std::string& id : ids) {
    for (unsigned char c : id) h = base::Mix64(h ^ c);
    h = base::Mix64(h ^ 0xFFu);  // the end of an ID: "ab","c" and "a","bc" differ
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace seedance::node
