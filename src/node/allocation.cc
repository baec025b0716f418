#include "seedance/node/allocation.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "seedance/k8s/objects.h"
#include "seedance/k8s/quantity.h"

namespace seedance::node {
namespace {

using nlohmann::json;

// A string at j[key]: "" when missing or null, an error when another type.
base::StatusOr<std::string> Str(const json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::string();
  if (!it->is_string()) return base::InvalidArgumentError("expected a string", path + "." + key);
  return it->get<std::string>();
}

base::StatusOr<const json*> Obj(const json& j, const char* key, const std::string& path) {
  static const json kEmpty = json::object();
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return &kEmpty;
  if (!it->is_object()) return base::InvalidArgumentError("expected an object", path + "." + key);
  return &*it;
}

// The container's seedance.io/gpu-milli: its request, else its limit (the API defaults an
// extended resource's request to its limit); 0 when it asks for none.
base::StatusOr<int64_t> ContainerMilli(const json& c, const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(const json* resources, Obj(c, "resources", path));
  for (const char* kind : {"requests", "limits"}) {
    SEEDANCE_ASSIGN_OR_RETURN(const json* m, Obj(*resources, kind, path + ".resources"));
    auto it = m->find(std::string(kGpuMilliResource));
    if (it == m->end() || it->is_null()) continue;
    const std::string at = path + ".resources." + kind + "." + std::string(kGpuMilliResource);
    std::string text;
    if (it->is_string()) {
      text = it->get<std::string>();
    } else if (it->is_number_integer()) {
      text = std::to_string(it->get<int64_t>());
    } else {
      return base::InvalidArgumentError("expected a quantity", at);
    }
    SEEDANCE_ASSIGN_OR_RETURN(int64_t v, k8s::ParseQuantity(text, at));
    if (v < 0) return base::InvalidArgumentError("a negative request", at);
    return v;
  }
  return int64_t{0};
}

base::StatusOr<AgentPod> PodFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return base::InvalidArgumentError("expected a Pod object", where);
  AgentPod p;
  SEEDANCE_ASSIGN_OR_RETURN(const json* meta, Obj(j, "metadata", where));
  const std::string m = where + ".metadata";
  SEEDANCE_ASSIGN_OR_RETURN(p.ns, Str(*meta, "namespace", m));
  SEEDANCE_ASSIGN_OR_RETURN(p.name, Str(*meta, "name", m));
  SEEDANCE_ASSIGN_OR_RETURN(p.uid, Str(*meta, "uid", m));
  SEEDANCE_ASSIGN_OR_RETURN(p.resource_version, Str(*meta, "resourceVersion", m));
  SEEDANCE_ASSIGN_OR_RETURN(p.created, Str(*meta, "creationTimestamp", m));
  SEEDANCE_ASSIGN_OR_RETURN(std::string deleted, Str(*meta, "deletionTimestamp", m));
  p.terminating = !deleted.empty();
  SEEDANCE_ASSIGN_OR_RETURN(const json* ann, Obj(*meta, "annotations", m));
  if (auto it = ann->find(std::string(kAssignmentAnnotation)); it != ann->end()) {
    const std::string at = m + ".annotations." + std::string(kAssignmentAnnotation);
    if (!it->is_string()) return base::InvalidArgumentError("expected a string", at);
    SEEDANCE_ASSIGN_OR_RETURN(p.assignment, k8s::ParseGpuAssignment(it->get<std::string>(), at));
    p.has_assignment = !p.assignment.empty();
  }
  if (auto it = ann->find(std::string(kAllocatedAnnotation)); it != ann->end()) {
    const std::string at = m + ".annotations." + std::string(kAllocatedAnnotation);
    if (!it->is_string()) return base::InvalidArgumentError("expected a string", at);
    const json v = json::parse(it->get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (!v.is_object()) {
      return base::InvalidArgumentError("expected a JSON object {container: fingerprint}", at);
    }
    for (const auto& [k, f] : v.items()) {
      if (!f.is_string()) return base::InvalidArgumentError("expected string values", at);
      p.allocated[k] = f.get<std::string>();
    }
  }
  SEEDANCE_ASSIGN_OR_RETURN(const json* spec, Obj(j, "spec", where));
  SEEDANCE_ASSIGN_OR_RETURN(p.node_name, Str(*spec, "nodeName", where + ".spec"));
  if (auto it = spec->find("containers"); it != spec->end() && !it->is_null()) {
    if (!it->is_array())
      return base::InvalidArgumentError("expected a list", where + ".spec.containers");
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string at = where + ".spec.containers[" + std::to_string(i) + "]";
      const json& c = (*it)[i];
      if (!c.is_object()) return base::InvalidArgumentError("expected an object", at);
      SEEDANCE_ASSIGN_OR_RETURN(int64_t milli, ContainerMilli(c, at));
      if (milli == 0) continue;
      SEEDANCE_ASSIGN_OR_RETURN(std::string name, Str(c, "name", at));
      p.containers.push_back({name, milli});
    }
  }
  SEEDANCE_ASSIGN_OR_RETURN(const json* status, Obj(j, "status", where));
  SEEDANCE_ASSIGN_OR_RETURN(p.phase, Str(*status, "phase", where + ".status"));
  return p;
}

bool Finished(const AgentPod& p) { return p.phase == "Succeeded" || p.phase == "Failed"; }

// Milli-GPU per assigned GPU of a container's request.
int64_t PerGpu(const AgentPod& p, int64_t milli) {
  return p.assignment.empty() ? milli : milli / static_cast<int64_t>(p.assignment.size());
}

bool Older(const AgentPod& a, const AgentPod& b) {
  if (a.created != b.created) return a.created < b.created;
  return a.Key() < b.Key();
}

struct Candidate {
  size_t pod;
  std::string container;
};

// Pending pods on `node` with an assignment and a container asking for `count` not yet
// allocated, oldest first.
std::vector<Candidate> Candidates(const std::vector<AgentPod>& pods, const std::string& node,
                                  int64_t count) {
  std::vector<Candidate> out;
  for (size_t i = 0; i < pods.size(); ++i) {
    const AgentPod& p = pods[i];
    if (p.node_name != node || p.terminating || !p.has_assignment) continue;
    if (!p.phase.empty() && p.phase != "Pending") continue;
    for (const ContainerShare& c : p.containers) {
      if (c.milli == count && !p.allocated.count(c.name)) {
        out.push_back({i, c.name});
        break;  // one container a pod at a time: kubelet allocates them in order
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
    return Older(pods[a.pod], pods[b.pod]);
  });
  return out;
}

// The assignment's positions in `gpus`, or why it cannot be served here.
base::StatusOr<std::vector<size_t>> AssignedGpus(const AgentPod& p,
                                                 const std::vector<AgentGpu>& gpus) {
  std::vector<size_t> out;
  for (int index : p.assignment) {
    auto it =
        std::find_if(gpus.begin(), gpus.end(), [&](const AgentGpu& g) { return g.index == index; });
    if (it == gpus.end()) {
      return base::FailedPreconditionError(
          "pod " + p.Key() + " is assigned GPU " + std::to_string(index) +
          ", which this node does not have (" + std::to_string(gpus.size()) + " GPUs)");
    }
    if (!it->healthy) {
      return base::FailedPreconditionError("pod " + p.Key() + " is assigned GPU " +
                                           std::to_string(index) + ", which is unhealthy (" +
                                           it->why_unhealthy + ")");
    }
    out.push_back(static_cast<size_t>(it - gpus.begin()));
  }
  return out;
}

// Milli-GPU already allocated on each GPU index by the node's other live pods.
std::map<int, int64_t> AllocatedMilli(const std::vector<AgentPod>& pods, const std::string& node,
                                      size_t except) {
  std::map<int, int64_t> used;
  for (size_t i = 0; i < pods.size(); ++i) {
    const AgentPod& p = pods[i];
    if (i == except || p.node_name != node || Finished(p)) continue;
    for (const ContainerShare& c : p.containers) {
      if (!p.allocated.count(c.name)) continue;
      for (int g : p.assignment) used[g] += PerGpu(p, c.milli);
    }
  }
  return used;
}

base::Status CheckFits(const std::vector<AgentPod>& pods, const std::string& node, size_t pod,
                       int64_t milli) {
  const AgentPod& p = pods[pod];
  const std::map<int, int64_t> used = AllocatedMilli(pods, node, pod);
  const int64_t share = PerGpu(p, milli);
  for (int g : p.assignment) {
    auto it = used.find(g);
    const int64_t already = it == used.end() ? 0 : it->second;
    if (already + share > kDevicesPerGpu) {
      return base::FailedPreconditionError(
          "pod " + p.Key() + " is assigned " + std::to_string(share) + " milli-GPU on GPU " +
          std::to_string(g) + ", where pods already allocated hold " + std::to_string(already) +
          " of 1000");
    }
  }
  return base::OkStatus();
}

}  // namespace

base::StatusOr<AgentPod> ParseAgentPod(std::string_view text, std::string_view where) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return base::InvalidArgumentError("not JSON", std::string(where));
  return PodFromJson(j, std::string(where));
}

