// The reports of the memory engine's commands, shared by seedancectl
// (`mem plan`, `mem replay`) and the Python package (seedance.mem), so that
// both print the same fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/mem/plan_checker.h"
#include "seedance/mem/planner.h"
#include "seedance/mem/replay.h"

namespace seedance::mem {

// buffers, peak_bytes, lower_bound_bytes, ratio, optimal, solve_ms, algo,
// greedy_peak_bytes, time_to_best_ms, search_nodes, alignment_bytes.
base::Report PlanReport(const Plan& plan, size_t buffers, int64_t alignment);

// With a capacity, a plan that does not fit is no plan: FailedPrecondition saying whether it was
// proven impossible or none was found in the time limit, with the best peak and the lower bound,
// at `where` (the lifetime file). OK when it fits or no capacity was asked for.
base::Status PlanFitStatus(const Plan& plan, std::string_view where);

// `mem check`: buffers, peak_bytes, lower_bound_bytes, valid, violation_count, violations.
base::Report CheckReport(std::span<const Buffer> buffers, const PlanCheck& check);

// policy, reserved/allocated peaks, lower bound, reserved_over_bound,
// fragmentation, ops, ns_per_op, segments, stitches.
base::Report ReplayReport(const ReplayResult& result, std::string_view policy);

}  // namespace seedance::mem
