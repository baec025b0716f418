// The node agent's GPUs as kubelet sees them (feature SCHED-8, the node half): one device-plugin
// device per milli-GPU of resource `seedance.io/gpu-milli`, so a pod's request (500 = half a
// GPU) is a count of devices and kubelet's own accounting agrees with the extender's.
//
// Granularity, decided (docs/design/node-agent.md): 1,000 devices per GPU. A coarser unit would
// need a second resource name whose count is not the extender's milli-GPU, or requests rounded
// to it; the cost of the fine one is the size of kubelet's device lists — 45 bytes an ID, about
// 0.4 MB in a ListAndWatch message for 8 GPUs (gRPC's default cap is 4 MiB), measured in
// bench/node/device_list.py.
//
// A device ID is "<GPU key>::<slot>": the GPU's UUID from NVML ("GPU-5b0e...", 40 characters), or
// "gpu<index>" when the source gives no UUID, then the slot 000..999. IDs stay with the physical
// GPU across reboots (kubelet checkpoints them), and they are at most 63 characters as the API
// requires.
//
// Thread safety: pure functions and values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/k8s/objects.h"

namespace seedance::node {

inline constexpr int kDevicesPerGpu = 1000;  // one device per milli-GPU
using k8s::kGpuMilliResource;
inline constexpr std::string_view kHealthy = "Healthy";
inline constexpr std::string_view kUnhealthy = "Unhealthy";

struct AgentGpu {
  int index = 0;       // NVML's index on this node (the extender's assignment numbers)
  std::string uuid;    // "GPU-..." or empty
  std::string name;    // "NVIDIA H200"
  int numa_node = -1;  // -1: unknown
  bool healthy = true;
  std::string why_unhealthy;  // the event that made it so
  // The key device IDs and the container's environment name this GPU by.
  std::string Key() const;
};

struct ShareDevice {
  std::string id;
  bool healthy = true;
  int numa_node = -1;
};

// Every GPU's kDevicesPerGpu devices, in GPU then slot order.
std::vector<ShareDevice> ShareDevices(const std::vector<AgentGpu>& gpus);

std::string ShareDeviceId(const AgentGpu& gpu, int slot);

// The position in `gpus` of the GPU a device ID names; NotFound for an ID of no GPU here, and
// InvalidArgument for one that is not "<key>::<slot>" with slot 000..999.
base::StatusOr<size_t> GpuOfDevice(const std::vector<AgentGpu>& gpus, std::string_view id);

// Sorted positions in `gpus` of the GPUs the IDs fall on, and how many IDs fall on each.
struct DeviceSpread {
  std::vector<size_t> gpus;
  std::vector<int64_t> counts;  // same order
};
base::StatusOr<DeviceSpread> SpreadOf(const std::vector<AgentGpu>& gpus,
                                      const std::vector<std::string>& ids);

// An order-independent fingerprint of a set of device IDs (16 hex digits): what the agent writes
// on a pod it allocated, so that kubelet's retry of the same Allocate gets the same answer.
std::string DeviceFingerprint(std::vector<std::string> ids);

}  // namespace seedance::node
