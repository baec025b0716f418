// Private to src/cost: the built-in table behind GpuCatalog::BuiltIn().
#pragma once

#include <vector>

#include "seedance/cost/gpu_catalog.h"

namespace seedance::cost::internal {

std::vector<GpuSpec> BuiltInGpus();

}  // namespace seedance::cost::internal
