// Kubernetes resource quantities (feature SCHED-8: the extender reads node capacities and pod
// requests): "96", "500m", "1.5Gi", "129e6", "8000". The grammar is the API's:
//
//   quantity  = sign? digits ("." digits?)? suffix     or  sign? "." digits suffix
//   suffix    = "" | binarySI | decimalSI | ("e" | "E") sign? digits
//   binarySI  = Ki Mi Gi Ti Pi Ei                       (2^10 .. 2^60)
//   decimalSI = n u m k M G T P E                       (10^-9 .. 10^18; "E" alone is exa)
//
// Values are returned as integers rounded up, as the API's Value() and MilliValue() do
// ("0.1" CPU is 100 milli; "1.5" GPUs as a Value is 2). Exact: the digits are kept as an
// integer with a decimal scale and multiplied out in 128 bits; a result beyond int64 is an error.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/base/status.h"

namespace seedance::k8s {

// The quantity rounded up to a whole unit (bytes, GPUs, milli-GPU as an extended resource).
base::StatusOr<int64_t> ParseQuantity(std::string_view text, std::string_view where);
// The quantity × 1000 rounded up (CPU in milli-cores).
base::StatusOr<int64_t> ParseQuantityMilli(std::string_view text, std::string_view where);

}  // namespace seedance::k8s
