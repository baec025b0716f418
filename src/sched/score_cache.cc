#include "src/sched/score_cache.h"

#include <algorithm>
#include <limits>

namespace seedance::sched {

ScoreCache::Order ScoreCache::KeyOf(const Cluster& cluster, const Shape& s, int node) const {
  const int rank = ties_ == TieBreak::kRandom ? 0 : cluster.tie_rank(node);
  return {-s.at[static_cast<size_t>(node)].score, rank, node};
}

void ScoreCache::Rescore(const Cluster& cluster, const Policy& policy, const Pod& pod, Shape& s,
                         int node) {
  const size_t n = static_cast<size_t>(node);
  ++examined_;
  if (s.feasible[n]) {
    s.order.erase(KeyOf(cluster, s, node));
    s.feasible[n] = false;
  }
  auto gpus = cluster.Place(pod, node);
  if (!gpus) return;
  one_.assign(1, Candidate{node, 0, std::move(*gpus)});
  policy.ScoreAlone(cluster, pod, one_);
  s.at[n] = std::move(one_[0]);
  s.feasible[n] = true;
  s.order.insert(KeyOf(cluster, s, node));
}

std::optional<Candidate> ScoreCache::Best(const Cluster& cluster, const Policy& policy,
                                          TieBreak ties, const Pod& pod, std::mt19937_64& rng) {
  if (cluster_ != &cluster || history_ != cluster.history_id() ||
      tie_epoch_ != cluster.tie_epoch() || ties_ != ties) {
    shapes_.clear();  // another cluster or log, a new tie order or rule: start again
    cluster_ = &cluster;
    history_ = cluster.history_id();
    tie_epoch_ = cluster.tie_epoch();
    ties_ = ties;
  }
  const ShapeKey key{pod.cpu_milli, pod.memory_mib, pod.num_gpu, pod.gpu_milli, pod.gpu_models};
  auto [it, inserted] = shapes_.try_emplace(key);
  const int nodes = static_cast<int>(cluster.nodes().size());
  const std::vector<int>& log = cluster.change_log();
  if (inserted) {
    it->second = std::make_unique<Shape>();
    Shape& s = *it->second;
    s.at.resize(static_cast<size_t>(nodes));
    s.feasible.assign(static_cast<size_t>(nodes), false);
    for (int n = 0; n < nodes; ++n) Rescore(cluster, policy, pod, s, n);
    s.log_seen = log.size();
  } else {
    Shape& s = *it->second;
    // A node that changed several times is re-scored once.
    std::vector<int> changed(log.begin() + static_cast<int64_t>(s.log_seen), log.end());
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    for (int n : changed) Rescore(cluster, policy, pod, s, n);
    s.log_seen = log.size();
  }
  const Shape& s = *it->second;
  if (s.order.empty()) return std::nullopt;
  auto best = s.order.begin();
  if (ties == TieBreak::kRandom) {
    // The entries at the highest score come first, in node order.
    const int64_t top = std::get<0>(*best);
    const size_t tied = s.order.order_of_key({top, 1, std::numeric_limits<int>::min()});
    best = s.order.find_by_order(TieDraw(tied, rng));
  }
  return s.at[static_cast<size_t>(std::get<2>(*best))];
}

}  // namespace seedance::sched
