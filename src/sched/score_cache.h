// Incremental scoring for Framework::Schedule (private to seedance::sched).
//
// Scoring every node for every pod makes a run of P pods on N nodes cost P x N scores, and P grows
// with N, so the FGD protocol and event mode grew as N^2 (hardening finding 11). When
//   - the policy scores each node alone (Policy::scores_each_node_alone: ScoreAlone needs only the
//     pod's shape and the node's state, and Score's normalisation keeps the set of highest), and
//   - no filter or post-filter plugin runs (a filter may look beyond the node),
// the best node for a pod is a function of the pod's shape (CPU, memory, GPU count, milli-GPU,
// allowed models), the states of the nodes and, under the random tie rule, one draw. The cache
// keeps, per shape, every feasible node in an order-statistics tree ordered by
//   (score descending, tie rank, node index)   for the rules by rank: the first entry wins;
//   (score descending, node index)             for the random rule: of the T entries at the
//                                               highest score, the TieDraw(T)-th wins,
// exactly SelectHost's choice, with the same draw. It re-scores only the nodes in
// Cluster::change_log() since that shape was last asked for. ScoreCacheTest compares the two pod
// by pod. A cached choice carries the score before normalisation (ScoreAlone's).
//
// Cost: the first pod of a shape scores N nodes; after that a pod re-scores the nodes changed since
// the last pod of its shape, O(log N) each, and the choice is O(log N). Memory: one entry per
// (shape, feasible node).
#pragma once

#include <cstdint>
#include <ext/pb_ds/assoc_container.hpp>  // GNU's order-statistics tree
#include <ext/pb_ds/tree_policy.hpp>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "seedance/sched/cluster.h"
#include "seedance/sched/policy.h"

namespace seedance::sched {

class ScoreCache {
 public:
  // The best candidate for `pod`, or nullopt when it fits no node. The cache follows one
  // cluster's change log; another object, or the same one assigned anew, starts it again.
  std::optional<Candidate> Best(const Cluster& cluster, const Policy& policy, TieBreak ties,
                                const Pod& pod, std::mt19937_64& rng);
  // Nodes tested and scored so far (Framework::nodes_examined).
  int64_t nodes_examined() const { return examined_; }

 private:
  using ShapeKey = std::tuple<int64_t, int64_t, int, int, std::vector<std::string>>;
  using Order = std::tuple<int64_t, int, int>;  // -score, tie rank (0 under kRandom), node
  using OrderTree =
      __gnu_pbds::tree<Order, __gnu_pbds::null_type, std::less<Order>, __gnu_pbds::rb_tree_tag,
                       __gnu_pbds::tree_order_statistics_node_update>;
  struct Shape {
    OrderTree order;
    std::vector<Candidate> at;  // at[node]: the scored candidate (valid when feasible[node])
    std::vector<bool> feasible;
    size_t log_seen = 0;  // change-log entries already applied
  };
  Order KeyOf(const Cluster& cluster, const Shape& s, int node) const;
  void Rescore(const Cluster& cluster, const Policy& policy, const Pod& pod, Shape& s, int node);

  std::map<ShapeKey, std::unique_ptr<Shape>> shapes_;
  const Cluster* cluster_ = nullptr;
  uint64_t history_ = 0;
  uint64_t tie_epoch_ = 0;
  TieBreak ties_ = TieBreak::kRandom;
  int64_t examined_ = 0;
  std::vector<Candidate> one_;  // scratch: the single candidate handed to Policy::Score
};

}  // namespace seedance::sched
