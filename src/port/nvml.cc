#include "seedance/port/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace seedance::port {

namespace {

// NVML's ABI, as in nvml.h (only what we call).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kSuccess = 0;

struct nvmlPciInfo_t {  // nvmlDeviceGetPciInfo_v3 / RemotePciInfo_v2 layout
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
union nvmlValue_t {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  int siVal;
};
struct nvmlFieldValue_t {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};
static_assert(sizeof(nvmlFieldValue_t) == 40, "NVML field value layout");

constexpr unsigned kClockSm = 1, kClockMem = 2;
constexpr int kPcieTx = 0, kPcieRx = 1;
constexpr unsigned kFieldNvlinkTx = 138, kFieldNvlinkRx = 139;  // KiB counters
constexpr unsigned kNvlinkMaxLinks = 18;
constexpr unsigned kScopeAllLinks = 0xFFFFFFFF;
constexpr int kMemoryErrorUncorrected = 1,
              kVolatileEcc = 0;                             // nvmlMemoryErrorType_t, EccCounterType
constexpr unsigned long long kEventXidCriticalError = 0x8;  // nvmlEventTypeXidCriticalError
struct nvmlEventData_t {                                    // nvmlEventData_t (driver >= 450)
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};

std::string NormalizeBusId(const char* bus_id) {
  std::string s(bus_id, strnlen(bus_id, 32));
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  // NVML: "00000000:18:00.0" (8-digit domain); sysfs: "0000:18:00.0".
  const size_t colon = s.find(':');
  if (colon == 8 && s.compare(0, 4, "0000") == 0) s = s.substr(4);
  return s;
}

std::optional<uint64_t> FieldAsU64(const nvmlFieldValue_t& f) {
  if (f.nvmlReturn != kSuccess) return std::nullopt;
  switch (f.valueType) {
    case 0:
      return static_cast<uint64_t>(f.value.dVal);
    case 1:
      return f.value.uiVal;
    case 2:
      return f.value.ulVal;
    case 3:
      return f.value.ullVal;
    case 4:
      return static_cast<uint64_t>(f.value.sllVal);
    case 5:
      return static_cast<uint64_t>(f.value.siVal);
  }
  return std::nullopt;
}

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*Init)() = nullptr;
  nvmlReturn_t (*Shutdown)() = nullptr;
  nvmlReturn_t (*DriverVersion)(char*, unsigned) = nullptr;
  nvmlReturn_t (*Count)(unsigned*) = nullptr;
  nvmlReturn_t (*Handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*Name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*Uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*Pci)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*Utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*Memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*Power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*PowerLimit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*Energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*Temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*Clock)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*Pcie)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*Fields)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;
  nvmlReturn_t (*LinkState)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*LinkRemotePci)(nvmlDevice_t, unsigned, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*Ecc)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*EventSetCreate)(void**) = nullptr;
  nvmlReturn_t (*EventSetFree)(void*) = nullptr;
  nvmlReturn_t (*RegisterEvents)(nvmlDevice_t, unsigned long long, void*) = nullptr;
  nvmlReturn_t (*EventSetWait)(void*, nvmlEventData_t*, unsigned) = nullptr;
};

