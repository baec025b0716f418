#include "seedance/mem/reports.h"

#include <string>

namespace seedance::mem {
namespace {

double Ratio(int64_t value, int64_t bound) {
  return bound ? static_cast<double>(value) / static_cast<double>(bound) : 1.0;
}

}  // namespace

base::Report CheckReport(std::span<const Buffer> buffers, const PlanCheck& check) {
  base::Report r;
  r["buffers"] = buffers.size();
  r["peak_bytes"] = check.peak_bytes;
  r["lower_bound_bytes"] = MaxLiveBytes(buffers);
  r["valid"] = check.ok();
  r["violation_count"] = check.violation_count;
  r["violations"] = check.violations;
  return r;
}

base::Report PlanReport(const Plan& plan, size_t buffers, int64_t alignment) {
  base::Report r;
  r["buffers"] = buffers;
  r["peak_bytes"] = plan.peak_bytes;
  r["lower_bound_bytes"] = plan.lower_bound_bytes;
  r["ratio"] = Ratio(plan.peak_bytes, plan.lower_bound_bytes);
  r["optimal"] = plan.optimal;
  r["solve_ms"] = plan.solve_ms;
  r["algo"] = plan.algo;
  r["greedy_peak_bytes"] = plan.greedy_peak_bytes;
  r["time_to_best_ms"] = plan.time_to_best_ms;
  r["search_nodes"] = plan.search_nodes;
  r["alignment_bytes"] = alignment;
  if (plan.capacity_bytes > 0) r["capacity_bytes"] = plan.capacity_bytes;
  return r;
}

base::Status PlanFitStatus(const Plan& plan, std::string_view where) {
  if (plan.fits) return base::OkStatus();
  return base::FailedPreconditionError(
      "no plan fits in " + std::to_string(plan.capacity_bytes) + " bytes: " +
          (plan.proven_impossible ? "proven impossible" : "none found within the time limit") +
          " (best peak " + std::to_string(plan.peak_bytes) + ", lower bound " +
          std::to_string(plan.lower_bound_bytes) + ")",
      std::string(where));
}

base::Report ReplayReport(const ReplayResult& result, std::string_view policy) {
  base::Report r;
  r["policy"] = std::string(policy);
  r["reserved_peak_bytes"] = result.reserved_peak_bytes;
  r["allocated_peak_bytes"] = result.allocated_peak_bytes;
  r["lower_bound_bytes"] = result.lower_bound_bytes;
  r["reserved_over_bound"] = Ratio(result.reserved_peak_bytes, result.lower_bound_bytes);
  r["fragmentation"] = result.fragmentation;
  r["ops"] = result.ops;
  r["ns_per_op"] = result.ns_per_op;
  r["segments"] = result.segments;
  r["stitches"] = result.stitches;
  return r;
}

}  // namespace seedance::mem
