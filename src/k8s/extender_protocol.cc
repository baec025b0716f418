#include "seedance/k8s/extender_protocol.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "seedance/base/printable.h"
#include "src/k8s/json.h"

namespace seedance::k8s {
namespace {

using nlohmann::json;

bool SameKey(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The value at `key` matched without regard to case; null when missing.
const json* Field(const json& j, std::string_view key) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (SameKey(it.key(), key)) return it->is_null() ? nullptr : &*it;
  }
  return nullptr;
}

base::StatusOr<json> ParseBody(std::string_view body, std::string_view what) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return base::InvalidArgumentError("not valid JSON", std::string(what));
  if (!j.is_object()) return base::InvalidArgumentError("expected an object", std::string(what));
  return j;
}

base::StatusOr<std::string> StringField(const json& j, std::string_view key,
                                        const std::string& where) {
  const json* v = Field(j, key);
  if (v == nullptr) return std::string();
  if (!v->is_string()) {
    return base::InvalidArgumentError("expected a string", where + "." + std::string(key));
  }
  return v->get<std::string>();
}

base::StatusOr<KubePod> PodField(const json& j, const std::string& where) {
  const json* pod = Field(j, "Pod");
  if (pod == nullptr) return base::InvalidArgumentError("expected a Pod", where + ".Pod");
  return internal::KubePodFromJson(*pod, where + ".Pod");
}

// Invalid UTF-8 in a string (a node name, an error quoting input) is replaced, never thrown:
// a response always encodes.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::vector<std::string> ExtenderArgs::candidate_names() const {
  if (node_names) return *node_names;
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (const auto& n : nodes) names.push_back(n.node.name);
  return names;
}

base::StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view body) {
  const std::string where = "ExtenderArgs";
  SEEDANCE_ASSIGN_OR_RETURN(const json j, ParseBody(body, where));
  ExtenderArgs args;
  SEEDANCE_ASSIGN_OR_RETURN(args.pod, PodField(j, where));
  if (const json* names = Field(j, "NodeNames")) {
    if (!names->is_array())
      return base::InvalidArgumentError("expected an array", where + ".NodeNames");
    args.node_names.emplace();
    for (size_t i = 0; i < names->size(); ++i) {
      if (!(*names)[i].is_string()) {
        return base::InvalidArgumentError("expected a node name",
                                          where + ".NodeNames[" + std::to_string(i) + "]");
      }
      args.node_names->push_back((*names)[i].get<std::string>());
    }
  }
  if (const json* nodes = Field(j, "Nodes")) {
    const json* items = nodes->is_object() ? Field(*nodes, "items") : nullptr;
    if (!nodes->is_object() || (items != nullptr && !items->is_array())) {
      return base::InvalidArgumentError("expected a NodeList", where + ".Nodes");
    }
    for (size_t i = 0; items != nullptr && i < items->size(); ++i) {
      SEEDANCE_ASSIGN_OR_RETURN(
          KubeNode n, internal::KubeNodeFromJson(
                          (*items)[i], where + ".Nodes.items[" + std::to_string(i) + "]"));
      args.nodes.push_back(std::move(n));
    }
  }
  return args;
}

base::StatusOr<ExtenderBindingArgs> DecodeBindingArgs(std::string_view body) {
  const std::string where = "ExtenderBindingArgs";
  SEEDANCE_ASSIGN_OR_RETURN(const json j, ParseBody(body, where));
  ExtenderBindingArgs a;
  SEEDANCE_ASSIGN_OR_RETURN(a.pod_name, StringField(j, "PodName", where));
  SEEDANCE_ASSIGN_OR_RETURN(a.pod_namespace, StringField(j, "PodNamespace", where));
  SEEDANCE_ASSIGN_OR_RETURN(a.pod_uid, StringField(j, "PodUID", where));
  SEEDANCE_ASSIGN_OR_RETURN(a.node, StringField(j, "Node", where));
  if (a.pod_name.empty() || a.node.empty()) {
    return base::InvalidArgumentError("expected PodName and Node", where);
  }
  if (a.pod_namespace.empty()) a.pod_namespace = "default";
  return a;
}

base::StatusOr<ExtenderPreemptionArgs> DecodePreemptionArgs(std::string_view body) {
  const std::string where = "ExtenderPreemptionArgs";
  SEEDANCE_ASSIGN_OR_RETURN(const json j, ParseBody(body, where));
  ExtenderPreemptionArgs a;
  SEEDANCE_ASSIGN_OR_RETURN(a.pod, PodField(j, where));
  for (const char* key : {"NodeNameToMetaVictims", "NodeNameToVictims"}) {
    const json* map = Field(j, key);
    if (map == nullptr) continue;
    if (!map->is_object()) {
      return base::InvalidArgumentError("expected an object", where + "." + key);
    }
    for (auto it = map->begin(); it != map->end(); ++it) {
      const std::string at = where + "." + key + "[" + it.key() + "]";
      MetaVictims& v = a.victims[it.key()];
      if (it->is_null()) continue;
      if (!it->is_object()) return base::InvalidArgumentError("expected Victims", at);
      if (const json* n = Field(*it, "NumPDBViolations")) {
        if (!n->is_number_integer()) {
          return base::InvalidArgumentError("expected an integer", at + ".NumPDBViolations");
        }
        v.num_pdb_violations = n->get<int64_t>();
      }
      const json* pods = Field(*it, "Pods");
      if (pods == nullptr) continue;
      if (!pods->is_array()) return base::InvalidArgumentError("expected an array", at + ".Pods");
      for (size_t i = 0; i < pods->size(); ++i) {
        const std::string p = at + ".Pods[" + std::to_string(i) + "]";
        const json& pod = (*pods)[i];
        if (!pod.is_object()) return base::InvalidArgumentError("expected an object", p);
        std::string uid;
        if (std::string_view(key) == "NodeNameToMetaVictims") {
          SEEDANCE_ASSIGN_OR_RETURN(uid, StringField(pod, "UID", p));
        } else {
          SEEDANCE_ASSIGN_OR_RETURN(const KubePod victim, internal::KubePodFromJson(pod, p));
          uid = victim.uid;
        }
        if (uid.empty()) return base::InvalidArgumentError("expected a pod UID", p);
        v.pod_uids.push_back(std::move(uid));
      }
    }
  }
  return a;
}

std::string EncodeFilterResult(const ExtenderFilterResult& r) {
  json j = json::object();
  j["Nodes"] = nullptr;
  j["NodeNames"] = r.node_names ? json(*r.node_names) : json(nullptr);
  j["FailedNodes"] = json(r.failed);
  j["FailedAndUnresolvableNodes"] = json(r.failed_unresolvable);
  j["Error"] = base::Printable(r.error);
  return Dump(j);
}

std::string EncodeHostPriorityList(const std::vector<HostPriority>& list) {
  json j = json::array();
  for (const auto& p : list) j.push_back({{"Host", p.host}, {"Score", p.score}});
  return Dump(j);
}

std::string EncodeBindingResult(std::string_view error) {
  return Dump(json{{"Error", base::Printable(error)}});
}

std::string EncodePreemptionResult(const std::map<std::string, MetaVictims>& victims) {
  json map = json::object();
  for (const auto& [node, v] : victims) {
    json pods = json::array();
    for (const auto& uid : v.pod_uids) pods.push_back({{"UID", uid}});
    map[node] = {{"Pods", pods}, {"NumPDBViolations", v.num_pdb_violations}};
  }
  return Dump(json{{"NodeNameToMetaVictims", map}});
}

}  // namespace seedance::k8s
