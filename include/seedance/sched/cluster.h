// Cluster state for scheduling (feature SCHED-2): what is left on every node —
// CPU, memory and each GPU's milli-GPU — with the fit test, GPU choice and
// binding that every policy and the simulator share.
//
// Invariants (Check): 0 <= left <= capacity for every resource, and the
// used GPU total equals capacity minus what is left.
//
// Thread safety: a Cluster is one simulation's state; no locking.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/sched/model.h"

namespace seedance::sched {

// The GPU-affinity tag of a pod: -1 CPU-only, 0 a share, k whole GPUs.
int GpuTag(const Pod& pod);

struct NodeState {
  int64_t cpu_left = 0;
  int64_t mem_left = 0;
  std::vector<int> gpu_left;  // milli-GPU left per GPU (1000 = free)
  // Pods bound here per GPU-affinity tag (the FGD simulator's): index 0 a
  // share of one GPU, k = 1..8 a pod of k whole GPUs (larger ones count as 8).
  std::array<int, 9> tag_pods{};
  int64_t gpu_left_total() const;
  int full_free_gpus() const;
};

class Cluster {
 public:
  explicit Cluster(std::vector<Node> nodes);
  // A copy (a trial placement, a fresh run) is a new history: the same nodes and state, an empty
  // change log and its own history_id() (ChangeLog below). So copying a long-running cluster
  // costs its nodes, not its whole log, and incremental scoring never follows a log another
  // object wrote.

  const std::vector<Node>& nodes() const { return nodes_; }
  const NodeState& state(int node) const { return state_[static_cast<size_t>(node)]; }
  // The node's place in the order SelectHost breaks ties by (0 first): the
  // lexicographic order of node names, unless ShuffleTieOrder drew another.
  int tie_rank(int node) const { return tie_rank_[static_cast<size_t>(node)]; }
  // A uniformly random tie order. The FGD paper's simulator gets one this way:
  // before scheduling it prefixes every node's name with an index from a
  // random permutation ("%04d-"), so "the smallest name" is a random node,
  // fixed for the run.
  void ShuffleTieOrder(std::mt19937_64& rng);
  int64_t total_gpu_milli() const { return total_gpu_milli_; }
  int64_t used_gpu_milli() const { return used_gpu_milli_; }

  // The node's GPU model is one the pod allows (any when the pod names none).
  bool TypeAllowed(const Pod& pod, int node) const;
  // CPU, memory, type and GPUs all fit.
  bool Fits(const Pod& pod, int node) const { return Place(pod, node).has_value(); }
  // GPUs for the pod on the node: whole GPUs -> the lowest-index free ones;
  // a share -> the fitting GPU with the least left (best fit, lowest index on ties).
  // nullopt when they do not fit. CPU-only pods get an empty list.
  std::optional<std::vector<int>> ChooseGpus(const Pod& pod, int node) const;
  // The fit test and the GPU choice in one: the GPUs when CPU, memory, type
  // and GPUs fit, else nullopt.
  std::optional<std::vector<int>> Place(const Pod& pod, int node) const {
    return PlaceOn(pod, node, state(node));
  }
  // The same test and choice on node `node` in state `s` (a trial state the caller keeps).
  std::optional<std::vector<int>> PlaceOn(const Pod& pod, int node, const NodeState& s) const;
  // The state the node would have with the pod on `gpus`.
  NodeState After(const Pod& pod, int node, std::span<const int> gpus) const;

  void Bind(const Pod& pod, int node, std::span<const int> gpus);
  void Unbind(const Pod& pod, int node, std::span<const int> gpus);

  // Every node a Bind or Unbind touched, in order: what incremental scoring (score_cache.h)
  // re-scores. history_id() names the log (unique per object and per copy); tie_epoch() changes
  // when ShuffleTieOrder does.
  const std::vector<int>& change_log() const { return log_.nodes; }
  uint64_t history_id() const { return log_.id; }
  uint64_t tie_epoch() const { return tie_epoch_; }

  base::Status Check() const;

 private:
  std::vector<Node> nodes_;
  std::vector<NodeState> state_;
  std::vector<int> tie_rank_;
  int64_t total_gpu_milli_ = 0;
  int64_t used_gpu_milli_ = 0;
  uint64_t tie_epoch_ = 0;
  // The nodes touched, under an id unique to this history: copying or assigning one (which a
  // move does too) starts an empty log with a new id.
  struct ChangeLog {
    ChangeLog();
    ChangeLog(const ChangeLog&) : ChangeLog() {}
    ChangeLog& operator=(const ChangeLog&);
    std::vector<int> nodes;
    uint64_t id;
  };
  ChangeLog log_;
};

}  // namespace seedance::sched
