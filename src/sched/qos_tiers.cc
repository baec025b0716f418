#include "seedance/sched/qos_tiers.h"

#include <algorithm>

namespace seedance::sched {

std::string_view TierName(Tier t) {
  switch (t) {
    case Tier::kGold:
      return "gold";
    case Tier::kSilver:
      return "silver";
    case Tier::kBronze:
      return "bronze";
  }
  return "silver";
}

std::optional<Tier> ParseTier(std::string_view name) {
  for (Tier t : {Tier::kGold, Tier::kSilver, Tier::kBronze}) {
    if (TierName(t) == name) return t;
  }
  return std::nullopt;
}

Tier TierOfQos(Qos q) {
  switch (q) {
    case Qos::kLatencySensitive:
    case Qos::kGuaranteed:
      return Tier::kGold;
    case Qos::kBurstable:
      return Tier::kSilver;
    case Qos::kBestEffort:
      return Tier::kBronze;
  }
  return Tier::kSilver;
}

double SilverQuotaScale(double load) { return std::max(0.3, 1.2 - 0.5 * std::max(load, 0.0)); }

double OvercommitMargin(Tier t) {
  switch (t) {
    case Tier::kGold:
      return 1.15;
    case Tier::kSilver:
      return 1.35;
    case Tier::kBronze:
      return 2.0;
  }
  return 1.0;
}

}  // namespace seedance::sched
