#include "seedance/sched/extender.h"

#include <algorithm>
#include <set>
#include <utility>

#include "seedance/sched/qos_tiers.h"
#include "seedance/sched/scheduler.h"
#include "seedance/sched/topology_plugins.h"

namespace seedance::sched {
namespace {

// Restricts a cycle to kube-scheduler's candidates (the nodes that passed its own filters).
class CandidateFilter : public FilterPlugin {
 public:
  std::string_view name() const override { return "extender-candidates"; }
  bool Filter(const Cluster&, const Pod&, int node) const override {
    return !active_ || (static_cast<size_t>(node) < allowed_.size() && allowed_[node] != 0);
  }
  void Allow(std::vector<char> allowed) {
    allowed_ = std::move(allowed);
    active_ = true;
  }
  void Clear() { active_ = false; }

 private:
  bool active_ = false;
  std::vector<char> allowed_;
};

// Why `pod` does not fit on `node`, and whether preemption could change that.
std::pair<std::string, bool> WhyNot(const Cluster& c, const Pod& pod, int node) {
  const NodeState& s = c.state(node);
  const Node& n = c.nodes()[static_cast<size_t>(node)];
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

// A plan's pod as the extender's state names it: "namespace/name", and the key its reservation is
// kept under (its UID, or that name when the pod has none), as State::Key does for a KubePod.
std::string PodName(const BindPlan& plan) { return plan.ns + "/" + plan.name; }
std::string KeyOf(const BindPlan& plan) { return plan.uid.empty() ? PodName(plan) : plan.uid; }

}  // namespace

// How many unknown candidate nodes a filter answer gives a reason for.
constexpr size_t kMaxUnknownNodeReasons = 32;

struct Extender::State {
  ExtenderOptions o;
  base::Env* env = nullptr;
  mutable std::mutex mu;
  std::unique_ptr<Scheduler> sched;
  CandidateFilter* candidates = nullptr;  // these three owned by the scheduler's framework
  RdmaFilter* rdma = nullptr;
  NumaAwareReserve* numa = nullptr;
  std::set<std::string, std::less<>> cordoned;
  struct Reservation {
    std::string name;
    int64_t expires_ns = 0;
  };
  std::map<std::string, Reservation, std::less<>> reservations;  // by UID
  std::map<std::string, std::string, std::less<>> uid_of;        // pod name -> UID
  // Cooperative mode: the pods filtered, by UID, until bind (which carries no pod spec).
  std::map<std::string, std::pair<Pod, int64_t>, std::less<>> filtered;
  struct Gang {
    int size = 1;
    std::map<std::string, KubePod, std::less<>> pending;  // members seen unbound, by UID
    std::set<std::string, std::less<>> bound;             // members seen bound, by UID
    std::set<std::string, std::less<>> placed;            // UIDs reserved together
  };
  std::map<std::string, Gang, std::less<>> gangs;  // by "namespace/gang"
  // Members whose Binding a gang's bind is posting now (by UID): kube-scheduler's own bind of
  // one of them, arriving meanwhile on another connection, posts nothing.
  std::set<std::string, std::less<>> posting;
  ExtenderStats counts;

  const Cluster& cluster() const { return sched->cluster(); }

  // Why a plugin refuses the node; "" when none does.
  std::string PluginRefusal(const Pod& pod, int node) const {
    if (rdma->Filter(cluster(), pod, node)) return "";
    return "no RDMA NIC (label " + std::string(kRdmaNicsLabel) +
           ") for a pod that talks across nodes (rdma enabled)";
  }
  // Whether the pod fits on the node, the plugins included, and why not.
  bool FitsWithPlugins(const Pod& pod, int node, ExtenderFilterResult& r) const {
    const std::string& name = cluster().nodes()[static_cast<size_t>(node)].name;
    if (std::string why = PluginRefusal(pod, node); !why.empty()) {
      r.failed_unresolvable[name] = why;
      return false;
    }
    if (cluster().Fits(pod, node)) return true;
    auto [why, resolvable] = WhyNot(cluster(), pod, node);
    (resolvable ? r.failed : r.failed_unresolvable)[name] = why;
    return false;
  }

  std::string Key(const KubePod& p) const { return p.uid.empty() ? p.pod.name : p.uid; }

