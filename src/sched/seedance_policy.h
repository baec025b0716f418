// Seedance's own scoring policy (feature SCHED-2): FGD's fragmentation descent
// with reserves for GPU types that some pods cannot do without, GPU best fit
// for shares among the nodes FGD scores equally, and GPU best fit alone for
// CPU-only pods.
// Private to seedance::sched;
// built through MakePolicy("seedance", workload). docs/design/sched.md has
// the formula and the measurements.
#pragma once

#include <memory>
#include <vector>

#include "seedance/sched/policy.h"

namespace seedance::sched {

struct SeedancePolicyOptions {
  // A pod that could run on any type and would dig into a scarce type's
  // reserve pays scarcity_weight x its milli-GPU, added to the fragmentation
  // increase (same unit).
  double scarcity_weight = 1.0;
};

std::unique_ptr<Policy> NewSeedancePolicy(const std::vector<Pod>& workload,
                                          SeedancePolicyOptions options = {});

}  // namespace seedance::sched
