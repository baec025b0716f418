// NVML, loaded at run time with dlopen("libnvidia-ml.so.1") (feature PROBE-1):
// nothing links against the driver, and a machine without it gets
// Unavailable from Nvml::Load, not a failure to start.
//
// Only the calls Seedance uses are bound; their structures are declared here
// with NVML's ABI (nvml.h is not needed to build).
//
// Thread safety: NVML itself is thread-safe; one Nvml object may be shared.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::port {

// One reading of one GPU. A metric the GPU or driver does not support stays
// nullopt.
struct NvmlReading {
  int index = 0;
  std::string name;                       // "NVIDIA H200"
  std::string uuid;                       // "GPU-..."
  std::string pci_address;                // "0000:18:00.0", lower case, 4-digit domain
  std::optional<double> gpu_util_pct;     // time a kernel ran, last sample period
  std::optional<double> memory_util_pct;  // time device memory was read or written
  std::optional<uint64_t> memory_used_bytes, memory_total_bytes;
  std::optional<double> power_watts;
  std::optional<double> power_limit_watts;     // the enforced limit (the board's TDP unless capped)
  std::optional<uint64_t> energy_millijoules;  // since the driver loaded
  std::optional<double> temperature_celsius;
  std::optional<uint32_t> sm_clock_mhz, memory_clock_mhz;
  std::optional<uint64_t> pcie_tx_bytes_per_s, pcie_rx_bytes_per_s;  // 20 ms window
  std::optional<uint64_t> nvlink_tx_bytes, nvlink_rx_bytes;          // counters since load
  // Health (the node agent): uncorrected ECC errors since the driver loaded, and the XIDs of
  // the critical-error events seen since the previous read (Nvml::PollXidEvents).
  std::optional<uint64_t> ecc_uncorrected_errors;
  std::vector<uint64_t> xid_errors;
};

class Nvml {
 public:
  // Unavailable when the library is missing or nvmlInit fails.
  static base::StatusOr<std::unique_ptr<Nvml>> Load();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::string& driver_version() const { return driver_version_; }
  int device_count() const { return count_; }

  NvmlReading Read(int index) const;
  // (GPU index, XID) of each critical-error event since the previous call, without waiting.
  // The first call registers every GPU for them; empty where the driver does not support it.
  std::vector<std::pair<int, uint64_t>> PollXidEvents();
  // (remote PCI address, active link count) for each NVLink peer of GPU `index`.
  std::vector<std::pair<std::string, int>> NvlinkPeers(int index) const;

  struct Api;  // the resolved entry points (nvml.cc)

 private:
  Nvml() = default;
  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  std::string driver_version_;
  int count_ = 0;
  void* event_set_ = nullptr;  // nvmlEventSet_t once PollXidEvents registered
  bool events_tried_ = false;
};

}  // namespace seedance::port
