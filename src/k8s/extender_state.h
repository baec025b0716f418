// The extender's state, shared by its two files: extender.cc (creation, the informers' updates,
// reconfiguration, stats and the invariant) and extender_verbs.cc (filter, prioritize, bind and
// preempt, and the bind's outcome). Private to sched; include/seedance/k8s/extender.h is the
// contract.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "seedance/k8s/extender.h"
#include "seedance/sched/qos_tiers.h"
#include "seedance/sched/scheduler.h"
#include "seedance/sched/topology_plugins.h"

namespace seedance::k8s {
namespace extender_detail {

// Restricts a cycle to kube-scheduler's candidates (the nodes that passed its own filters).
class CandidateFilter : public sched::FilterPlugin {
 public:
  std::string_view name() const override { return "extender-candidates"; }
  bool Filter(const sched::Cluster&, const sched::Pod&, int node) const override {
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
std::pair<std::string, bool> WhyNot(const sched::Cluster& c, const sched::Pod& pod, int node);

// A plan's pod as the extender's state names it: "namespace/name", and the key its reservation is
// kept under (its UID, or that name when the pod has none), as State::Key does for a KubePod.
std::string PodName(const BindPlan& plan);
std::string KeyOf(const BindPlan& plan);

}  // namespace extender_detail

// How many unknown candidate nodes a filter answer gives a reason for.
inline constexpr size_t kMaxUnknownNodeReasons = 32;

struct Extender::State {
  ExtenderOptions o;
  base::Env* env = nullptr;
  mutable std::mutex mu;
  std::unique_ptr<sched::Scheduler> sched;
  extender_detail::CandidateFilter* candidates =
      nullptr;  // these three owned by the scheduler's framework
  sched::RdmaFilter* rdma = nullptr;
  sched::NumaAwareReserve* numa = nullptr;
  std::set<std::string, std::less<>> cordoned;
  struct Reservation {
    std::string name;
    int64_t expires_ns = 0;
  };
  std::map<std::string, Reservation, std::less<>> reservations;  // by UID
  std::map<std::string, std::string, std::less<>> uid_of;        // pod name -> UID
  // Cooperative mode: the pods filtered, by UID, until bind (which carries no pod spec).
  std::map<std::string, std::pair<sched::Pod, int64_t>, std::less<>> filtered;
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

  const sched::Cluster& cluster() const { return sched->cluster(); }

  // Why a plugin refuses the node; "" when none does.
  std::string PluginRefusal(const sched::Pod& pod, int node) const {
    if (rdma->Filter(cluster(), pod, node)) return "";
    return "no RDMA NIC (label " + std::string(kRdmaNicsLabel) +
           ") for a pod that talks across nodes (rdma enabled)";
  }
  // Whether the pod fits on the node, the plugins included, and why not.
  bool FitsWithPlugins(const sched::Pod& pod, int node, ExtenderFilterResult& r) const {
    const std::string& name = cluster().nodes()[static_cast<size_t>(node)].name;
    if (std::string why = PluginRefusal(pod, node); !why.empty()) {
      r.failed_unresolvable[name] = why;
      return false;
    }
    if (cluster().Fits(pod, node)) return true;
    auto [why, resolvable] = extender_detail::WhyNot(cluster(), pod, node);
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
    const sched::PodRecord* r = sched->Find(name);
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
    if (const sched::PodRecord* rec = sched->Find(p.pod.name)) {
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
    std::vector<sched::Pod> members;
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
  base::StatusOr<std::optional<sched::Candidate>> ScheduleAmong(const sched::Pod& pod,
                                                                std::vector<char> allowed) {
    candidates->Allow(std::move(allowed));
    auto c = sched->Schedule(pod);
    candidates->Clear();
    return c;
  }
};

}  // namespace seedance::k8s
