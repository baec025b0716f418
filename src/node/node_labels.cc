#include "seedance/node/node_labels.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "seedance/k8s/objects.h"
#include "seedance/node/gpu_health.h"

namespace seedance::node {

std::string GpuModelLabel(std::string_view name) {
  constexpr std::string_view kPrefix = "NVIDIA ";
  if (name.substr(0, kPrefix.size()) == kPrefix) name.remove_prefix(kPrefix.size());
  std::string out;
  for (unsigned char c : name) {
    const bool ok = std::isalnum(c) || c == '.' || c == '_' || c == '-';
    out += ok ? static_cast<char>(c) : '-';
  }
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  size_t start = 0;
  while (start < out.size() && !std::isalnum(static_cast<unsigned char>(out[start]))) ++start;
  return out.substr(start);
}

std::map<std::string, std::optional<std::string>> NodeLabels(const topo::Topology& topology,
                                                             const std::vector<AgentGpu>& gpus) {
  std::map<std::string, std::optional<std::string>> out;
  const std::string model_key(k8s::kGpuModelLabel), numa_key(k8s::kNumaNodesLabel),
      rdma_key(k8s::kRdmaNicsLabel);
  if (gpus.empty()) {
    out[model_key] = std::nullopt;
    out[numa_key] = std::nullopt;
  } else {
    const std::string model = GpuModelLabel(gpus.front().name);
    out[model_key] = model.empty() ? std::nullopt : std::optional<std::string>(model);
    std::set<int> numa;
    for (const AgentGpu& g : gpus) {
      if (g.numa_node >= 0) numa.insert(g.numa_node);
    }
    out[numa_key] = std::to_string(numa.empty() ? 1 : numa.size());
  }
  int rdma = 0;
  for (const topo::Nic& n : topology.nics) {
    if (n.kind == "infiniband" || n.kind == "roce") ++rdma;
  }
  out[rdma_key] = std::to_string(rdma);
  return out;
}

std::string NodePatch(const std::map<std::string, std::optional<std::string>>& labels,
                      const std::vector<AgentGpu>& gpus) {
  nlohmann::json l = nlohmann::json::object();
  for (const auto& [k, v] : labels) l[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  const std::string unhealthy = UnhealthyGpuList(gpus);
  nlohmann::json a = nlohmann::json::object();
  a[std::string(kUnhealthyGpusAnnotation)] =
      unhealthy.empty() ? nlohmann::json(nullptr) : nlohmann::json(unhealthy);
  return nlohmann::json{{"metadata", {{"labels", l}, {"annotations", a}}}}.dump();
}

}  // namespace seedance::node
