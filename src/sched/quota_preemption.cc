#include "src/sched/quota_preemption.h"

#include <algorithm>

namespace seedance::sched {

QuotaPreemption::QuotaPreemption(const std::vector<Node>& nodes, const QuotaOptions& options)
    : options_(options) {
  if (!options.quotas) return;
  for (const Node& n : nodes) {
    if (!n.pool.empty()) quota_[n.pool] += 1000LL * n.gpu_count;
  }
}

bool QuotaPreemption::Guaranteed(const std::string& group, Tier tier, int64_t demand,
                                 const Cluster& cluster) const {
  const auto u = used_.find(group);
  const int64_t used = (u != used_.end() ? u->second : 0) + demand;
  const auto q = quota_.find(group);
  if (!options_.tiers) return options_.quotas && used <= (q != quota_.end() ? q->second : 0);
  switch (tier) {
    case Tier::kGold:
      return true;
    case Tier::kBronze:
      return false;
    case Tier::kSilver:
      break;
  }
  const double base =
      static_cast<double>(q != quota_.end() ? q->second : cluster.total_gpu_milli());
  const double load = static_cast<double>(cluster.used_gpu_milli()) /
                      static_cast<double>(cluster.total_gpu_milli());
  return static_cast<double>(used) <= SilverQuotaScale(load) * base;
}

std::vector<size_t> QuotaPreemption::SelectVictims(const std::string& group, Tier tier,
                                                   std::span<const RunningJob> newest_first,
                                                   const FitsFn& fits) const {
  std::vector<const RunningJob*> order;
  for (const RunningJob& r : newest_first) {
    if (!r.borrowing || (options_.max_retries >= 0 && r.preempted >= options_.max_retries)) {
      continue;
    }
    if (*r.group == group && Rank(r.tier) <= Rank(tier)) continue;
    order.push_back(&r);
  }
  std::stable_sort(order.begin(), order.end(), [this](const RunningJob* a, const RunningJob* b) {
    return Rank(a->tier) > Rank(b->tier);
  });
  std::vector<size_t> victims;
  for (const RunningJob* r : order) {
    victims.push_back(r->id);
    if (fits(victims)) return victims;
  }
  return {};
}

}  // namespace seedance::sched
