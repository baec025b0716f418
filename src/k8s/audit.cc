#include "seedance/k8s/audit.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "seedance/base/parse.h"
#include "src/k8s/json.h"

namespace seedance::k8s {
namespace {

using nlohmann::json;

base::StatusOr<json> Items(std::string_view text, const std::string& what) {
  json list = json::parse(text, nullptr, false);
  if (list.is_discarded() || !list.is_object() || !list.contains("items") ||
      !list["items"].is_array()) {
    return base::InvalidArgumentError("expected a list with items", what);
  }
  return list["items"];
}

// The assignment annotation's indices as written, repeats kept; nullopt when absent.
std::optional<std::vector<int64_t>> RawAssignment(const json& pod) {
  const json* a = nullptr;
  if (pod.contains("metadata") && pod["metadata"].is_object() &&
      pod["metadata"].contains("annotations") && pod["metadata"]["annotations"].is_object()) {
    const json& ann = pod["metadata"]["annotations"];
    auto it = ann.find(std::string(kAssignmentAnnotation));
    if (it != ann.end() && it->is_string()) a = &*it;
  }
  if (a == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  std::string_view rest = a->get_ref<const std::string&>();
  while (true) {
    const size_t comma = std::min(rest.find(','), rest.size());
    out.push_back(base::ParseInt64(rest.substr(0, comma)).value_or(-1));
    if (comma == rest.size()) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace

base::StatusOr<AuditReport> AuditGpus(std::string_view nodes_json, std::string_view pods_json) {
  SEEDANCE_ASSIGN_OR_RETURN(const json nodes, Items(nodes_json, "NodeList"));
  SEEDANCE_ASSIGN_OR_RETURN(const json pods, Items(pods_json, "PodList"));
  AuditReport r;
  std::map<std::string, int> gpus_of;
  for (size_t i = 0; i < nodes.size(); ++i) {
    SEEDANCE_ASSIGN_OR_RETURN(
        const KubeNode n, internal::KubeNodeFromJson(nodes[i], "items[" + std::to_string(i) + "]"));
    gpus_of[n.node.name] = n.node.gpu_count;
    ++r.nodes;
  }
  std::map<std::pair<std::string, int>, std::vector<std::string>> holders;
  for (size_t i = 0; i < pods.size(); ++i) {
    const std::string where = "PodList.items[" + std::to_string(i) + "]";
    // The assignment is read raw below (a broken one is a finding, not a reading error).
    json copy = pods[i];
    if (copy.contains("metadata") && copy["metadata"].is_object() &&
        copy["metadata"].contains("annotations") && copy["metadata"]["annotations"].is_object()) {
      copy["metadata"]["annotations"].erase(std::string(kAssignmentAnnotation));
    }
    SEEDANCE_ASSIGN_OR_RETURN(const KubePod p, internal::KubePodFromJson(copy, where));
    if (!p.holds_resources()) continue;
    ++r.pods;
    if (p.pod.num_gpu == 0) continue;
    ++r.gpu_pods;
    auto node = gpus_of.find(p.node_name);
    if (node == gpus_of.end()) {
      r.findings.push_back({"unknown-node", p.node_name, -1, p.pod.name});
      continue;
    }
    const auto raw = RawAssignment(pods[i]);
    if (!raw) {
      r.findings.push_back({"unassigned", p.node_name, -1, p.pod.name});
      continue;
    }
    std::set<int64_t> seen;
    for (int64_t g : *raw) {
      if (!seen.insert(g).second) {
        r.findings.push_back({"repeated", p.node_name, static_cast<int>(g),
                              p.pod.name + " names GPU " + std::to_string(g) + " twice"});
        continue;
      }
      if (g < 0 || g >= node->second) {
        r.findings.push_back(
            {"out-of-range", p.node_name, static_cast<int>(g),
             p.pod.name + ": the node has " + std::to_string(node->second) + " GPUs"});
        continue;
      }
      const std::pair<std::string, int> key{p.node_name, static_cast<int>(g)};
      r.gpu_milli[key] += p.pod.gpu_milli;
      holders[key].push_back(p.pod.name);
    }
    if (static_cast<int64_t>(raw->size()) != p.pod.num_gpu) {
      r.findings.push_back({"out-of-range", p.node_name, -1,
                            p.pod.name + ": " + std::to_string(raw->size()) + " GPUs assigned, " +
                                std::to_string(p.pod.num_gpu) + " requested"});
    }
  }
  for (const auto& [key, milli] : r.gpu_milli) {
    if (milli <= 1000) continue;
    std::string who;
    for (const auto& name : holders[key]) who += (who.empty() ? "" : ", ") + name;
    r.findings.push_back(
        {"over", key.first, key.second, std::to_string(milli) + " milli-GPU on one GPU: " + who});
  }
  return r;
}

base::Report AuditToReport(const AuditReport& audit) {
  base::Report r = base::Report::object();
  r["nodes"] = audit.nodes;
  r["pods_holding_resources"] = audit.pods;
  r["gpu_pods"] = audit.gpu_pods;
  int64_t milli = 0;
  for (const auto& [key, m] : audit.gpu_milli) milli += m;
  r["gpus_in_use"] = static_cast<int64_t>(audit.gpu_milli.size());
  r["gpu_milli_in_use"] = milli;
  base::Report findings = base::Report::array();
  for (const auto& f : audit.findings) {
    base::Report row = base::Report::object();
    row["kind"] = f.kind;
    row["node"] = f.node;
    row["gpu"] = static_cast<int64_t>(f.gpu);
    row["detail"] = f.detail;
    findings.push_back(row);
  }
  r["findings"] = findings;
  return r;
}

}  // namespace seedance::k8s
