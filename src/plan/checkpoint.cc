#include "seedance/plan/checkpoint.h"

#include <algorithm>
#include <cmath>

#include "seedance/control/checkpoint_interval.h"

namespace seedance::plan {

double DalyInterval(double write_s, double mtbf_s) {
  if (write_s >= 2 * mtbf_s) return mtbf_s;
  const double x = write_s / (2 * mtbf_s);
  return control::YoungOptimumSeconds(write_s, mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - write_s;
}

double DalyWallTimeFactor(double interval_s, double write_s, double restart_s, double mtbf_s) {
  return mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + write_s) / mtbf_s) /
         interval_s;
}

CheckpointPlan PlanCheckpoints(const ReliabilitySpec& spec, int64_t checkpoint_bytes, int64_t gpus,
                               double step_s) {
  CheckpointPlan p;
  p.checkpoint_bytes = checkpoint_bytes;
  p.write_s = static_cast<double>(checkpoint_bytes) / (spec.checkpoint_write_gbytes_per_s * 1e9);
  p.job_mtbf_s = spec.gpu_mtbf_hours * 3600 / static_cast<double>(gpus);
  p.young_interval_s = control::YoungOptimumSeconds(p.write_s, p.job_mtbf_s);
  p.daly_interval_s = DalyInterval(p.write_s, p.job_mtbf_s);
  p.interval_steps = std::max<int64_t>(1, std::llround(p.daly_interval_s / step_s));
  p.interval_s = static_cast<double>(p.interval_steps) * step_s;
  p.expected_overhead_fraction =
      DalyWallTimeFactor(p.interval_s, p.write_s, spec.restart_s, p.job_mtbf_s) - 1;
  return p;
}

base::Report CheckpointPlanToReport(const CheckpointPlan& plan) {
  base::Report r = base::Report::object();
  r["checkpoint_bytes"] = plan.checkpoint_bytes;
  r["write_s"] = plan.write_s;
  r["job_mtbf_s"] = plan.job_mtbf_s;
  r["young_interval_s"] = plan.young_interval_s;
  r["daly_interval_s"] = plan.daly_interval_s;
  r["interval_steps"] = plan.interval_steps;
  r["interval_s"] = plan.interval_s;
  r["expected_overhead_fraction"] = plan.expected_overhead_fraction;
  return r;
}

}  // namespace seedance::plan
