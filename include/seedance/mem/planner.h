// The offline reuse planner (feature MEM-2): byte offsets in one arena for a
// set of buffers with known lifetimes, so that no two buffers live at the
// same time overlap, with the smallest peak (max offset + size) it can find.
//
//   - greedy: several orders (size, lifetime length, area, start time), each
//     placing every buffer in the best-fitting gap left by the buffers
//     already placed that it conflicts with (as TFLite's and XLA's planners
//     do); the best order wins.
//   - exact: a depth-first search over canonical placements (buffers sit at
//     the lowest "floor" of the time sections they span), pruned by the
//     remaining load of every section, any-time: it starts from the best
//     greedy plan and keeps the best plan found when the time limit expires.
//     Independent groups of buffers (no lifetime overlaps between groups)
//     are searched separately.
//
// `optimal` is true only when proven: the peak equals the max-live lower
// bound, or the exact search exhausted its space. Time is read through Env.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/mem/lifetime.h"

namespace seedance::mem {

enum class PlanAlgo { kAuto, kGreedy, kExact };

std::string_view PlanAlgoName(PlanAlgo algo);
base::StatusOr<PlanAlgo> ParsePlanAlgo(std::string_view name);

// The options' ranges, one table for every caller (the CLI's flags, the Python API): PlanOffsets
// refuses a value outside them, naming the option as the Python API spells it.
inline constexpr double kMaxPlanTimeLimitS = 86400;             // time_limit: 0 to a day
inline constexpr int64_t kMaxPlanAlignment = int64_t{1} << 30;  // alignment: 1 to 1 GiB

struct PlanOptions {
  // auto: greedy, then the exact search on groups of at most
  // `exact_max_buffers` buffers whose peak is above the lower bound.
  PlanAlgo algo = PlanAlgo::kAuto;
  double time_limit_s = 1.0;  // wall clock for the whole exact phase
  int64_t alignment = 1;      // every offset is a multiple of this (sizes padded to it)
  int64_t exact_max_buffers = 4096;
  // When > 0: the arena has this many bytes, and the question becomes "does
  // a plan fit?" (MiniMalloc's --capacity). The planner stops at the first
  // plan whose peak is at most this, gives the whole time limit to that
  // question, and reports whether it fits or was proven not to.
  int64_t capacity_bytes = 0;
  // Threads for the exact search's lanes (one per preorder); <= 0: one per
  // hardware thread. The plan does not depend on it, only the time does.
  int threads = 0;
};

struct Plan {
  std::vector<int64_t> offsets;  // offsets[i] belongs to buffers[i]
  int64_t peak_bytes = 0;
  int64_t lower_bound_bytes = 0;
  int64_t greedy_peak_bytes = 0;  // best greedy order, before the search
  bool optimal = false;
  std::string algo;  // what produced the final plan, e.g. "greedy/size" or "exact"
  double solve_ms = 0;
  double time_to_best_ms = 0;
  int64_t search_nodes = 0;
  // With a capacity: the plan fits (peak <= capacity), or no plan can fit
  // (proven: the bound exceeds it or the search exhausted that question).
  int64_t capacity_bytes = 0;  // the option, echoed
  bool fits = true;
  bool proven_impossible = false;
};

base::StatusOr<Plan> PlanOffsets(std::span<const Buffer> buffers, const PlanOptions& options,
                                 base::Env* env = base::Env::Default());

}  // namespace seedance::mem
