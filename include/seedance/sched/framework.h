// The scheduling framework (feature SCHED-2), in the shape of the Kubernetes
// scheduler framework: a few extension points, one small interface each, run
// in this order for every pod:
//
//   pre-filter  every FilterPlugin's PreFilter, once per cycle (state for the pod)
//   filter      Cluster::Place (CPU, memory, GPU type and GPUs fit), then every
//               FilterPlugin; a node must pass all of them
//   post-filter when no node passes: the PostFilterPlugin (preemption) may free
//               room, and the cycle is tried once more
//   score       the policy (policy.h) scores the feasible nodes and may pick
//               other GPUs; a policy normalises its own scores (min-max, max), and
//               the framework rejects a score outside 0..Policy::max_score() (as
//               kube-scheduler rejects one outside 0..100): the cycle fails with an
//               error naming the policy, the node and the score
//   select      the highest score; ties at random or by node name (SelectHost)
//   reserve     every ReservePlugin, in order; the first failure unreserves the
//               ones before it, in reverse. The cluster's own reservation
//               (Cluster::Bind) always runs first. A reserve plugin may move the
//               pod to other GPUs of the chosen node (a device choice, as a device
//               plugin makes at allocation); the node stays
//   bind        Bind, a separate call: the BindPlugin, if any (a simulator has
//               none; the Kubernetes extender posts the binding); a failure
//               unreserves everything
//
// The live Scheduler (scheduler.h) runs one Framework; both simulators (FGD
// protocol, event mode) and the Kubernetes extender (SCHED-8) drive it.
//
// Thread safety: a Framework is used by one scheduling loop at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/sched/cluster.h"
#include "seedance/sched/policy.h"

namespace seedance::sched {

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual std::string_view name() const = 0;
  // Once per cycle, before any Filter call for the pod: what the plugin needs to know of it.
  virtual void PreFilter(const Cluster&, const Pod&) {}
  virtual bool Filter(const Cluster& cluster, const Pod& pod, int node) const = 0;
};

class PostFilterPlugin {
 public:
  virtual ~PostFilterPlugin() = default;
  virtual std::string_view name() const = 0;
  // Called when no node passes the filters; returns true when it changed the
  // cluster (e.g. preempted pods) so that another attempt may succeed.
  virtual bool PostFilter(Cluster& cluster, const Pod& pod) = 0;
};

class ReservePlugin {
 public:
  virtual ~ReservePlugin() = default;
  virtual std::string_view name() const = 0;
  // `at` is bound on the cluster; the plugin may rebind the pod to other GPUs of at.node and
  // say so in at.gpus.
  virtual base::Status Reserve(Cluster& cluster, const Pod& pod, Candidate& at) = 0;
  virtual void Unreserve(Cluster& cluster, const Pod& pod, const Candidate& at) = 0;
};

class BindPlugin {
 public:
  virtual ~BindPlugin() = default;
  virtual std::string_view name() const = 0;
  virtual base::Status Bind(const Pod& pod, const Candidate& at) = 0;
};

class ScoreCache;

class Framework {
 public:
  explicit Framework(std::unique_ptr<Policy> policy);
  ~Framework();

  void AddFilter(std::unique_ptr<FilterPlugin> p) { filters_.push_back(std::move(p)); }
  void AddReserve(std::unique_ptr<ReservePlugin> p) { reserves_.push_back(std::move(p)); }
  void SetPostFilter(std::unique_ptr<PostFilterPlugin> p) { post_filter_ = std::move(p); }
  void SetBind(std::unique_ptr<BindPlugin> p) { bind_ = std::move(p); }
  void SetTieBreak(TieBreak t) { ties_ = t; }
  // Incremental scoring (src/sched/score_cache.h): each (pod shape, node) is scored again only
  // after the node changes. Used only where it chooses exactly what the full scan chooses (a policy
  // that scores each node alone, no filter or post-filter plugins); elsewhere Schedule scans every
  // node as before. A choice it makes carries the score before normalisation. Off by default.
  void EnableScoreCache(bool on);

  const Policy& policy() const { return *policy_; }
  // Another policy from the next cycle on (a live reconfiguration); the incremental scores of
  // the old one are dropped.
  void SetPolicy(std::unique_ptr<Policy> policy);
  // Nodes whose fit was tested (and, where feasible, scored) by Schedule so far: N per full scan,
  // and under incremental scoring the nodes re-scored. A work count for scaling tests.
  int64_t nodes_examined() const;

  // One scheduling cycle up to reserve: the pod is bound on the cluster at the result. nullopt
  // when it fits nowhere (after the post-filter's one retry) or a reservation failed; an error
  // when the policy gave a score out of range.
  base::StatusOr<std::optional<Candidate>> Schedule(Cluster& cluster, const Pod& pod,
                                                    std::mt19937_64& rng);
  // The bind point, after Schedule: the BindPlugin (none: OK). A failure unschedules the pod.
  base::Status Bind(Cluster& cluster, const Pod& pod, const Candidate& at);
  // Undoes a successful Schedule (a gang member whose siblings failed, a pod forgotten or gone).
  void Unschedule(Cluster& cluster, const Pod& pod, const Candidate& at);

 private:
  bool Reserve(Cluster& cluster, const Pod& pod, Candidate& at);
  base::Status CheckScores(const Cluster& cluster) const;

  std::unique_ptr<Policy> policy_;
  std::vector<std::unique_ptr<FilterPlugin>> filters_;
  std::vector<std::unique_ptr<ReservePlugin>> reserves_;
  std::unique_ptr<PostFilterPlugin> post_filter_;
  std::unique_ptr<BindPlugin> bind_;
  std::vector<Candidate> feasible_;  // reused between cycles
  TieBreak ties_ = TieBreak::kRandom;
  std::unique_ptr<ScoreCache> score_cache_;
  int64_t scanned_ = 0;  // nodes the full scans tested
};

}  // namespace seedance::sched
