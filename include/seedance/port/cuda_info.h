// What this build and this machine offer of CUDA. src/port is the only place
// in Seedance that touches the CUDA runtime; everything else asks here.
//
// Thread safety: both calls may be made from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::port {

struct CudaDevice {
  int index = 0;
  std::string name;
  int64_t memory_bytes = 0;
  int compute_major = 0;
  int compute_minor = 0;
};

struct CudaInfo {
  bool compiled = false;     // built with nvcc (SEEDANCE_WITH_CUDA)
  int compiled_version = 0;  // CUDART_VERSION at build time, e.g. 13000
  int driver_version = 0;    // 0 when no driver is loaded
  std::vector<CudaDevice> devices;
  std::string error;  // why no device is usable, when none is
};

// Never fails: an absent driver or device is reported in `error`.
CudaInfo QueryCuda();

// The report of `seedancectl version`'s "cuda" object and of seedance.cuda_info(): compiled,
// compiled_version and driver_version as "major.minor" ("none" when absent), device_count,
// status (only when no device is usable: why), devices [{index, name, memory_bytes,
// compute_capability "major.minor"}].
base::Report CudaInfoToReport(const CudaInfo& info);

// Runs y = a*x + y over 2^20 floats on device 0 and compares every element
// with the same computation done on the host. Unavailable when the build has
// no CUDA or the machine has no device; Internal on a wrong result.
base::Status CudaSelfTest();

}  // namespace seedance::port
