// The recomputation planner (feature MEM-5): given what each layer of a chain keeps for its
// backward pass, which parts it may drop and recompute and at what cost, choose the parts to
// drop so that the chain fits a memory budget at the least recompute time.
//
// Each layer keeps `kept_bytes` whatever is chosen (its input), and has droppable parts (for a
// transformer layer: the attention block's tensors, the MLP's intermediates, the norms' outputs),
// each with the bytes it frees and the seconds its recomputation costs. A plan drops a subset of
// each layer's parts; its memory is the sum over layers of what is kept, plus the largest
// layer's dropped bytes (while one layer is recomputed in the backward pass its dropped parts
// live again); its cost is the sum of the dropped parts' recompute times.
//
// The search is exact: a dynamic program over the layers that keeps, for the layers so far, every
// (kept bytes, largest dropped bytes, seconds) state not dominated by another — a state is
// dominated when another has no more of each — so the best plan under any budget is among the
// final states. Identical layers collapse to few states; the test checks the result against
// brute force on small chains.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::plan {

struct DroppablePart {
  std::string name;  // "attention", "mlp", "norms"
  int64_t bytes = 0;
  double recompute_s = 0;
};

struct LayerActivations {
  int64_t kept_bytes = 0;  // always kept (the layer's input)
  std::vector<DroppablePart> parts;
};

struct RecomputePlan {
  bool fits = false;
  std::vector<std::vector<std::string>> dropped;  // per layer, the names of the dropped parts
  int64_t bytes = 0;                              // kept + the largest layer's dropped bytes
  double recompute_s = 0;
};

// The least-time plan within `budget_bytes`; fits = false (and the plan that needs the least
// memory) when none does. At most 16 parts per layer.
base::StatusOr<RecomputePlan> PlanRecompute(const std::vector<LayerActivations>& layers,
                                            int64_t budget_bytes);

// Bytes and seconds of a given choice (`dropped` as in RecomputePlan), for checking plans.
RecomputePlan CostOfChoice(const std::vector<LayerActivations>& layers,
                           const std::vector<std::vector<std::string>>& dropped);

base::Report RecomputePlanToReport(const RecomputePlan& plan);

}  // namespace seedance::plan
