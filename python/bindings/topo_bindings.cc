// seedance._core's node-level functions (feature TOPO-1, TOPO-2): topology as
// JSON text, affinity checks, and binding the calling thread.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "python/bindings/raise.h"
#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/topo/affinity.h"
#include "seedance/topo/bind.h"
#include "seedance/topo/topology.h"

namespace py = pybind11;

namespace seedance::python {
namespace {

topo::Topology Discover(const std::string& root) {
  auto env = base::NewPosixEnv({.root = root.empty() ? "/" : root});
  return topo::DiscoverTopology(*env);
}

port::MemoryPolicy Policy(const std::string& memory) {
  return ValueOrRaise(port::ParseMemoryPolicy(memory, "memory"));
}

}  // namespace

void BindTopo(py::module_& m) {
  m.def(
      "topology_json",
      [](const std::string& root) {
        return base::DumpJson(topo::TopologyToReport(Discover(root)));
      },
      py::arg("root") = "");
  m.def(
      "affinity_check_json",
      [](int pid, const std::string& root, double remote_limit) {
        auto env = base::NewPosixEnv({.root = root.empty() ? "/" : root});
        const auto t = topo::DiscoverTopology(*env);
        auto p = ValueOrRaise(topo::ReadProcessPlacement(*env, pid, t));
        topo::AffinityOptions o;
        o.remote_to_local_limit = remote_limit;
        return base::DumpJson(topo::AffinityToReport(topo::CheckAffinity(t, p, o), p));
      },
      py::arg("pid"), py::arg("root") = "", py::arg("remote_limit") = 0.30);
  m.def(
      "bind_to_numa_node",
      [](int node, const std::string& memory) {
        RaiseIfError(topo::BindToNumaNode(Discover(""), node, Policy(memory)));
      },
      py::arg("node"), py::arg("memory") = "preferred");
  m.def(
      "placement_near_gpu",
      [](int gpu, const std::string& root) {
        const auto p = ValueOrRaise(topo::PlacementNearGpu(Discover(root), gpu));
        return py::make_tuple(p.cpus, p.numa_node);
      },
      py::arg("gpu"), py::arg("root") = "");
  m.def(
      "bind_calling_thread",
      [](const std::vector<int>& cpus, int node, const std::string& memory) {
        RaiseIfError(port::BindCallingThread(cpus, node, Policy(memory)));
      },
      py::arg("cpus"), py::arg("node") = -1, py::arg("memory") = "none");
  m.def("numa_max_node", &port::NumaMaxNode);
  m.def("calling_thread_cpus", &port::CallingThreadCpus);
}

}  // namespace seedance::python
