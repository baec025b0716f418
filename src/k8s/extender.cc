#include "seedance/k8s/extender.h"

#include <algorithm>
#include <utility>

#include "src/k8s/extender_state.h"

namespace seedance::k8s {
namespace extender_detail {

std::pair<std::string, bool> WhyNot(const sched::Cluster& c, const sched::Pod& pod, int node) {
  const sched::NodeState& s = c.state(node);
  const sched::Node& n = c.nodes()[static_cast<size_t>(node)];
  if (!c.TypeAllowed(pod, node)) {
    return {"GPU model " + (n.gpu_model.empty() ? std::string("(none)") : n.gpu_model) +
                " is not in the pod's " + std::string(kGpuSpecAnnotation),
            false};
  }
  if (pod.num_gpu > n.gpu_count) {
    return {std::to_string(n.gpu_count) + " GPUs on the node, the pod needs " +
                std::to_string(pod.num_gpu),
            false};
  }
  if (s.cpu_left < pod.cpu_milli) {
    return {"CPU: " + std::to_string(s.cpu_left) + " milli free, " + std::to_string(pod.cpu_milli) +
                " requested",
            true};
  }
  if (s.mem_left < pod.memory_mib) {
    return {"memory: " + std::to_string(s.mem_left) + " MiB free, " +
                std::to_string(pod.memory_mib) + " requested",
            true};
  }
  if (pod.num_gpu == 1 && pod.gpu_milli < 1000) {
    const int most =
        s.gpu_left.empty() ? 0 : *std::max_element(s.gpu_left.begin(), s.gpu_left.end());
    return {"no GPU with " + std::to_string(pod.gpu_milli) + " milli free (the most free has " +
                std::to_string(most) + ")",
            true};
  }
  return {std::to_string(s.full_free_gpus()) + " whole GPUs free, the pod needs " +
              std::to_string(pod.num_gpu),
          true};
}

std::string PodName(const BindPlan& plan) { return plan.ns + "/" + plan.name; }
std::string KeyOf(const BindPlan& plan) { return plan.uid.empty() ? PodName(plan) : plan.uid; }

}  // namespace extender_detail

std::string_view ExtenderModeName(ExtenderMode mode) {
  return mode == ExtenderMode::kDecide ? "decide" : "cooperative";
}

base::StatusOr<ExtenderMode> ParseExtenderMode(std::string_view name, std::string_view where) {
  if (name == "decide") return ExtenderMode::kDecide;
  if (name == "cooperative") return ExtenderMode::kCooperative;
  return base::InvalidArgumentError(
      "unknown mode '" + std::string(name) + "'; expected decide or cooperative",
      std::string(where));
}

Extender::Extender(std::unique_ptr<State> state) : s_(std::move(state)) {}
Extender::~Extender() = default;

base::StatusOr<std::unique_ptr<Extender>> Extender::Create(const ExtenderOptions& o) {
  if (!(o.reservation_ttl_s > 0)) {
    return base::InvalidArgumentError("expected a positive TTL", "reservation_ttl_s");
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto policy, sched::MakePolicy(o.policy, o.workload));
  auto s = std::make_unique<State>();
  s->o = o;
  s->env = o.env != nullptr ? o.env : base::Env::Default();
  sched::SchedulerOptions so;
  so.ties = o.ties;
  so.seed = o.seed;
  s->sched = std::make_unique<sched::Scheduler>(std::move(policy), std::vector<sched::Node>{}, so);
  auto filter = std::make_unique<extender_detail::CandidateFilter>();
  s->candidates = filter.get();
  s->sched->framework().AddFilter(std::move(filter));
  auto rdma = std::make_unique<sched::RdmaFilter>();
  rdma->set_enabled(o.rdma);
  s->rdma = rdma.get();
  s->sched->framework().AddFilter(std::move(rdma));
  auto numa = std::make_unique<sched::NumaAwareReserve>();
  numa->set_enabled(o.numa_aware);
  s->numa = numa.get();
  s->sched->framework().AddReserve(std::move(numa));
  return std::unique_ptr<Extender>(new Extender(std::move(s)));
}

base::Status Extender::UpsertNode(const KubeNode& node) {
  std::lock_guard<std::mutex> lock(s_->mu);
  if (node.unschedulable) {
    s_->cordoned.insert(node.node.name);
  } else if (auto it = s_->cordoned.find(node.node.name); it != s_->cordoned.end()) {
    s_->cordoned.erase(it);
  }
  if (s_->sched->NodeIndex(node.node.name)) {
    SEEDANCE_RETURN_IF_ERROR(s_->sched->UpdateNode(node.node));
  } else {
    SEEDANCE_RETURN_IF_ERROR(s_->sched->AddNode(node.node));
  }
  return HoldUnhealthyGpus(node);
}

// The node agent's unhealthy GPUs (the Node's seedance.io/unhealthy-gpus): what is left free on
// each is held by a placeholder pod, so nothing new is placed there; pods already there stay
// until they end, and what they free is held at the next update of the Node. A GPU that is
// healthy again is given back.
base::Status Extender::HoldUnhealthyGpus(const KubeNode& node) {
  const int index = *s_->sched->NodeIndex(node.node.name);
  for (int g = 0; g < node.node.gpu_count; ++g) {
    const std::string name =
        "seedance.io/unhealthy-gpu/" + node.node.name + "/" + std::to_string(g);
    const bool sick = std::find(node.unhealthy_gpus.begin(), node.unhealthy_gpus.end(), g) !=
                      node.unhealthy_gpus.end();
    const sched::PodRecord* held = s_->sched->Find(name);
    if (held != nullptr && (!sick || s_->cluster().state(index).gpu_left[g] > 0)) {
      SEEDANCE_RETURN_IF_ERROR(s_->sched->RemovePod(name));  // given back, or held anew below
    }
    if (!sick) continue;
    const int left = s_->cluster().state(index).gpu_left[static_cast<size_t>(g)];
    if (left <= 0) continue;
    sched::Pod hold;
    hold.name = name;
    hold.num_gpu = 1;
    hold.gpu_milli = left;
    hold.phase = "Running";
    SEEDANCE_RETURN_IF_ERROR(s_->sched->AddPod(hold, index, {g}));
  }
  return base::OkStatus();
}

base::Status Extender::DeleteNode(std::string_view name) {
  std::lock_guard<std::mutex> lock(s_->mu);
  if (!s_->sched->NodeIndex(name)) return base::OkStatus();
  SEEDANCE_ASSIGN_OR_RETURN(const auto gone, s_->sched->RemoveNode(name));
  for (const auto& pod : gone) {
    if (auto u = s_->uid_of.find(pod); u != s_->uid_of.end()) {
      s_->reservations.erase(u->second);
      s_->uid_of.erase(u);
    }
  }
  return base::OkStatus();
}

base::Status Extender::UpsertPod(const KubePod& p) {
  State& s = *s_;
  std::lock_guard<std::mutex> lock(s.mu);
  const sched::PodRecord* r = s.sched->Find(p.pod.name);
  if (r != nullptr) {
    auto u = s.uid_of.find(p.pod.name);
    if (u != s.uid_of.end() && u->second != s.Key(p)) {  // the name now belongs to a new pod
      s.Release(p.pod.name);
      r = nullptr;
    }
  }
  const bool over = p.terminating || p.pod.phase == "Succeeded" || p.pod.phase == "Failed";
  s.NoteMember(p, over);
  if (over) {
    if (r != nullptr) s.Release(p.pod.name);
    return base::OkStatus();
  }
  // Still pending: a reservation of ours stays (the watch can deliver the pod's pending state
  // after filter reserved it, even after bind posted its Binding).
  if (p.node_name.empty()) return base::OkStatus();
  const auto node = s.sched->NodeIndex(p.node_name);
  if (r != nullptr) {
    if (!r->bound && node && r->node == *node) {  // the API server shows our binding: commit
      s.reservations.erase(s.Key(p));
      return s.sched->Bind(p.pod.name);
    }
    return base::OkStatus();
  }
  if (!node) {
    return base::FailedPreconditionError("bound to node " + p.node_name + ", not (yet) known",
                                         p.pod.name);
  }
  std::vector<int> gpus = p.gpus;
  if (gpus.empty() && p.pod.num_gpu > 0) {  // bound without Seedance: the cluster's own choice
    auto chosen = s.cluster().ChooseGpus(p.pod, *node);
    if (!chosen) {
      return base::FailedPreconditionError("its GPUs do not fit on " + p.node_name, p.pod.name);
    }
    gpus = *chosen;
  }
  SEEDANCE_RETURN_IF_ERROR(s.sched->AddPod(p.pod, *node, gpus));
  s.uid_of[p.pod.name] = s.Key(p);
  return base::OkStatus();
}

void Extender::DeletePod(const KubePod& p) {
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->NoteMember(p, /*gone=*/true);
  auto u = s_->uid_of.find(p.pod.name);
  if (u == s_->uid_of.end() || u->second == s_->Key(p)) s_->Release(p.pod.name);
}

int Extender::ExpireReservations() {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->ExpireLocked();
}

base::Status Extender::Reconfigure(const ExtenderConfig& c) {
  std::lock_guard<std::mutex> lock(s_->mu);
  SEEDANCE_ASSIGN_OR_RETURN(auto policy, sched::MakePolicy(c.policy, s_->o.workload));
  s_->sched->framework().SetPolicy(std::move(policy));
  s_->o.policy = c.policy;
  s_->o.numa_aware = c.numa_aware;
  s_->o.rdma = c.rdma;
  s_->numa->set_enabled(c.numa_aware);
  s_->rdma->set_enabled(c.rdma);
  return base::OkStatus();
}

ExtenderConfig Extender::config() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return {s_->o.policy, s_->o.numa_aware, s_->o.rdma};
}

