// Elastic quotas and QoS tiers with preemption (feature SCHED-3; event_sim.h gives the model): the
// guarantee rule and the PostFilter of a job that fits nowhere (private to seedance::sched).
//
//   Guaranteed     with quotas alone: the job keeps its group within its quota (the GPU of the
//                  pool of the group's name). With tiers: Gold always, Bronze never, Silver
//                  while its group stays within SilverQuotaScale(load) x its quota (its pool's
//                  GPU with quotas, else the whole cluster's).
//   SelectVictims  for a guaranteed job: the running borrowers (not guaranteed when they
//                  started) of a lower tier or of another group, lowest tier first, then the
//                  most recently started, skipping jobs preempted max_retries times; the
//                  shortest prefix of that order after which `fits` says the job fits. None
//                  when no prefix does (nothing is preempted in vain).
//
// Thread safety: one scheduling loop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "seedance/sched/cluster.h"
#include "seedance/sched/model.h"
#include "seedance/sched/qos_tiers.h"

namespace seedance::sched {

struct QuotaOptions {
  bool quotas = false;
  bool tiers = false;
  int max_retries = -1;  // < 0: no limit
};

// A running job as preemption sees it.
struct RunningJob {
  size_t id = 0;
  const std::string* group = nullptr;
  Tier tier = Tier::kSilver;
  bool borrowing = false;
  int preempted = 0;  // times so far
};

class QuotaPreemption {
 public:
  QuotaPreemption(const std::vector<Node>& nodes, const QuotaOptions& options);

  // Whether preemption is on at all (quotas or tiers).
  bool enabled() const { return options_.quotas || options_.tiers; }
  // The queue rank of a tier: with tiers, Gold first; else every job alike.
  int Rank(Tier t) const { return options_.tiers ? static_cast<int>(t) : 0; }

  bool Guaranteed(const std::string& group, Tier tier, int64_t demand,
                  const Cluster& cluster) const;
  // A job of the group starts or stops holding `demand` milli-GPU.
  void Start(const std::string& group, int64_t demand) { used_[group] += demand; }
  void Stop(const std::string& group, int64_t demand) { used_[group] -= demand; }

  using FitsFn = std::function<bool(const std::vector<size_t>& victims)>;
  // `newest_first`: the running jobs, the most recently started first.
  std::vector<size_t> SelectVictims(const std::string& group, Tier tier,
                                    std::span<const RunningJob> newest_first,
                                    const FitsFn& fits) const;

 private:
  QuotaOptions options_;
  std::map<std::string, int64_t> quota_;  // milli-GPU per pool, with quotas
  std::map<std::string, int64_t> used_;   // milli-GPU held per group
};

}  // namespace seedance::sched