  // The pod (namespace/name) that holds `key` (a UID) in this extender's state, other than
  // `name`; "" when none does. Kubernetes UIDs are unique: a second pod with a UID already held is
  // refused, so that no pod can commit, release or take over another pod's reservation.
  std::string UidHeldByAnother(const std::string& key, const std::string& name) const {
    if (key == name) return "";  // no UID given: keyed by name
    if (auto r = reservations.find(key); r != reservations.end() && r->second.name != name) {
      return r->second.name;
    }
    if (auto f = filtered.find(key); f != filtered.end() && f->second.first.name != name) {
      return f->second.first.name;
    }
    for (const auto& [pod, uid] : uid_of) {
      if (uid == key && pod != name) return pod;
    }
    return "";
  }
  static std::string DuplicateUid(const std::string& key, const std::string& holder) {
    return "pod UID " + key + " already belongs to pod " + holder +
           " (UIDs are unique): refused, the other pod's reservation is kept";
  }

  void Release(const std::string& name) {
    const PodRecord* r = sched->Find(name);
    if (r == nullptr) return;
    if (auto u = uid_of.find(name); u != uid_of.end()) {
      reservations.erase(u->second);
      uid_of.erase(u);
    }
    (void)(r->bound ? sched->RemovePod(name) : sched->Forget(name));
  }

  // Every reservation of the gang's members is released: the gang cannot complete as placed.
  int ReleaseGang(Gang& g) {
    int n = 0;
    for (const auto& uid : g.placed) {
      auto r = reservations.find(uid);
      if (r == reservations.end()) continue;
      const std::string name = r->second.name;
      reservations.erase(r);
      uid_of.erase(name);
      (void)sched->Forget(name);
      ++n;
    }
    g.placed.clear();
    return n;
  }

  // A gang member as the informers (or a filter) show it: pending, bound, or gone.
  void NoteMember(const KubePod& p, bool gone) {
    if (p.gang.empty()) return;
    const std::string key = Key(p);
    Gang& g = gangs[p.gang];
    g.size = p.pod.gang;
    if (gone) {
      g.pending.erase(key);
      g.bound.erase(key);
      if (g.placed.count(key) != 0) ReleaseGang(g);
      if (g.pending.empty() && g.bound.empty()) gangs.erase(p.gang);
    } else if (p.node_name.empty()) {
      g.pending[key] = p;
    } else {
      g.pending.erase(key);
      g.bound.insert(key);
      g.placed.erase(key);
    }
  }

  int ExpireLocked() {
    const int64_t now = env->NowMonotonicNanos();
    int n = 0;
    for (auto& [name, g] : gangs) {  // a gang's reservations go together
      const bool late = std::any_of(g.placed.begin(), g.placed.end(), [&](const auto& uid) {
        auto r = reservations.find(uid);
        return r != reservations.end() && r->second.expires_ns <= now;
      });
      if (late) n += ReleaseGang(g);
    }
    for (auto it = reservations.begin(); it != reservations.end();) {
      if (it->second.expires_ns > now) {
        ++it;
        continue;
      }
      const std::string name = it->second.name;
      it = reservations.erase(it);
      uid_of.erase(name);
      (void)sched->Forget(name);
      ++n;
    }
    counts.expired += n;
    std::erase_if(filtered, [now](const auto& kv) { return kv.second.second <= now; });
    return n;
  }

  // kube-scheduler's candidates as node indices; the unknown and cordoned ones go to `failed`.
  std::vector<char> Allowed(const std::vector<std::string>& names, ExtenderFilterResult& r) {
    std::vector<char> allowed(cluster().nodes().size(), 0);
    size_t unknown = 0;
    for (const auto& n : names) {
      const auto idx = sched->NodeIndex(n);
      if (!idx) {
        // A reason for the first few only: a node left out of NodeNames is not a candidate
        // anyway, and a request naming a million unknown nodes must not get a million reasons.
        if (++unknown <= kMaxUnknownNodeReasons) {
          r.failed[n] = "not in the extender's node cache (not yet seen by its watch)";
        }
      } else if (cordoned.count(n) != 0) {
        r.failed_unresolvable[n] = "node is cordoned (spec.unschedulable)";
      } else {
        allowed[static_cast<size_t>(*idx)] = 1;
      }
    }
    return allowed;
  }

  int64_t Deadline() const {
    return env->NowMonotonicNanos() + static_cast<int64_t>(o.reservation_ttl_s * 1e9);
  }

