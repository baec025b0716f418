#include "seedance/sched/scheduler.h"

#include <algorithm>
#include <utility>

namespace seedance::sched {
namespace {

// Whether `pod` can be bound on `node` at `gpus`: GPUs that exist, as many as it asks for, and
// CPU, memory and milli-GPU left for it.
base::Status FitsAt(const Cluster& cluster, const Pod& pod, int node,
                    const std::vector<int>& gpus) {
  if (node < 0 || node >= static_cast<int>(cluster.nodes().size())) {
    return base::InvalidArgumentError("no node " + std::to_string(node), pod.name);
  }
  const NodeState& s = cluster.state(node);
  const std::string& where = cluster.nodes()[static_cast<size_t>(node)].name;
  if (static_cast<int>(gpus.size()) != pod.num_gpu) {
    return base::InvalidArgumentError(
        "expected " + std::to_string(pod.num_gpu) + " GPUs, got " + std::to_string(gpus.size()),
        pod.name);
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int g = gpus[i];
    if (g < 0 || g >= static_cast<int>(s.gpu_left.size()) ||
        std::count(gpus.begin(), gpus.end(), g) > 1) {
      return base::InvalidArgumentError(
          "GPU " + std::to_string(g) + " of " + where + " does not exist or is listed twice",
          pod.name);
    }
    if (s.gpu_left[static_cast<size_t>(g)] < pod.gpu_milli) {
      return base::FailedPreconditionError(
          "GPU " + std::to_string(g) + " of " + where + " has too little left", pod.name);
    }
  }
  if (s.cpu_left < pod.cpu_milli || s.mem_left < pod.memory_mib) {
    return base::FailedPreconditionError(where + " has too little CPU or memory left", pod.name);
  }
  return base::OkStatus();
}

}  // namespace

Scheduler::Scheduler(std::unique_ptr<Policy> policy, std::vector<Node> nodes,
                     const SchedulerOptions& options)
    : options_(options),
      framework_(std::move(policy)),
      cluster_(std::move(nodes)),
      rng_(options.seed) {
  framework_.SetTieBreak(options.ties);
  framework_.EnableScoreCache(options.score_cache);
  PrepareTieOrder(cluster_, options.ties, options.seed);
}

std::optional<int> Scheduler::NodeIndex(std::string_view name) const {
  const auto& nodes = cluster_.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

base::Status Scheduler::Rebuild(std::vector<Node> nodes) {
  Cluster next(std::move(nodes));
  PrepareTieOrder(next, options_.ties, options_.seed);
  for (const auto& [name, r] : pods_) {
    SEEDANCE_RETURN_IF_ERROR(FitsAt(next, r.pod, r.node, r.gpus));
    next.Bind(r.pod, r.node, r.gpus);
  }
  cluster_ = std::move(next);
  return base::OkStatus();
}

base::Status Scheduler::AddNode(const Node& node) {
  if (NodeIndex(node.name)) return base::InvalidArgumentError("node is known", node.name);
  std::vector<Node> nodes = cluster_.nodes();
  nodes.push_back(node);
  return Rebuild(std::move(nodes));
}

base::Status Scheduler::UpdateNode(const Node& node) {
  const std::optional<int> at = NodeIndex(node.name);
  if (!at) return base::NotFoundError("no such node", node.name);
  std::vector<Node> nodes = cluster_.nodes();
  nodes[static_cast<size_t>(*at)] = node;
  return Rebuild(std::move(nodes));
}

base::StatusOr<std::vector<std::string>> Scheduler::RemoveNode(std::string_view name) {
  const std::optional<int> at = NodeIndex(name);
  if (!at) return base::NotFoundError("no such node", std::string(name));
  std::vector<std::string> gone;
  for (auto it = pods_.begin(); it != pods_.end();) {
    if (it->second.node == *at) {
      gone.push_back(it->first);
      it = pods_.erase(it);
      continue;
    }
    if (it->second.node > *at) --it->second.node;
    ++it;
  }
  std::sort(gone.begin(), gone.end());
  std::vector<Node> nodes = cluster_.nodes();
  nodes.erase(nodes.begin() + *at);
  SEEDANCE_RETURN_IF_ERROR(Rebuild(std::move(nodes)));
  return gone;
}

base::Status Scheduler::AddPod(const Pod& pod, int node, std::vector<int> gpus) {
  if (pods_.count(pod.name)) return base::InvalidArgumentError("pod is known", pod.name);
  SEEDANCE_RETURN_IF_ERROR(FitsAt(cluster_, pod, node, gpus));
  cluster_.Bind(pod, node, gpus);
  pods_.emplace(pod.name, PodRecord{pod, node, std::move(gpus), true});
  return base::OkStatus();
}

void Scheduler::Release(std::unordered_map<std::string, PodRecord>::iterator it) {
  const PodRecord& r = it->second;
  framework_.Unschedule(cluster_, r.pod, Candidate{r.node, 0, r.gpus});
  pods_.erase(it);
}

std::vector<const PodRecord*> Scheduler::PodsOn(int node) const {
  std::vector<const PodRecord*> out;
  for (const auto& [name, r] : pods_) {
    if (r.node == node) out.push_back(&r);
  }
  std::sort(out.begin(), out.end(),
            [](const PodRecord* a, const PodRecord* b) { return a->pod.name < b->pod.name; });
  return out;
}

base::Status Scheduler::RemovePod(std::string_view name) {
  auto it = pods_.find(std::string(name));
  if (it == pods_.end()) return base::NotFoundError("no such pod", std::string(name));
  Release(it);
  return base::OkStatus();
}

base::StatusOr<std::optional<Candidate>> Scheduler::Schedule(const Pod& pod) {
  if (pods_.count(pod.name)) return base::InvalidArgumentError("pod is known", pod.name);
  SEEDANCE_ASSIGN_OR_RETURN(std::optional<Candidate> at, framework_.Schedule(cluster_, pod, rng_));
  if (at) pods_.emplace(pod.name, PodRecord{pod, at->node, at->gpus, false});
  return at;
}

base::StatusOr<std::optional<std::vector<Candidate>>> Scheduler::ScheduleGang(
    std::span<const Pod> pods) {
  std::vector<Candidate> done;
  done.reserve(pods.size());
  for (const Pod& p : pods) {
    base::StatusOr<std::optional<Candidate>> at = Schedule(p);
    if (!at.ok() || !*at) {
      for (size_t m = done.size(); m-- > 0;) (void)Forget(pods[m].name);
      if (!at.ok()) return at.status();
      return std::optional<std::vector<Candidate>>();
    }
    done.push_back(std::move(**at));
  }
  return std::optional<std::vector<Candidate>>(std::move(done));
}

base::Status Scheduler::Bind(std::string_view name) {
  auto it = pods_.find(std::string(name));
  if (it == pods_.end()) return base::NotFoundError("no such pod", std::string(name));
  PodRecord& r = it->second;
  if (r.bound) return base::FailedPreconditionError("pod is bound already", r.pod.name);
  base::Status s = framework_.Bind(cluster_, r.pod, Candidate{r.node, 0, r.gpus});
  if (!s.ok()) {
    pods_.erase(it);  // the framework unscheduled it
    return s;
  }
  r.bound = true;
  return base::OkStatus();
}

base::Status Scheduler::Forget(std::string_view name) {
  auto it = pods_.find(std::string(name));
  if (it == pods_.end()) return base::NotFoundError("no such pod", std::string(name));
  if (it->second.bound) {
    return base::FailedPreconditionError("pod is bound: remove it instead", it->first);
  }
  Release(it);
  return base::OkStatus();
}

const PodRecord* Scheduler::Find(std::string_view name) const {
  auto it = pods_.find(std::string(name));
  return it == pods_.end() ? nullptr : &it->second;
}

base::Status Scheduler::Check() const {
  SEEDANCE_RETURN_IF_ERROR(cluster_.Check());
  int64_t demand = 0;
  for (const auto& [name, r] : pods_) demand += r.pod.gpu_demand_milli();
  if (demand != cluster_.used_gpu_milli()) {
    return base::InternalError("known pods ask for " + std::to_string(demand) +
                               " milli-GPU, the cluster has " +
                               std::to_string(cluster_.used_gpu_milli()) + " in use");
  }
  return base::OkStatus();
}

}  // namespace seedance::sched
