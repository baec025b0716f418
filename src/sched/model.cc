#include "seedance/sched/model.h"

#include "seedance/base/enum_names.h"

namespace seedance::sched {
namespace {

constexpr base::EnumTable<Qos, 4> kQosNames = {{{Qos::kLatencySensitive, "LS"},
                                                {Qos::kBestEffort, "BE"},
                                                {Qos::kBurstable, "Burstable"},
                                                {Qos::kGuaranteed, "Guaranteed"}}};

}  // namespace

std::string_view QosName(Qos q) { return base::EnumName(kQosNames, q); }

base::StatusOr<Qos> ParseQos(std::string_view name, std::string_view where) {
  return base::ParseEnum(kQosNames, name, where);
}

}  // namespace seedance::sched
