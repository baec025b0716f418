// QoS tiers of the event simulator (feature SCHED-3).
//
//   Gold    guaranteed: never preempted, its quota is never scaled down;
//   Silver  elastic: guaranteed while its group stays within
//           SilverQuotaScale(load) x its quota, preemptible beyond that;
//   Bronze  best effort: runs only on idle capacity, never preempts,
//           always preemptible.
//
// SilverQuotaScale(load) = max(0.3, 1.2 - 0.5 x load), with load the share of
// the cluster's GPU in use (0..1): the busier the cluster, the less of its
// quota a Silver group may count as guaranteed. At load 0.4 the scale is 1.0;
// an idle cluster lets Silver count 20% beyond its quota as guaranteed. The
// 0.3 floor only binds above a load of 1.8 (GPU shared beyond capacity).
//
// OvercommitMargin(tier) is the slowdown a tier tolerates when its GPU is
// shared beyond capacity: Gold 1.15x, Silver 1.35x, Bronze 2x.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "seedance/base/status.h"
#include "seedance/sched/model.h"

namespace seedance::sched {

enum class Tier { kGold = 0, kSilver = 1, kBronze = 2 };  // lower value first in the queue

std::string_view TierName(Tier t);  // "gold", "silver", "bronze"
base::StatusOr<Tier> ParseTier(std::string_view name, std::string_view where = "tier");

// Alibaba 2023 QoS classes: LS and Guaranteed -> Gold, Burstable -> Silver,
// BE -> Bronze.
Tier TierOfQos(Qos q);

double SilverQuotaScale(double load);
double OvercommitMargin(Tier t);

// The event simulator's queue sort: waiting jobs are ordered by (QueueRank, priority descending,
// arrival), with QueueRank the tier (Gold first) when tiers are on, else 0 for every job.
inline int QueueRank(Tier t, bool tiers) { return tiers ? static_cast<int>(t) : 0; }

}  // namespace seedance::sched