base::StatusOr<std::vector<AgentPod>> ParseAgentPodList(std::string_view text,
                                                        std::string_view where) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const std::string w(where);
  if (!j.is_object()) return base::InvalidArgumentError("expected a PodList object", w);
  std::vector<AgentPod> out;
  auto it = j.find("items");
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) return base::InvalidArgumentError("expected a list", w + ".items");
  for (size_t i = 0; i < it->size(); ++i) {
    SEEDANCE_ASSIGN_OR_RETURN(AgentPod p,
                              PodFromJson((*it)[i], w + ".items[" + std::to_string(i) + "]"));
    out.push_back(std::move(p));
  }
  return out;
}

base::StatusOr<AllocationMatch> MatchAllocation(const std::vector<AgentPod>& pods,
                                                const std::string& node,
                                                const std::vector<AgentGpu>& gpus,
                                                const std::vector<std::string>& ids) {
  if (ids.empty()) return base::InvalidArgumentError("an Allocate request with no device IDs");
  SEEDANCE_ASSIGN_OR_RETURN(DeviceSpread spread, SpreadOf(gpus, ids));
  if (std::set<std::string>(ids.begin(), ids.end()).size() != ids.size()) {
    return base::InvalidArgumentError("an Allocate request names a device twice");
  }
  const std::string fingerprint = DeviceFingerprint(ids);
  for (size_t i = 0; i < pods.size(); ++i) {
    const AgentPod& p = pods[i];
    if (p.node_name != node || Finished(p)) continue;
    for (const auto& [container, f] : p.allocated) {
      if (f == fingerprint) return AllocationMatch{i, container, true};
    }
  }
  const int64_t count = static_cast<int64_t>(ids.size());
  const std::vector<Candidate> all = Candidates(pods, node, count);
  if (all.empty()) {
    return base::FailedPreconditionError(
        "no pod bound to node " + node + " is waiting for " + std::to_string(count) + " " +
        std::string(kGpuMilliResource) + " with a " + std::string(kAssignmentAnnotation) +
        " from Seedance's scheduler extender (was the pod scheduled by another scheduler?)");
  }
  // The oldest candidate whose assignment is where the IDs are, else the oldest.
  const Candidate* pick = &all.front();
  for (const Candidate& c : all) {
    auto assigned = AssignedGpus(pods[c.pod], gpus);
    if (assigned.ok()) {
      std::vector<size_t> sorted = *assigned;
      std::sort(sorted.begin(), sorted.end());
      if (sorted == spread.gpus) {
        pick = &c;
        break;
      }
    }
  }
  SEEDANCE_RETURN_IF_ERROR(AssignedGpus(pods[pick->pod], gpus).status());
  SEEDANCE_RETURN_IF_ERROR(CheckFits(pods, node, pick->pod, count));
  return AllocationMatch{pick->pod, pick->container, false};
}

