// The extender's verbs: filter, prioritize, bind (planned here, posted by the server) and
// preempt, and what a bind's outcome does to the reservations. The state they share is in
// extender_state.h.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "seedance/k8s/extender.h"
#include "src/k8s/extender_state.h"

namespace seedance::k8s {

using extender_detail::KeyOf;
using extender_detail::PodName;

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
  if (const sched::PodRecord* rec = s.sched->Find(p.pod.name)) {
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
    if (const sched::PodRecord* rec = s.sched->Find(args.pod.pod.name)) {
      const std::string& at = s.cluster().nodes()[static_cast<size_t>(rec->node)].name;
      for (auto& h : out) h.score = h.host == at ? 10 : 0;
    }
    return out;
  }
  std::vector<sched::Candidate> feasible;
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
  const sched::Policy& policy = s.sched->framework().policy();
  policy.Score(s.cluster(), args.pod.pod, feasible, s.sched->rng());
  const int64_t top = std::max<int64_t>(1, policy.max_score());
  for (const sched::Candidate& c : feasible) {  // Score may reorder them
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
  const sched::PodRecord* rec = s.sched->Find(name);
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
      const sched::PodRecord* mr =
          m == g.pending.end() ? nullptr : s.sched->Find(m->second.pod.name);
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
  const sched::Pod& pod = args.pod.pod;
  // A node's state with pods taken off or put back (per GPU; the tag counts do not matter to
  // whether the pod fits).
  auto shift = [](sched::NodeState& st, const sched::PodRecord& r, int sign) {
    st.cpu_left += sign * r.pod.cpu_milli;
    st.mem_left += sign * r.pod.memory_mib;
    for (int g : r.gpus) st.gpu_left[static_cast<size_t>(g)] += sign * r.pod.gpu_milli;
  };
  for (const auto& [name, proposed] : args.victims) {
    const auto node = s.sched->NodeIndex(name);
    if (!node || s.cordoned.count(name) != 0) continue;
    std::vector<const sched::PodRecord*> lower;
    for (const sched::PodRecord* r : s.sched->PodsOn(*node)) {
      if (r->bound && r->pod.priority < pod.priority) lower.push_back(r);
    }
    // The cheapest victims first: lowest priority, lowest tier, largest GPU share, by name.
    std::sort(lower.begin(), lower.end(), [](const sched::PodRecord* a, const sched::PodRecord* b) {
      if (a->pod.priority != b->pod.priority) return a->pod.priority < b->pod.priority;
      const sched::Tier ta = sched::TierOfQos(a->pod.qos), tb = sched::TierOfQos(b->pod.qos);
      if (ta != tb) return ta > tb;  // bronze before silver before gold
      if (a->pod.gpu_demand_milli() != b->pod.gpu_demand_milli()) {
        return a->pod.gpu_demand_milli() > b->pod.gpu_demand_milli();
      }
      return a->pod.name < b->pod.name;
    });
    sched::NodeState st = s.cluster().state(*node);
    std::vector<const sched::PodRecord*> victims;
    for (const sched::PodRecord* r : lower) {
      if (s.cluster().PlaceOn(pod, *node, st)) break;
      shift(st, *r, +1);
      victims.push_back(r);
    }
    if (!s.cluster().PlaceOn(pod, *node, st)) continue;  // no set of victims makes room
    // Reprieve, the most valuable first: a victim goes back if the pod still fits beside it.
    std::vector<const sched::PodRecord*> taken;
    for (auto it = victims.rbegin(); it != victims.rend(); ++it) {
      shift(st, **it, -1);
      if (s.cluster().PlaceOn(pod, *node, st)) continue;
      shift(st, **it, +1);
      taken.push_back(*it);
    }
    MetaVictims& v = out[name];
    v.num_pdb_violations = proposed.num_pdb_violations;
    for (const sched::PodRecord* r : taken) {
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

}  // namespace seedance::k8s
