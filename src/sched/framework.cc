#include "seedance/sched/framework.h"

#include <string>

#include "src/sched/score_cache.h"

namespace seedance::sched {

Framework::Framework(std::unique_ptr<Policy> policy) : policy_(std::move(policy)) {}

void Framework::SetPolicy(std::unique_ptr<Policy> policy) {
  policy_ = std::move(policy);
  if (score_cache_) score_cache_ = std::make_unique<ScoreCache>();
}
Framework::~Framework() = default;

void Framework::EnableScoreCache(bool on) {
  score_cache_ = on ? std::make_unique<ScoreCache>() : nullptr;
}

int64_t Framework::nodes_examined() const {
  return scanned_ + (score_cache_ ? score_cache_->nodes_examined() : 0);
}

bool Framework::Reserve(Cluster& cluster, const Pod& pod, Candidate& at) {
  cluster.Bind(pod, at.node, at.gpus);
  for (size_t i = 0; i < reserves_.size(); ++i) {
    if (!reserves_[i]->Reserve(cluster, pod, at).ok()) {
      for (size_t k = i; k-- > 0;) reserves_[k]->Unreserve(cluster, pod, at);
      cluster.Unbind(pod, at.node, at.gpus);
      return false;
    }
  }
  return true;
}

void Framework::Unschedule(Cluster& cluster, const Pod& pod, const Candidate& at) {
  for (size_t k = reserves_.size(); k-- > 0;) reserves_[k]->Unreserve(cluster, pod, at);
  cluster.Unbind(pod, at.node, at.gpus);
}

base::Status Framework::Bind(Cluster& cluster, const Pod& pod, const Candidate& at) {
  if (!bind_) return base::OkStatus();
  base::Status s = bind_->Bind(pod, at);
  if (!s.ok()) Unschedule(cluster, pod, at);
  return s;
}

base::Status Framework::CheckScores(const Cluster& cluster) const {
  const int64_t hi = policy_->max_score();
  for (const Candidate& c : feasible_) {
    if (c.score < 0 || c.score > hi) {
      return base::InternalError("policy " + std::string(policy_->name()) + " scored node " +
                                 cluster.nodes()[static_cast<size_t>(c.node)].name + " " +
                                 std::to_string(c.score) + ", outside 0.." + std::to_string(hi));
    }
  }
  return base::OkStatus();
}

base::StatusOr<std::optional<Candidate>> Framework::Schedule(Cluster& cluster, const Pod& pod,
                                                             std::mt19937_64& rng) {
  if (score_cache_ && filters_.empty() && !post_filter_ && policy_->scores_each_node_alone()) {
    // Cached scores are the policy's before normalisation (score_cache.h): not range-checked.
    std::optional<Candidate> chosen = score_cache_->Best(cluster, *policy_, ties_, pod, rng);
    if (!chosen || !Reserve(cluster, pod, *chosen)) return std::optional<Candidate>();
    return chosen;
  }
  for (const auto& f : filters_) f->PreFilter(cluster, pod);
  for (int attempt = 0; attempt < 2; ++attempt) {
    feasible_.clear();
    scanned_ += static_cast<int64_t>(cluster.nodes().size());
    for (int n = 0; n < static_cast<int>(cluster.nodes().size()); ++n) {
      auto gpus = cluster.Place(pod, n);
      if (!gpus) continue;
      bool pass = true;
      for (const auto& f : filters_) {
        if (!f->Filter(cluster, pod, n)) {
          pass = false;
          break;
        }
      }
      if (pass) feasible_.push_back({n, 0, std::move(*gpus)});
    }
    if (feasible_.empty()) {
      if (attempt == 0 && post_filter_ && post_filter_->PostFilter(cluster, pod)) continue;
      return std::optional<Candidate>();
    }
    policy_->Score(cluster, pod, feasible_, rng);
    SEEDANCE_RETURN_IF_ERROR(CheckScores(cluster));
    Candidate chosen = feasible_[SelectHost(feasible_, cluster, ties_, rng)];
    if (!Reserve(cluster, pod, chosen)) return std::optional<Candidate>();
    return std::optional<Candidate>(std::move(chosen));
  }
  return std::optional<Candidate>();
}

}  // namespace seedance::sched
