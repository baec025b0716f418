#include "seedance/sched/model.h"

namespace seedance::sched {

std::string_view QosName(Qos q) {
  switch (q) {
    case Qos::kLatencySensitive:
      return "LS";
    case Qos::kBestEffort:
      return "BE";
    case Qos::kBurstable:
      return "Burstable";
    case Qos::kGuaranteed:
      return "Guaranteed";
  }
  return "LS";
}

std::optional<Qos> ParseQos(std::string_view name) {
  for (Qos q : {Qos::kLatencySensitive, Qos::kBestEffort, Qos::kBurstable, Qos::kGuaranteed}) {
    if (QosName(q) == name) return q;
  }
  return std::nullopt;
}

}  // namespace seedance::sched
