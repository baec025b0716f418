#include "seedance/sched/qos_tiers.h"

#include <algorithm>

#include "seedance/base/enum_names.h"

namespace seedance::sched {

namespace {

constexpr base::EnumTable<Tier, 3> kTierNames = {
    {{Tier::kGold, "gold"}, {Tier::kSilver, "silver"}, {Tier::kBronze, "bronze"}}};

}  // namespace

std::string_view TierName(Tier t) { return base::EnumName(kTierNames, t); }

base::StatusOr<Tier> ParseTier(std::string_view name, std::string_view where) {
  return base::ParseEnum(kTierNames, name, where);
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
