// A machine's topology as the commands read it: sysfs under a root directory (a saved or fake
// tree, or "/"), with NVLink links from a saved `nvidia-smi topo -m` printout or, on the real
// machine with GPUs, from NVML (a failure there becomes a note, not an error).
//
// Thread safety: a Machine is one caller's.
#pragma once

#include <memory>
#include <string>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/topo/topology.h"

namespace seedance::topo {

struct Machine {
  std::unique_ptr<base::Env> env;  // reads under the root
  Topology topology;
};

// `nvlink_from` is read from the real file system, not under `root`. An error only when that file
// cannot be read or parsed.
base::StatusOr<Machine> DiscoverMachine(const std::string& root, const std::string& nvlink_from);

}  // namespace seedance::topo
