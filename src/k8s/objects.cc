#include "seedance/k8s/objects.h"

#include <algorithm>
#include <map>
#include <set>

#include "seedance/base/parse.h"
#include "seedance/k8s/quantity.h"
#include "src/k8s/json.h"

namespace seedance::k8s {
namespace internal {
namespace {

using nlohmann::json;
using StringMap = std::map<std::string, std::string, std::less<>>;

base::Status TypeError(const std::string& path, std::string_view expected) {
  return base::InvalidArgumentError("expected " + std::string(expected), path);
}

// The object at `key`, or null when it is missing or JSON null.
base::StatusOr<const json*> ObjectAt(const json* j, std::string_view key, const std::string& path) {
  if (j == nullptr) return static_cast<const json*>(nullptr);
  auto it = j->find(key);
  if (it == j->end() || it->is_null()) return static_cast<const json*>(nullptr);
  if (!it->is_object()) return TypeError(path + "." + std::string(key), "an object");
  return &*it;
}

// A map of strings (labels, annotations, resource lists). Numbers are taken as their text.
base::StatusOr<StringMap> StringMapAt(const json* j, std::string_view key,
                                      const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(const json* m, ObjectAt(j, key, path));
  StringMap out;
  if (m == nullptr) return out;
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (it->is_string()) {
      out[it.key()] = it->get<std::string>();
    } else if (it->is_number()) {
      out[it.key()] = it->dump();
    } else if (!it->is_null()) {
      return TypeError(path + "." + std::string(key) + "[" + it.key() + "]", "a string");
    }
  }
  return out;
}

base::StatusOr<int64_t> IntAt(const json* j, std::string_view key, const std::string& path) {
  if (j == nullptr) return int64_t{0};
  auto it = j->find(key);
  if (it == j->end() || it->is_null()) return int64_t{0};
  if (!it->is_number_integer()) return TypeError(path + "." + std::string(key), "an integer");
  return it->get<int64_t>();
}

// A count from a label: `fallback` when absent, else an integer from `least` to 1024.
base::StatusOr<int> SmallCount(const StringMap& labels, std::string_view key, int fallback,
                               int least, const std::string& where) {
  auto it = labels.find(key);
  if (it == labels.end()) return fallback;
  const auto n = base::ParseInt64(it->second);
  if (!n || *n < least || *n > 1024) {
    return base::InvalidArgumentError("expected an integer from " + std::to_string(least) +
                                          " to 1024, got \"" + it->second + "\"",
                                      where + "[" + std::string(key) + "]");
  }
  return static_cast<int>(*n);
}

// A gang member's gang ("namespace/name") and size: both annotations, or neither.
base::Status GangOf(const StringMap& annotations, const std::string& path, KubePod& out) {
  const auto name = annotations.find(kGangAnnotation);
  const auto size = annotations.find(kGangSizeAnnotation);
  const std::string where = path + ".metadata.annotations";
  if ((name == annotations.end()) != (size == annotations.end())) {
    return base::InvalidArgumentError("set both " + std::string(kGangAnnotation) + " and " +
                                          std::string(kGangSizeAnnotation) + ", or neither",
                                      where);
  }
  if (name == annotations.end()) return base::OkStatus();
  if (name->second.empty()) {
    return base::InvalidArgumentError("expected a gang name",
                                      where + "[" + std::string(kGangAnnotation) + "]");
  }
  const auto n = base::ParseInt64(size->second);
  if (!n || *n < 1 || *n > kMaxGangSize) {
    return base::InvalidArgumentError(
        "expected 1 to " + std::to_string(kMaxGangSize) + " members, got \"" + size->second + "\"",
        where + "[" + std::string(kGangSizeAnnotation) + "]");
  }
  out.gang = out.ns + "/" + name->second;
  out.pod.gang = static_cast<int>(*n);
  return base::OkStatus();
}

// A pod asks for 0 to 64 GPUs (the model's bound), so at most 64,000 milli-GPU.
constexpr int64_t kMaxPodGpuMilli = int64_t{64} * 1000;

base::Status NotNegative(int64_t value, const std::string& text, const std::string& where) {
  if (value >= 0) return base::OkStatus();
  return base::InvalidArgumentError("expected a quantity of 0 or more, got " + text, where);
}

// sum += add, or an error naming the field whose addition overflows int64.
base::Status AddChecked(int64_t& sum, int64_t add, const std::string& where) {
  if (__builtin_add_overflow(sum, add, &sum)) {
    return base::InvalidArgumentError("the sum over the pod's containers is past int64", where);
  }
  return base::OkStatus();
}

// The GPU shape of a pod from its annotations and its total milli-GPU request.
base::Status GpuShape(const StringMap& annotations, int64_t requested, const std::string& path,
                      sched::Pod& pod) {
  const auto num = annotations.find(kNumGpuAnnotation);
  const auto milli = annotations.find(kGpuMilliAnnotation);
  const std::string where = path + ".metadata.annotations";
  if ((num == annotations.end()) != (milli == annotations.end())) {
    return base::InvalidArgumentError("set both " + std::string(kNumGpuAnnotation) + " and " +
                                          std::string(kGpuMilliAnnotation) + ", or neither",
                                      where);
  }
  if (num != annotations.end()) {
    const auto n = base::ParseInt64(num->second);
    const auto m = base::ParseInt64(milli->second);
    if (!n || *n < 0 || *n > 64) {
      return base::InvalidArgumentError("expected 0 to 64 GPUs, got \"" + num->second + "\"",
                                        where + "[" + std::string(kNumGpuAnnotation) + "]");
    }
    // A CPU-only pod may say so (num-gpu 0; its gpu-milli, 0 to 1000, means nothing then).
    const bool cpu_only = *n == 0 && m && *m >= 0 && *m <= 1000;
    if (!cpu_only && (!m || *m < 1 || *m > 1000 || (*n > 1 && *m != 1000))) {
      return base::InvalidArgumentError(
          "expected 1 to 1000 milli-GPU on each GPU (1000 when more than one GPU; 0 with no "
          "GPU), got \"" +
              milli->second + "\"",
          where + "[" + std::string(kGpuMilliAnnotation) + "]");
    }
    pod.num_gpu = static_cast<int>(*n);
    pod.gpu_milli = pod.num_gpu == 0 ? 0 : static_cast<int>(*m);
    if (requested != pod.gpu_demand_milli()) {
      return base::InvalidArgumentError(
          "the pod requests " + std::to_string(requested) + " " + std::string(kGpuMilliResource) +
              " but its annotations describe " + std::to_string(pod.gpu_demand_milli()) +
              " (num-gpu x gpu-milli)",
          path + ".spec.containers[].resources.requests");
    }
    return base::OkStatus();
  }
  if (requested == 0) return base::OkStatus();
  if (requested <= 1000) {
    pod.num_gpu = 1;
    pod.gpu_milli = static_cast<int>(requested);
  } else if (requested % 1000 == 0) {
    pod.num_gpu = static_cast<int>(requested / 1000);
    pod.gpu_milli = 1000;
  } else {
    return base::InvalidArgumentError(
        "a request over 1000 " + std::string(kGpuMilliResource) +
            " must be whole GPUs (a multiple of 1000), or give the shape in annotations",
        path + ".spec.containers[].resources.requests");
  }
  return base::OkStatus();
}

struct Requests {
  int64_t cpu_milli = 0, memory_bytes = 0, gpu_milli = 0;
};

// One container's requests (its limits where it states no requests, as the API defaults them).
base::StatusOr<Requests> ContainerRequests(const json& c, const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(const json* resources, ObjectAt(&c, "resources", path));
  SEEDANCE_ASSIGN_OR_RETURN(StringMap requests,
                            StringMapAt(resources, "requests", path + ".resources"));
  SEEDANCE_ASSIGN_OR_RETURN(StringMap limits,
                            StringMapAt(resources, "limits", path + ".resources"));
  for (const auto& [k, v] : limits) requests.emplace(k, v);  // only where no request is given
  Requests r;
  const std::string where = path + ".resources.requests";
  if (auto it = requests.find("cpu"); it != requests.end()) {
    SEEDANCE_ASSIGN_OR_RETURN(r.cpu_milli, ParseQuantityMilli(it->second, where + "[cpu]"));
    SEEDANCE_RETURN_IF_ERROR(NotNegative(r.cpu_milli, it->second, where + "[cpu]"));
  }
  if (auto it = requests.find("memory"); it != requests.end()) {
    SEEDANCE_ASSIGN_OR_RETURN(r.memory_bytes, ParseQuantity(it->second, where + "[memory]"));
    SEEDANCE_RETURN_IF_ERROR(NotNegative(r.memory_bytes, it->second, where + "[memory]"));
  }
  if (auto it = requests.find(kGpuMilliResource); it != requests.end()) {
    const std::string f = where + "[" + std::string(kGpuMilliResource) + "]";
    SEEDANCE_ASSIGN_OR_RETURN(r.gpu_milli, ParseQuantity(it->second, f));
    SEEDANCE_RETURN_IF_ERROR(NotNegative(r.gpu_milli, it->second, f));
    if (r.gpu_milli > kMaxPodGpuMilli) {
      return base::InvalidArgumentError(
          "expected at most " + std::to_string(kMaxPodGpuMilli) + " (64 GPUs), got " + it->second,
          f);
    }
  }
  return r;
}

base::StatusOr<Requests> PodRequests(const json* spec, const std::string& path) {
  Requests sum, init_max;
  for (const char* field : {"containers", "initContainers"}) {
    if (spec == nullptr) break;
    auto it = spec->find(field);
    if (it == spec->end() || it->is_null()) continue;
    if (!it->is_array()) return TypeError(path + ".spec." + field, "an array");
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string p = path + ".spec." + field + "[" + std::to_string(i) + "]";
      if (!(*it)[i].is_object()) return TypeError(p, "an object");
      SEEDANCE_ASSIGN_OR_RETURN(Requests r, ContainerRequests((*it)[i], p));
      if (std::string_view(field) == "containers") {
        const std::string at = p + ".resources.requests";
        SEEDANCE_RETURN_IF_ERROR(AddChecked(sum.cpu_milli, r.cpu_milli, at + "[cpu]"));
        SEEDANCE_RETURN_IF_ERROR(AddChecked(sum.memory_bytes, r.memory_bytes, at + "[memory]"));
        SEEDANCE_RETURN_IF_ERROR(AddChecked(sum.gpu_milli, r.gpu_milli,
                                            at + "[" + std::string(kGpuMilliResource) + "]"));
      } else {
        init_max.cpu_milli = std::max(init_max.cpu_milli, r.cpu_milli);
        init_max.memory_bytes = std::max(init_max.memory_bytes, r.memory_bytes);
        init_max.gpu_milli = std::max(init_max.gpu_milli, r.gpu_milli);
      }
    }
  }
  const Requests pod{std::max(sum.cpu_milli, init_max.cpu_milli),
                     std::max(sum.memory_bytes, init_max.memory_bytes),
                     std::max(sum.gpu_milli, init_max.gpu_milli)};
  if (pod.gpu_milli > kMaxPodGpuMilli) {
    return base::InvalidArgumentError("the containers request " + std::to_string(pod.gpu_milli) +
                                          " " + std::string(kGpuMilliResource) +
                                          " in all, more than 64 GPUs",
                                      path + ".spec.containers[].resources.requests");
  }
  return pod;
}

}  // namespace