base::StatusOr<std::unique_ptr<Nvml>> Nvml::Load() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return base::UnavailableError("NVML not found (libnvidia-ml.so.1: no NVIDIA driver)");
  }
  auto api = std::make_unique<Api>();
  auto bind = [lib](auto& fn, const char* name, bool required) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    return fn != nullptr || !required;
  };
  bool ok = bind(api->Init, "nvmlInit_v2", true) && bind(api->Shutdown, "nvmlShutdown", true) &&
            bind(api->Count, "nvmlDeviceGetCount_v2", true) &&
            bind(api->Handle, "nvmlDeviceGetHandleByIndex_v2", true);
  if (!ok) {
    dlclose(lib);
    return base::UnavailableError("libnvidia-ml.so.1 lacks nvmlInit_v2 (driver too old)");
  }
  bind(api->DriverVersion, "nvmlSystemGetDriverVersion", false);
  bind(api->Name, "nvmlDeviceGetName", false);
  bind(api->Uuid, "nvmlDeviceGetUUID", false);
  bind(api->Pci, "nvmlDeviceGetPciInfo_v3", false);
  bind(api->Utilization, "nvmlDeviceGetUtilizationRates", false);
  bind(api->Memory, "nvmlDeviceGetMemoryInfo", false);
  bind(api->Power, "nvmlDeviceGetPowerUsage", false);
  bind(api->PowerLimit, "nvmlDeviceGetEnforcedPowerLimit", false);
  bind(api->Energy, "nvmlDeviceGetTotalEnergyConsumption", false);
  bind(api->Temperature, "nvmlDeviceGetTemperature", false);
  bind(api->Clock, "nvmlDeviceGetClockInfo", false);
  bind(api->Pcie, "nvmlDeviceGetPcieThroughput", false);
  bind(api->Fields, "nvmlDeviceGetFieldValues", false);
  bind(api->LinkState, "nvmlDeviceGetNvLinkState", false);
  bind(api->LinkRemotePci, "nvmlDeviceGetNvLinkRemotePciInfo_v2", false);
  bind(api->Ecc, "nvmlDeviceGetTotalEccErrors", false);
  bind(api->EventSetCreate, "nvmlEventSetCreate", false);
  bind(api->EventSetFree, "nvmlEventSetFree", false);
  bind(api->RegisterEvents, "nvmlDeviceRegisterEvents", false);
  bind(api->EventSetWait, "nvmlEventSetWait_v2", false);
  if (const nvmlReturn_t rc = api->Init(); rc != kSuccess) {
    dlclose(lib);
    return base::UnavailableError("nvmlInit failed with NVML error " + std::to_string(rc));
  }
  std::unique_ptr<Nvml> nvml(new Nvml());
  nvml->library_ = lib;
  unsigned count = 0;
  if (api->Count(&count) == kSuccess) nvml->count_ = static_cast<int>(count);
  if (api->DriverVersion) {
    char v[96] = {};
    if (api->DriverVersion(v, sizeof(v)) == kSuccess) nvml->driver_version_ = v;
  }
  nvml->api_ = std::move(api);
  return nvml;
}

Nvml::~Nvml() {
  if (event_set_ != nullptr && api_->EventSetFree) api_->EventSetFree(event_set_);
  if (api_ && api_->Shutdown) api_->Shutdown();
  if (library_) dlclose(library_);
}

