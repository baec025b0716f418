// NVLink sources for Topology::nvlinks: NVML on the machine itself, or a saved
// `nvidia-smi topo -m` printout (to inspect a machine from elsewhere).
#pragma once

#include <string>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/topo/topology.h"

namespace seedance::topo {

// Reads every GPU's active links through NVML. A link whose far end is not
// one of the topology's GPUs goes to an NVSwitch; two GPUs on switches get
// min(their switch links), as nvidia-smi shows them. Unavailable without
// NVML (the topology is left unchanged).
base::Status LoadNvlinksFromNvml(Topology& topology);

// Reads the NV# cells of a saved `nvidia-smi topo -m` output file.
base::Status LoadNvlinksFromSmiFile(Topology& topology, base::Env& env, const std::string& file);

}  // namespace seedance::topo
