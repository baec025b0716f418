#include "src/sched/score_cache.h"

#include <algorithm>

namespace seedance::sched {

void ScoreCache::Rescore(const Cluster& cluster, const Policy& policy, const Pod& pod, Shape& s,
                         int node, std::mt19937_64& rng) {
  const size_t n = static_cast<size_t>(node);
  if (s.feasible[n]) {
    s.order.erase({-s.at[n].score, cluster.tie_rank(node), node});
    s.feasible[n] = false;
  }
  auto gpus = cluster.Place(pod, node);
  if (!gpus) return;
  one_.assign(1, Candidate{node, 0, std::move(*gpus)});
  policy.Score(cluster, pod, one_, rng);  // rng unused: the policy scores each node alone
  s.at[n] = std::move(one_[0]);
  s.feasible[n] = true;
  s.order.insert({-s.at[n].score, cluster.tie_rank(node), node});
}

std::optional<Candidate> ScoreCache::Best(const Cluster& cluster, const Policy& policy,
                                          const Pod& pod, std::mt19937_64& rng) {
  if (cluster_ != &cluster || tie_epoch_ != cluster.tie_epoch()) {
    shapes_.clear();  // another cluster or a new tie order: start again
    cluster_ = &cluster;
    tie_epoch_ = cluster.tie_epoch();
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
    for (int n = 0; n < nodes; ++n) Rescore(cluster, policy, pod, s, n, rng);
    s.log_seen = log.size();
  } else {
    Shape& s = *it->second;
    // A node that changed several times is re-scored once.
    std::vector<int> changed(log.begin() + static_cast<int64_t>(s.log_seen), log.end());
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    for (int n : changed) Rescore(cluster, policy, pod, s, n, rng);
    s.log_seen = log.size();
  }
  const Shape& s = *it->second;
  if (s.order.empty()) return std::nullopt;
  return s.at[static_cast<size_t>(std::get<2>(*s.order.begin()))];
}

}  // namespace seedance::sched
