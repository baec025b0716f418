// The live scheduler (feature SCHED-2, SCHED-8): a cache of nodes and pods, and one Framework
// (framework.h) that places pods on it, in the shape of kube-scheduler's cache and cycle:
//
//   AddNode / UpdateNode / RemoveNode   the nodes, by name (an informer's events)
//   AddPod / RemovePod                  pods bound by someone else, or gone
//   Schedule(pod)                       one cycle (filter, score, select, reserve): the pod is
//                                       *assumed* on the chosen node and GPUs
//   Bind(name)                          the bind point: an assumed pod becomes bound
//   Forget(name)                        an assumed pod is dropped (its binding failed)
//   ScheduleGang(pods)                  every member assumed, or none
//
// A pod is known by its name, once: scheduling or adding a name already known is an error. Both
// simulators (FGD protocol, event mode) drive a Scheduler, and so will the Kubernetes extender.
//
// Invariants: every known pod is bound on the cluster at its recorded node and GPUs (so the
// cluster's used GPU equals the sum of the known pods' GPU demand); Check() verifies it and the
// cluster's own invariants.
//
// Node changes rebuild the cluster from the nodes and the known pods (O(nodes + pods)): they are
// rare next to scheduling cycles. The tie order is prepared again for the new node list.
//
// Thread safety: one caller at a time (a scheduling loop), as the Framework.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/sched/cluster.h"
#include "seedance/sched/framework.h"
#include "seedance/sched/model.h"
#include "seedance/sched/policy.h"

namespace seedance::sched {

struct SchedulerOptions {
  TieBreak ties = TieBreak::kRandom;
  // Seeds the scheduler's generator (random policy, random ties) and the shuffled tie order.
  uint64_t seed = 42;
  // Incremental scoring where it is exact (Framework::EnableScoreCache).
  bool score_cache = true;
};

// Where a known pod is.
struct PodRecord {
  Pod pod;
  int node = 0;
  std::vector<int> gpus;
  bool bound = false;  // false: assumed by Schedule, not yet bound
};

class Scheduler {
 public:
  Scheduler(std::unique_ptr<Policy> policy, std::vector<Node> nodes,
            const SchedulerOptions& options = {});

  // The plugins: the framework's extension points (Framework::AddFilter, AddReserve, ...).
  Framework& framework() { return framework_; }
  const Cluster& cluster() const { return cluster_; }
  // The generator of the cycles. A driver that draws from the same stream (the FGD protocol
  // shuffles its arrivals with it, as that paper's simulator does) uses this one.
  std::mt19937_64& rng() { return rng_; }

  base::Status AddNode(const Node& node);
  // The same name with new capacity or labels; fails when its pods would no longer fit.
  base::Status UpdateNode(const Node& node);
  // The node and every pod on it are gone; returns those pods' names.
  base::StatusOr<std::vector<std::string>> RemoveNode(std::string_view name);
  std::optional<int> NodeIndex(std::string_view name) const;

  // A pod bound outside a cycle (another scheduler, a move the caller decided): recorded as
  // bound; it must fit there.
  base::Status AddPod(const Pod& pod, int node, std::vector<int> gpus);
  // A known pod is gone (deleted, finished, preempted): its resources are freed.
  base::Status RemovePod(std::string_view name);

  // One cycle. The chosen node and GPUs (the pod is assumed there), or nullopt when it fits
  // nowhere; an error when the name is known or a plugin misbehaved.
  base::StatusOr<std::optional<Candidate>> Schedule(const Pod& pod);
  // Every member, in order, or none (earlier members forgotten when one fails).
  base::StatusOr<std::optional<std::vector<Candidate>>> ScheduleGang(std::span<const Pod> pods);
  base::Status Bind(std::string_view name);
  base::Status Forget(std::string_view name);

  const PodRecord* Find(std::string_view name) const;
  // The pods on a node (bound or assumed), by name.
  std::vector<const PodRecord*> PodsOn(int node) const;
  size_t pod_count() const { return pods_.size(); }
  base::Status Check() const;

 private:
  base::Status Rebuild(std::vector<Node> nodes);
  void Release(std::unordered_map<std::string, PodRecord>::iterator it);

  SchedulerOptions options_;
  Framework framework_;
  Cluster cluster_;
  std::mt19937_64 rng_;
  std::unordered_map<std::string, PodRecord> pods_;
};

}  // namespace seedance::sched