std::vector<std::string> PreferredDevices(const std::vector<AgentPod>& pods,
                                          const std::string& node,
                                          const std::vector<AgentGpu>& gpus,
                                          const std::vector<std::string>& available,
                                          const std::vector<std::string>& must_include,
                                          int64_t size) {
  const std::vector<Candidate> all = Candidates(pods, node, size);
  if (all.empty() || size <= 0) return {};
  const AgentPod& p = pods[all.front().pod];
  auto assigned = AssignedGpus(p, gpus);
  if (!assigned.ok()) return {};
  const int64_t share = PerGpu(p, size);
  std::vector<std::string> out;
  std::set<std::string> taken;
  std::map<size_t, int64_t> need;
  for (size_t g : *assigned) need[g] = share;
  for (const std::string& id : must_include) {
    auto g = GpuOfDevice(gpus, id);
    if (!g.ok() || !need.count(*g) || need[*g] == 0) return {};  // the request pins another GPU
    --need[*g];
    out.push_back(id);
    taken.insert(id);
  }
  for (const std::string& id : available) {
    if (taken.count(id)) continue;
    auto g = GpuOfDevice(gpus, id);
    if (!g.ok()) continue;
    auto it = need.find(*g);
    if (it == need.end() || it->second == 0) continue;
    --it->second;
    out.push_back(id);
    taken.insert(id);
  }
  for (const auto& [g, n] : need) {
    if (n != 0) return {};
  }
  return out;
}