NvmlReading Nvml::Read(int index) const {
  NvmlReading r;
  r.index = index;
  nvmlDevice_t dev = nullptr;
  if (api_->Handle(static_cast<unsigned>(index), &dev) != kSuccess) return r;
  char text[96] = {};
  if (api_->Name && api_->Name(dev, text, sizeof(text)) == kSuccess) r.name = text;
  if (api_->Uuid && api_->Uuid(dev, text, sizeof(text)) == kSuccess) r.uuid = text;
  nvmlPciInfo_t pci{};
  if (api_->Pci && api_->Pci(dev, &pci) == kSuccess) r.pci_address = NormalizeBusId(pci.busId);
  nvmlUtilization_t util{};
  if (api_->Utilization && api_->Utilization(dev, &util) == kSuccess) {
    r.gpu_util_pct = util.gpu;
    r.memory_util_pct = util.memory;
  }
  nvmlMemory_t mem{};
  if (api_->Memory && api_->Memory(dev, &mem) == kSuccess) {
    r.memory_used_bytes = mem.used;
    r.memory_total_bytes = mem.total;
  }
  unsigned u = 0;
  if (api_->Power && api_->Power(dev, &u) == kSuccess) r.power_watts = u / 1000.0;
  if (api_->PowerLimit && api_->PowerLimit(dev, &u) == kSuccess) r.power_limit_watts = u / 1000.0;
  unsigned long long mj = 0;
  if (api_->Energy && api_->Energy(dev, &mj) == kSuccess) r.energy_millijoules = mj;
  if (api_->Temperature && api_->Temperature(dev, 0, &u) == kSuccess) r.temperature_celsius = u;
  if (api_->Clock && api_->Clock(dev, kClockSm, &u) == kSuccess) r.sm_clock_mhz = u;
  if (api_->Clock && api_->Clock(dev, kClockMem, &u) == kSuccess) r.memory_clock_mhz = u;
  if (api_->Pcie && api_->Pcie(dev, kPcieTx, &u) == kSuccess) r.pcie_tx_bytes_per_s = u * 1024ull;
  if (api_->Pcie && api_->Pcie(dev, kPcieRx, &u) == kSuccess) r.pcie_rx_bytes_per_s = u * 1024ull;
  if (api_->Fields) {
    nvmlFieldValue_t f[2]{};
    f[0].fieldId = kFieldNvlinkTx;
    f[1].fieldId = kFieldNvlinkRx;
    f[0].scopeId = f[1].scopeId = kScopeAllLinks;
    if (api_->Fields(dev, 2, f) == kSuccess) {
      if (auto v = FieldAsU64(f[0])) r.nvlink_tx_bytes = *v * 1024;
      if (auto v = FieldAsU64(f[1])) r.nvlink_rx_bytes = *v * 1024;
    }
  }
  unsigned long long ecc = 0;
  if (api_->Ecc && api_->Ecc(dev, kMemoryErrorUncorrected, kVolatileEcc, &ecc) == kSuccess) {
    r.ecc_uncorrected_errors = ecc;
  }
  return r;
}

std::vector<std::pair<int, uint64_t>> Nvml::PollXidEvents() {
  std::vector<std::pair<int, uint64_t>> out;
  if (!api_->EventSetCreate || !api_->RegisterEvents || !api_->EventSetWait) return out;
  if (!events_tried_) {
    events_tried_ = true;
    if (api_->EventSetCreate(&event_set_) != kSuccess) {
      event_set_ = nullptr;
      return out;
    }
    for (int i = 0; i < count_; ++i) {
      nvmlDevice_t dev = nullptr;
      // A GPU that does not support the events (NVML_ERROR_NOT_SUPPORTED) is left out.
      if (api_->Handle(static_cast<unsigned>(i), &dev) == kSuccess) {
        api_->RegisterEvents(dev, kEventXidCriticalError, event_set_);
      }
    }
  }
  if (event_set_ == nullptr) return out;
  for (int guard = 0; guard < 1024; ++guard) {  // a storm of events cannot hold the caller
    nvmlEventData_t data{};
    if (api_->EventSetWait(event_set_, &data, 0) != kSuccess) break;  // NVML_ERROR_TIMEOUT: none
    for (int i = 0; i < count_; ++i) {
      nvmlDevice_t dev = nullptr;
      if (api_->Handle(static_cast<unsigned>(i), &dev) == kSuccess && dev == data.device) {
        out.push_back({i, data.eventData});
        break;
      }
    }
  }
  return out;
}

std::vector<std::pair<std::string, int>> Nvml::NvlinkPeers(int index) const {
  std::vector<std::pair<std::string, int>> peers;
  nvmlDevice_t dev = nullptr;
  if (!api_->LinkState || !api_->LinkRemotePci ||
      api_->Handle(static_cast<unsigned>(index), &dev) != kSuccess) {
    return peers;
  }
  for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
    int active = 0;
    if (api_->LinkState(dev, link, &active) != kSuccess || !active) continue;
    nvmlPciInfo_t pci{};
    if (api_->LinkRemotePci(dev, link, &pci) != kSuccess) continue;
    const std::string remote = NormalizeBusId(pci.busId);
    auto it = std::find_if(peers.begin(), peers.end(),
                           [&remote](const auto& p) { return p.first == remote; });
    if (it == peers.end()) {
      peers.push_back({remote, 1});
    } else {
      ++it->second;
    }
  }
  return peers;
}

}  // namespace seedance::port