  void Reserve(const std::string& key, const std::string& name) {
    reservations[key] = {name, Deadline()};
    uid_of[name] = key;
  }

  // Every candidate refused for one reason (kube-scheduler shows it in the pod's events).
  static void RefuseAll(ExtenderFilterResult& r, const std::vector<std::string>& names,
                        const std::string& why) {
    for (const auto& n : names) {
      if (r.failed.count(n) == 0 && r.failed_unresolvable.count(n) == 0) r.failed[n] = why;
    }
  }

  // Filter for a gang member, in either mode: its gang's reservation, or the whole gang placed
  // now if every member has been seen, or a wait.
  ExtenderFilterResult FilterGangMember(const KubePod& p, const std::vector<std::string>& names,
                                        std::vector<char> allowed, ExtenderFilterResult r) {
    NoteMember(p, /*gone=*/false);
    Gang& g = gangs[p.gang];
    const std::string key = Key(p);
    if (const PodRecord* rec = sched->Find(p.pod.name)) {
      auto u = uid_of.find(p.pod.name);
      if (u != uid_of.end() && u->second == key) {
        const std::string& at = cluster().nodes()[static_cast<size_t>(rec->node)].name;
        if (rec->bound || allowed[static_cast<size_t>(rec->node)] != 0) {
          r.node_names = std::vector<std::string>{at};
          ++counts.filter_fits;
        } else {
          RefuseAll(r, names, "reserved with gang " + p.gang + " on node " + at);
        }
        return r;
      }
      Release(p.pod.name);  // a stale pod of the same name
    }
    const size_t seen = g.pending.size() + g.bound.size();
    if (seen < static_cast<size_t>(g.size)) {
      RefuseAll(r, names,
                "gang " + p.gang + ": " + std::to_string(seen) + " of " + std::to_string(g.size) +
                    " members seen; waiting for the rest");
      return r;
    }
    // Place every member not yet placed (a replacement may join members already bound).
    std::vector<Pod> members;
    std::vector<std::string> uids;
    members.push_back(p.pod);  // the asked one first: its candidates are the ones known
    uids.push_back(key);
    for (const auto& [uid, m] : g.pending) {
      if (uid == key || g.placed.count(uid) != 0 || sched->Find(m.pod.name) != nullptr) continue;
      members.push_back(m.pod);
      uids.push_back(uid);
    }
    candidates->Allow(std::move(allowed));
    auto placed = sched->ScheduleGang(members);
    candidates->Clear();
    if (!placed.ok()) {
      r.error = placed.status().ToString();
      return r;
    }
    if (!placed->has_value()) {
      RefuseAll(r, names,
                "gang " + p.gang + ": its " + std::to_string(members.size()) +
                    " members do not all fit on these nodes at once");
      return r;
    }
    for (size_t i = 0; i < members.size(); ++i) {
      Reserve(uids[i], members[i].name);
      g.placed.insert(uids[i]);
    }
    r.node_names =
        std::vector<std::string>{cluster().nodes()[static_cast<size_t>((**placed)[0].node)].name};
    ++counts.filter_fits;
    return r;
  }