base::StatusOr<std::string> StringAt(const json& j, std::string_view key,
                                     const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::string();
  if (!it->is_string()) return TypeError(where + "." + std::string(key), "a string");
  return it->get<std::string>();
}

base::StatusOr<KubeNode> KubeNodeFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return TypeError(where, "a Node object");
  KubeNode out;
  SEEDANCE_ASSIGN_OR_RETURN(const json* meta, ObjectAt(&j, "metadata", where));
  if (meta != nullptr) {
    SEEDANCE_ASSIGN_OR_RETURN(out.node.name, StringAt(*meta, "name", where + ".metadata"));
  }
  if (out.node.name.empty())
    return base::InvalidArgumentError("expected a name", where + ".metadata.name");
  SEEDANCE_ASSIGN_OR_RETURN(StringMap labels, StringMapAt(meta, "labels", where + ".metadata"));
  SEEDANCE_ASSIGN_OR_RETURN(StringMap notes, StringMapAt(meta, "annotations", where + ".metadata"));
  if (auto it = notes.find(kUnhealthyGpusAnnotation); it != notes.end()) {
    SEEDANCE_ASSIGN_OR_RETURN(
        out.unhealthy_gpus,
        ParseGpuAssignment(
            it->second, where + ".metadata.annotations." + std::string(kUnhealthyGpusAnnotation)));
  }
  if (auto it = labels.find(kGpuModelLabel); it != labels.end()) out.node.gpu_model = it->second;
  const std::string at = where + ".metadata.labels";
  SEEDANCE_ASSIGN_OR_RETURN(out.node.numa_nodes, SmallCount(labels, kNumaNodesLabel, 1, 1, at));
  SEEDANCE_ASSIGN_OR_RETURN(out.node.nics, SmallCount(labels, kRdmaNicsLabel, 0, 0, at));
  SEEDANCE_ASSIGN_OR_RETURN(const json* spec, ObjectAt(&j, "spec", where));
  if (spec != nullptr) {
    auto it = spec->find("unschedulable");
    if (it != spec->end() && !it->is_null()) {
      if (!it->is_boolean()) return TypeError(where + ".spec.unschedulable", "true or false");
      out.unschedulable = it->get<bool>();
    }
  }
  SEEDANCE_ASSIGN_OR_RETURN(const json* status, ObjectAt(&j, "status", where));
  SEEDANCE_ASSIGN_OR_RETURN(StringMap resources,
                            StringMapAt(status, "allocatable", where + ".status"));
  std::string field = where + ".status.allocatable";
  if (resources.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(resources, StringMapAt(status, "capacity", where + ".status"));
    field = where + ".status.capacity";
  }
  if (auto it = resources.find("cpu"); it != resources.end()) {
    SEEDANCE_ASSIGN_OR_RETURN(out.node.cpu_milli, ParseQuantityMilli(it->second, field + "[cpu]"));
    SEEDANCE_RETURN_IF_ERROR(NotNegative(out.node.cpu_milli, it->second, field + "[cpu]"));
  }
  if (auto it = resources.find("memory"); it != resources.end()) {
    SEEDANCE_ASSIGN_OR_RETURN(const int64_t bytes, ParseQuantity(it->second, field + "[memory]"));
    SEEDANCE_RETURN_IF_ERROR(NotNegative(bytes, it->second, field + "[memory]"));
    out.node.memory_mib = bytes >> 20;
  }
  if (auto it = resources.find(kGpuMilliResource); it != resources.end()) {
    const std::string f = field + "[" + std::string(kGpuMilliResource) + "]";
    SEEDANCE_ASSIGN_OR_RETURN(const int64_t milli, ParseQuantity(it->second, f));
    if (milli < 0 || milli % 1000 != 0 || milli > 64000) {
      return base::InvalidArgumentError("expected 1000 per GPU (0 to 64 GPUs), got " + it->second,
                                        f);
    }
    out.node.gpu_count = static_cast<int>(milli / 1000);
  } else if (auto nv = resources.find(kNvidiaGpuResource); nv != resources.end()) {
    const std::string f = field + "[" + std::string(kNvidiaGpuResource) + "]";
    SEEDANCE_ASSIGN_OR_RETURN(const int64_t gpus, ParseQuantity(nv->second, f));
    if (gpus < 0 || gpus > 64) return base::InvalidArgumentError("expected 0 to 64 GPUs", f);
    out.node.gpu_count = static_cast<int>(gpus);
  }
  return out;
}