ExtenderStats Extender::stats() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  ExtenderStats st = s_->counts;
  st.nodes = static_cast<int64_t>(s_->cluster().nodes().size());
  st.pods = static_cast<int64_t>(s_->sched->pod_count());
  st.reservations = static_cast<int64_t>(s_->reservations.size());
  for (const auto& [gang, g] : s_->gangs) {
    st.gangs_waiting += g.placed.empty() && !g.pending.empty() ? 1 : 0;
  }
  st.used_gpu_milli = s_->cluster().used_gpu_milli();
  st.total_gpu_milli = s_->cluster().total_gpu_milli();
  return st;
}

base::Status Extender::Check() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  SEEDANCE_RETURN_IF_ERROR(s_->sched->Check());
  for (const auto& [uid, r] : s_->reservations) {
    const sched::PodRecord* rec = s_->sched->Find(r.name);
    if (rec == nullptr || rec->bound) {
      return base::InternalError("reservation " + uid + " names no assumed pod", r.name);
    }
    auto u = s_->uid_of.find(r.name);
    if (u == s_->uid_of.end() || u->second != uid) {
      return base::InternalError("reservation " + uid + ": the pod's UID differs", r.name);
    }
  }
  for (const auto& [gang, g] : s_->gangs) {
    for (const auto& uid : g.placed) {
      if (s_->reservations.count(uid) == 0) {
        return base::InternalError("gang member " + uid + " placed without a reservation", gang);
      }
    }
  }
  return base::OkStatus();
}

ExtenderMode Extender::mode() const { return s_->o.mode; }

}  // namespace seedance::k8s