  // One cycle restricted to `allowed`.
  base::StatusOr<std::optional<Candidate>> ScheduleAmong(const Pod& pod,
                                                         std::vector<char> allowed) {
    candidates->Allow(std::move(allowed));
    auto c = sched->Schedule(pod);
    candidates->Clear();
    return c;
  }
};

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
  SEEDANCE_ASSIGN_OR_RETURN(auto policy, MakePolicy(o.policy, o.workload));
  auto s = std::make_unique<State>();
  s->o = o;
  s->env = o.env != nullptr ? o.env : base::Env::Default();
  SchedulerOptions so;
  so.ties = o.ties;
  so.seed = o.seed;
  s->sched = std::make_unique<Scheduler>(std::move(policy), std::vector<Node>{}, so);
  auto filter = std::make_unique<CandidateFilter>();
  s->candidates = filter.get();
  s->sched->framework().AddFilter(std::move(filter));
  auto rdma = std::make_unique<RdmaFilter>();
  rdma->set_enabled(o.rdma);
  s->rdma = rdma.get();
  s->sched->framework().AddFilter(std::move(rdma));
  auto numa = std::make_unique<NumaAwareReserve>();
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
  if (s_->sched->NodeIndex(node.node.name)) return s_->sched->UpdateNode(node.node);
  return s_->sched->AddNode(node.node);
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
  const PodRecord* r = s.sched->Find(p.pod.name);
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

ExtenderFilterResult Extender::Filter(const ExtenderArgs& args) {
  State& s = *s_;
  std::lock_guard<std::mutex> lock(s.mu);
  s.ExpireLocked();
  ++s.counts.filters;
  ExtenderFilterResult r;
  const KubePod& p = args.pod;
  if (const std::string holder = s.UidHeldByAnother(s.Key(p), p.pod.name); !holder.empty()) {
    r.error = State::DuplicateUid(s.Key(p), holder);
    return r;
  }
  const std::vector<std::string> names = args.candidate_names();
  std::vector<char> allowed = s.Allowed(names, r);
  if (!p.gang.empty()) return s.FilterGangMember(p, names, std::move(allowed), std::move(r));
  if (s.o.mode == ExtenderMode::kCooperative) {
    std::vector<std::string> fit;
    for (const auto& n : names) {
      const auto idx = s.sched->NodeIndex(n);
      if (!idx || allowed[static_cast<size_t>(*idx)] == 0) continue;
      if (s.FitsWithPlugins(p.pod, *idx, r)) fit.push_back(n);
    }
    if (!fit.empty()) {
      r.node_names = std::move(fit);
      ++s.counts.filter_fits;
      s.filtered[s.Key(p)] = {p.pod, s.Deadline()};
    }
    return r;
  }
  // Decide: the reservation this pod already holds, else a new cycle.
  if (const PodRecord* rec = s.sched->Find(p.pod.name)) {
    auto u = s.uid_of.find(p.pod.name);
    const bool same = u != s.uid_of.end() && u->second == s.Key(p);
    const std::string& at = s.cluster().nodes()[static_cast<size_t>(rec->node)].name;
    if (same && (rec->bound || allowed[static_cast<size_t>(rec->node)] != 0)) {
      r.node_names = std::vector<std::string>{at};
      ++s.counts.filter_fits;
      return r;
    }
    s.Release(p.pod.name);  // a stale pod of the same name, or a node no longer a candidate
  }
  auto c = s.ScheduleAmong(p.pod, allowed);
  if (!c.ok()) {
    r.error = c.status().ToString();
    return r;
  }
  if (!c->has_value()) {
    for (const auto& n : names) {
      const auto idx = s.sched->NodeIndex(n);
      if (!idx || allowed[static_cast<size_t>(*idx)] == 0) continue;
      (void)s.FitsWithPlugins(p.pod, *idx, r);
    }
    return r;
  }
  s.Reserve(s.Key(p), p.pod.name);
  const std::string& chosen = s.cluster().nodes()[static_cast<size_t>((*c)->node)].name;
  // The other candidates are left out, not listed as failed: kube-scheduler drops a node absent
  // from NodeNames, and a reason for each of a thousand nodes would be decoded for every pod
  // only to be thrown away once the pod is bound.
  r.node_names = std::vector<std::string>{chosen};
  ++s.counts.filter_fits;
  return r;
}

std::vector<HostPriority> Extender::Prioritize(const ExtenderArgs& args) {
  State& s = *s_;
  std::lock_guard<std::mutex> lock(s.mu);
  const std::vector<std::string> names = args.candidate_names();
  std::vector<HostPriority> out;
  out.reserve(names.size());
  for (const auto& n : names) out.push_back({n, 0});
  if (s.o.mode == ExtenderMode::kDecide || !args.pod.gang.empty()) {
    if (const PodRecord* rec = s.sched->Find(args.pod.pod.name)) {
      const std::string& at = s.cluster().nodes()[static_cast<size_t>(rec->node)].name;
      for (auto& h : out) h.score = h.host == at ? 10 : 0;
    }
    return out;
  }
  std::vector<Candidate> feasible;
  std::vector<int> position(s.cluster().nodes().size(), -1);  // node -> its entry in `out`
  for (size_t i = 0; i < names.size(); ++i) {
    const auto idx = s.sched->NodeIndex(names[i]);
    if (!idx || s.cordoned.count(names[i]) != 0) continue;
    if (!s.PluginRefusal(args.pod.pod, *idx).empty()) continue;
    auto gpus = s.cluster().Place(args.pod.pod, *idx);
    if (!gpus) continue;
    feasible.push_back({*idx, 0, *gpus});
    position[static_cast<size_t>(*idx)] = static_cast<int>(i);
  }
  if (feasible.empty()) return out;
  const Policy& policy = s.sched->framework().policy();
  policy.Score(s.cluster(), args.pod.pod, feasible, s.sched->rng());
  const int64_t top = std::max<int64_t>(1, policy.max_score());
  for (const Candidate& c : feasible) {  // Score may reorder them
    out[static_cast<size_t>(position[static_cast<size_t>(c.node)])].score =
        std::clamp<int64_t>(c.score * 10 / top, 0, 10);
  }
  return out;
}

base::StatusOr<std::vector<BindPlan>> Extender::PlanBind(const ExtenderBindingArgs& a) {
  State& s = *s_;
  std::lock_guard<std::mutex> lock(s.mu);
  const std::string name = a.pod_namespace + "/" + a.pod_name;
  const std::string key = a.pod_uid.empty() ? name : a.pod_uid;
  if (const std::string holder = s.UidHeldByAnother(key, name); !holder.empty()) {
    return base::FailedPreconditionError(State::DuplicateUid(key, holder), name);
  }
  const auto node = s.sched->NodeIndex(a.node);
  if (!node) return base::FailedPreconditionError("node " + a.node + " is not known", name);
  const PodRecord* rec = s.sched->Find(name);
  auto u = s.uid_of.find(name);
  const bool ours = rec != nullptr && u != s.uid_of.end() && u->second == key;
  const bool elsewhere = ours && rec->node != *node;
  if (elsewhere && rec->bound) {
    return base::FailedPreconditionError("already bound to another node", name);
  }
  if (ours && (rec->bound || s.posting.count(key) != 0)) {
    return std::vector<BindPlan>{};  // its gang's bind posted it, or is posting it
  }
  // A gang member: its gang's reservation is kept whatever kube-scheduler picked, and every
  // member still to bind goes with it.
  for (auto& [gang, g] : s.gangs) {
    if (g.placed.count(key) == 0) continue;
    if (!ours || elsewhere) {
      return base::FailedPreconditionError(
          "reserved with gang " + gang + (ours ? " on another node" : ", but not found"), name);
    }
    std::vector<BindPlan> plans{{a.pod_namespace, a.pod_name, a.pod_uid, a.node, rec->gpus}};
    for (const auto& uid : g.placed) {
      auto m = g.pending.find(uid);
      const PodRecord* mr = m == g.pending.end() ? nullptr : s.sched->Find(m->second.pod.name);
      if (uid == key || mr == nullptr || mr->bound) continue;
      plans.push_back({m->second.ns, m->second.name, m->second.uid,
                       s.cluster().nodes()[static_cast<size_t>(mr->node)].name, mr->gpus});
    }
    for (const auto& plan : plans) {
      s.posting.insert(KeyOf(plan));
    }
    return plans;
  }
  // A stale pod of the same name, or a reservation on a node kube-scheduler did not pick.
  if (rec != nullptr && (!ours || elsewhere)) {
    s.Release(name);
    rec = nullptr;
  }
  if (rec != nullptr) {
    return std::vector<BindPlan>{{a.pod_namespace, a.pod_name, a.pod_uid, a.node, rec->gpus}};
  }
  // Cooperative mode (or a reservation that expired): the GPUs are chosen now, on that node.
  auto f = s.filtered.find(key);
  if (f == s.filtered.end()) {
    return base::FailedPreconditionError(
        "no reservation and no filtered pod spec for this UID (expired after " +
            std::to_string(s.o.reservation_ttl_s) + " s?)",
        name);
  }
  std::vector<char> only(s.cluster().nodes().size(), 0);
  only[static_cast<size_t>(*node)] = 1;
  SEEDANCE_ASSIGN_OR_RETURN(const auto c, s.ScheduleAmong(f->second.first, std::move(only)));
  if (!c) return base::FailedPreconditionError("no longer fits on " + a.node, name);
  s.filtered.erase(f);
  s.Reserve(key, name);
  return std::vector<BindPlan>{{a.pod_namespace, a.pod_name, a.pod_uid, a.node, c->gpus}};
}

std::map<std::string, MetaVictims> Extender::Preempt(const ExtenderPreemptionArgs& args) {
  State& s = *s_;
  std::lock_guard<std::mutex> lock(s.mu);
  std::map<std::string, MetaVictims> out;
  const Pod& pod = args.pod.pod;
  // A node's state with pods taken off or put back (per GPU; the tag counts do not matter to
  // whether the pod fits).
  auto shift = [](NodeState& st, const PodRecord& r, int sign) {
    st.cpu_left += sign * r.pod.cpu_milli;
    st.mem_left += sign * r.pod.memory_mib;
    for (int g : r.gpus) st.gpu_left[static_cast<size_t>(g)] += sign * r.pod.gpu_milli;
  };
  for (const auto& [name, proposed] : args.victims) {
    const auto node = s.sched->NodeIndex(name);
    if (!node || s.cordoned.count(name) != 0) continue;
    std::vector<const PodRecord*> lower;
    for (const PodRecord* r : s.sched->PodsOn(*node)) {
      if (r->bound && r->pod.priority < pod.priority) lower.push_back(r);
    }
    // The cheapest victims first: lowest priority, lowest tier, largest GPU share, by name.
    std::sort(lower.begin(), lower.end(), [](const PodRecord* a, const PodRecord* b) {
      if (a->pod.priority != b->pod.priority) return a->pod.priority < b->pod.priority;
      const Tier ta = TierOfQos(a->pod.qos), tb = TierOfQos(b->pod.qos);
      if (ta != tb) return ta > tb;  // bronze before silver before gold
      if (a->pod.gpu_demand_milli() != b->pod.gpu_demand_milli()) {
        return a->pod.gpu_demand_milli() > b->pod.gpu_demand_milli();
      }
      return a->pod.name < b->pod.name;
    });
    NodeState st = s.cluster().state(*node);
    std::vector<const PodRecord*> victims;
    for (const PodRecord* r : lower) {
      if (s.cluster().PlaceOn(pod, *node, st)) break;
      shift(st, *r, +1);
      victims.push_back(r);
    }
    if (!s.cluster().PlaceOn(pod, *node, st)) continue;  // no set of victims makes room
    // Reprieve, the most valuable first: a victim goes back if the pod still fits beside it.
    std::vector<const PodRecord*> taken;
    for (auto it = victims.rbegin(); it != victims.rend(); ++it) {
      shift(st, **it, -1);
      if (s.cluster().PlaceOn(pod, *node, st)) continue;
      shift(st, **it, +1);
      taken.push_back(*it);
    }
    MetaVictims& v = out[name];
    v.num_pdb_violations = proposed.num_pdb_violations;
    for (const PodRecord* r : taken) {
      auto u = s.uid_of.find(r->pod.name);
      v.pod_uids.push_back(u != s.uid_of.end() ? u->second : r->pod.name);
    }
  }
  return out;
}

void Extender::BindSucceeded(const BindPlan& plan) {
  std::lock_guard<std::mutex> lock(s_->mu);
  const std::string uid = KeyOf(plan);
  s_->posting.erase(uid);
  ++s_->counts.binds;
  for (auto& [gang, g] : s_->gangs) {
    if (g.placed.erase(uid) != 0) g.bound.insert(uid);
  }
  auto it = s_->reservations.find(uid);
  // Gone: the watch committed it first. Another pod's: never committed by this one's Binding.
  if (it == s_->reservations.end() || it->second.name != PodName(plan)) return;
  (void)s_->sched->Bind(it->second.name);
  s_->reservations.erase(it);
}

void Extender::BindFailed(const BindPlan& plan) {
  std::lock_guard<std::mutex> lock(s_->mu);
  const std::string uid = KeyOf(plan);
  s_->posting.erase(uid);
  auto it = s_->reservations.find(uid);
  ++s_->counts.bind_failures;
  if (it == s_->reservations.end() || it->second.name != PodName(plan)) return;
  const std::string name = it->second.name;
  s_->Release(name);
  for (auto& [gang, g] : s_->gangs) {
    if (g.placed.erase(uid) != 0) s_->ReleaseGang(g);
  }
}

int Extender::ExpireReservations() {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->ExpireLocked();
}

base::Status Extender::Reconfigure(const ExtenderConfig& c) {
  std::lock_guard<std::mutex> lock(s_->mu);
  SEEDANCE_ASSIGN_OR_RETURN(auto policy, MakePolicy(c.policy, s_->o.workload));
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
    const PodRecord* rec = s_->sched->Find(r.name);
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

}  // namespace seedance::sched