base::StatusOr<KubePod> KubePodFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return TypeError(where, "a Pod object");
  KubePod out;
  SEEDANCE_ASSIGN_OR_RETURN(const json* meta, ObjectAt(&j, "metadata", where));
  StringMap annotations;
  if (meta != nullptr) {
    const std::string m = where + ".metadata";
    SEEDANCE_ASSIGN_OR_RETURN(out.name, StringAt(*meta, "name", m));
    SEEDANCE_ASSIGN_OR_RETURN(out.ns, StringAt(*meta, "namespace", m));
    SEEDANCE_ASSIGN_OR_RETURN(out.uid, StringAt(*meta, "uid", m));
    auto del = meta->find("deletionTimestamp");
    out.terminating = del != meta->end() && !del->is_null();
    SEEDANCE_ASSIGN_OR_RETURN(annotations, StringMapAt(meta, "annotations", m));
  }
  if (out.name.empty())
    return base::InvalidArgumentError("expected a name", where + ".metadata.name");
  if (out.ns.empty()) out.ns = "default";
  out.pod.name = out.ns + "/" + out.name;
  SEEDANCE_ASSIGN_OR_RETURN(const json* spec, ObjectAt(&j, "spec", where));
  if (spec != nullptr) {
    SEEDANCE_ASSIGN_OR_RETURN(out.node_name, StringAt(*spec, "nodeName", where + ".spec"));
    SEEDANCE_ASSIGN_OR_RETURN(out.scheduler_name,
                              StringAt(*spec, "schedulerName", where + ".spec"));
  }
  SEEDANCE_ASSIGN_OR_RETURN(const int64_t priority, IntAt(spec, "priority", where + ".spec"));
  out.pod.priority = static_cast<int>(std::clamp<int64_t>(priority, INT32_MIN, INT32_MAX));
  SEEDANCE_ASSIGN_OR_RETURN(const json* status, ObjectAt(&j, "status", where));
  if (status != nullptr) {
    SEEDANCE_ASSIGN_OR_RETURN(out.pod.phase, StringAt(*status, "phase", where + ".status"));
  }
  SEEDANCE_ASSIGN_OR_RETURN(const Requests r, PodRequests(spec, where));
  out.pod.cpu_milli = r.cpu_milli;
  out.pod.memory_mib = (r.memory_bytes >> 20) + ((r.memory_bytes & ((1 << 20) - 1)) != 0 ? 1 : 0);
  SEEDANCE_RETURN_IF_ERROR(GpuShape(annotations, r.gpu_milli, where, out.pod));
  if (auto it = annotations.find(kGpuSpecAnnotation); it != annotations.end()) {
    std::string_view rest = it->second;
    while (!rest.empty()) {
      const size_t bar = std::min(rest.find('|'), rest.size());
      if (bar > 0) out.pod.gpu_models.emplace_back(rest.substr(0, bar));
      rest.remove_prefix(std::min(bar + 1, rest.size()));
    }
  }
  if (auto it = annotations.find(kQosAnnotation); it != annotations.end()) {
    SEEDANCE_ASSIGN_OR_RETURN(out.pod.qos,
                              sched::ParseQos(it->second, where + ".metadata.annotations[" +
                                                              std::string(kQosAnnotation) + "]"));
  }
  SEEDANCE_RETURN_IF_ERROR(GangOf(annotations, where, out));
  if (auto it = annotations.find(kRdmaAnnotation); it != annotations.end()) {
    if (it->second != "true" && it->second != "false") {
      return base::InvalidArgumentError(
          "expected \"true\" or \"false\", got \"" + it->second + "\"",
          where + ".metadata.annotations[" + std::string(kRdmaAnnotation) + "]");
    }
    out.pod.rdma = it->second == "true";
  }
  if (auto it = annotations.find(kAssignmentAnnotation); it != annotations.end()) {
    SEEDANCE_ASSIGN_OR_RETURN(
        out.gpus, ParseGpuAssignment(it->second, where + ".metadata.annotations[" +
                                                     std::string(kAssignmentAnnotation) + "]"));
  }
  return out;
}

}  // namespace internal

