#include "seedance/topo/discover.h"

#include "seedance/topo/nvlink.h"

namespace seedance::topo {

base::StatusOr<Machine> DiscoverMachine(const std::string& root, const std::string& nvlink_from) {
  Machine m;
  m.env = base::NewPosixEnv({.root = root.empty() ? "/" : root});
  m.topology = DiscoverTopology(*m.env);
  if (!nvlink_from.empty()) {
    SEEDANCE_RETURN_IF_ERROR(
        LoadNvlinksFromSmiFile(m.topology, *base::Env::Default(), nvlink_from));
  } else if (root.empty() || root == "/") {
    if (!m.topology.gpus.empty()) {
      if (auto s = LoadNvlinksFromNvml(m.topology); !s.ok()) {
        m.topology.notes.push_back("no NVLink information: " + std::string(s.message()));
      }
    }
  }
  return m;
}

}  // namespace seedance::topo
