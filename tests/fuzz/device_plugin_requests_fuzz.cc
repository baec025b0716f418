// Fuzz target (libFuzzer): what kubelet sends the node agent (node/device_plugin.h) and what the
// API server answers it (node/allocation.h). The first byte picks:
//   0  an AllocateRequest in protobuf's wire format, each container's IDs matched against a
//      fixed node of 2 GPUs and 4 pods (MatchAllocation);
//   1  a PreferredAllocationRequest, answered by PreferredDevices;
//   2  a PodList as JSON (ParseAgentPodList), then matched.
// Contract: every input is accepted or refused, never a crash; an accepted match is a pending pod
// on the node with a container asking for exactly as many devices, no device named twice; a
// preference is empty or exactly allocation_size IDs, all of must_include, each available or
// required, none twice.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "deviceplugin_v1beta1.pb.h"
#include "seedance/node/allocation.h"

namespace {

namespace n = seedance::node;

std::vector<n::AgentGpu> Gpus() {
  std::vector<n::AgentGpu> g(2);
  g[0].index = 0;
  g[0].uuid = "GPU-a";
  g[1].index = 1;  // no UUID: "gpu1::slot"
  return g;
}

std::vector<n::AgentPod> Pods() {
  std::vector<n::AgentPod> pods;
  const int64_t milli[] = {1, 3, 500, 2000};
  for (int k = 0; k < 4; ++k) {
    n::AgentPod p;
    p.ns = "d";
    p.name = "p" + std::to_string(k);
    p.node_name = "n1";
    p.phase = "Pending";
    p.created = std::to_string(k);
    p.assignment = k == 3 ? std::vector<int>{0, 1} : std::vector<int>{k % 2};
    p.has_assignment = true;
    p.containers = {{"c", milli[k]}};
    pods.push_back(p);
  }
  return pods;
}

void CheckMatch(const std::vector<n::AgentPod>& pods, const std::vector<std::string>& ids) {
  auto m = n::MatchAllocation(pods, "n1", Gpus(), ids);
  if (!m.ok()) return;
  if (m->pod >= pods.size()) __builtin_trap();
  const n::AgentPod& p = pods[m->pod];
  if (p.node_name != "n1") __builtin_trap();
  if (std::set<std::string>(ids.begin(), ids.end()).size() != ids.size()) __builtin_trap();
  if (m->repeat) return;
  bool sized = false;
  for (const auto& c : p.containers) {
    sized = sized || (c.name == m->container && c.milli == static_cast<int64_t>(ids.size()));
  }
  if (!sized || p.allocated.count(m->container)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string in(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto pods = Pods();
  switch (data[0] % 3) {
    case 0: {
      v1beta1::AllocateRequest req;
      if (!req.ParseFromString(in)) return 0;
      for (const auto& c : req.container_requests()) {
        CheckMatch(pods, std::vector<std::string>(c.devicesids().begin(), c.devicesids().end()));
      }
      break;
    }
    case 1: {
      v1beta1::PreferredAllocationRequest req;
      if (!req.ParseFromString(in)) return 0;
      for (const auto& c : req.container_requests()) {
        std::vector<std::string> available(c.available_deviceids().begin(),
                                           c.available_deviceids().end());
        std::vector<std::string> must(c.must_include_deviceids().begin(),
                                      c.must_include_deviceids().end());
        auto out = n::PreferredDevices(pods, "n1", Gpus(), available, must, c.allocation_size());
        if (out.empty()) continue;
        if (static_cast<int64_t>(out.size()) != c.allocation_size()) __builtin_trap();
        std::set<std::string> allowed(available.begin(), available.end());
        allowed.insert(must.begin(), must.end());
        std::set<std::string> seen;
        for (const auto& id : out) {
          if (!allowed.count(id) || !seen.insert(id).second) __builtin_trap();
        }
        for (const auto& id : must) {
          if (!seen.count(id)) __builtin_trap();
        }
      }
      break;
    }
    default: {
      auto list = n::ParseAgentPodList(in, "PodList");
      if (!list.ok()) return 0;
      CheckMatch(*list, {"GPU-a::000", "GPU-a::001", "GPU-a::002"});
      CheckMatch(*list, {"gpu1::999"});
      break;
    }
  }
  return 0;
}