bool KubePod::holds_resources() const {
  return !node_name.empty() && pod.phase != "Succeeded" && pod.phase != "Failed";
}

namespace {

template <typename T, typename F>
base::StatusOr<T> ParseWith(std::string_view text, std::string_view where, F from_json) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return base::InvalidArgumentError("not valid JSON", std::string(where));
  }
  return from_json(j, std::string(where));
}

}  // namespace

base::StatusOr<KubeNode> ParseKubeNode(std::string_view json, std::string_view where) {
  return ParseWith<KubeNode>(json, where, internal::KubeNodeFromJson);
}

base::StatusOr<KubePod> ParseKubePod(std::string_view json, std::string_view where) {
  return ParseWith<KubePod>(json, where, internal::KubePodFromJson);
}

std::string FormatGpuAssignment(const std::vector<int>& gpus) {
  std::string out;
  for (int g : gpus) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out;
}

base::StatusOr<std::vector<int>> ParseGpuAssignment(std::string_view text, std::string_view where) {
  std::vector<int> gpus;
  if (text.empty()) return gpus;  // no GPUs (a CPU-only pod)
  std::set<int> seen;
  std::string_view rest = text;
  while (true) {
    const size_t comma = std::min(rest.find(','), rest.size());
    const auto v = base::ParseInt64(rest.substr(0, comma));
    if (!v || *v < 0 || *v > 1023 || !seen.insert(static_cast<int>(*v)).second) {
      return base::InvalidArgumentError(
          "expected distinct GPU indices separated by commas (\"0,3\"), got \"" +
              std::string(text.substr(0, 40)) + "\"",
          std::string(where));
    }
    gpus.push_back(static_cast<int>(*v));
    if (comma == rest.size()) break;
    rest.remove_prefix(comma + 1);
  }
  return gpus;
}

}  // namespace seedance::k8s