std::map<std::string, std::string> AllocationEnv(const AgentPod& pod, const std::string& container,
                                                 const std::vector<AgentGpu>& gpus,
                                                 const AllocationEnvOptions& options) {
  int64_t milli = 0;
  for (const ContainerShare& c : pod.containers) {
    if (c.name == container) milli = c.milli;
  }
  std::string visible, assignment;
  for (int index : pod.assignment) {
    auto it =
        std::find_if(gpus.begin(), gpus.end(), [&](const AgentGpu& g) { return g.index == index; });
    const std::string key = it == gpus.end()   ? std::to_string(index)
                            : it->uuid.empty() ? std::to_string(it->index)
                                               : it->uuid;
    visible += (visible.empty() ? "" : ",") + key;
    assignment += (assignment.empty() ? "" : ",") + std::to_string(index);
  }
  const int64_t share = PerGpu(pod, milli);
  std::map<std::string, std::string> env = {
      {"NVIDIA_VISIBLE_DEVICES", visible},
      {"CUDA_VISIBLE_DEVICES", visible},
      {"SEEDANCE_GPU_MILLI", std::to_string(share)},
      {"SEEDANCE_GPU_ASSIGNMENT", assignment},
  };
  if (options.mps_thread_percentage && share < kDevicesPerGpu) {
    env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = std::to_string((share + 9) / 10);
  }
  return env;
}

std::string AllocatedPatch(const AgentPod& pod, const std::string& container,
                           const std::string& fingerprint) {
  json allocated = json::object();
  for (const auto& [k, v] : pod.allocated) allocated[k] = v;
  allocated[container] = fingerprint;
  json patch = {
      {"metadata", {{"annotations", {{std::string(kAllocatedAnnotation), allocated.dump()}}}}}};
  // The precondition: the API server refuses the patch with 409 when the pod changed since the
  // agent read it.
  if (!pod.resource_version.empty()) patch["metadata"]["resourceVersion"] = pod.resource_version;
  return patch.dump();
}

}  // namespace seedance::node
