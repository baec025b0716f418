// The return on an optimization (feature COST-3): its ROI over a horizon against its one-off and
// running costs, and the sensitivity matrix that decides between repairing utilization and
// scaling out.
//
// ROI of the optimization:
//   saving/month  = baseline_usd_per_month * saving_fraction
//   cost          = one_off_cost_usd + running_cost_per_month_usd * horizon_months
//   ROI           = (saving/month * horizon_months - cost) / cost
//   payback       = one_off_cost_usd / (saving/month - running/month)   (none when <= 0)
//
// Sensitivity (utilization u x scale-out s): a cluster of N GPUs at utilization u that would
// otherwise grow s-fold. Scaling out does not scale useful work linearly: a cluster s times
// larger delivers s^gamma times the work (gamma = scale_out_efficiency, the design notes' 0.78).
// Repairing utilization instead must reach u * s^gamma on the N GPUs it has; where that is at most
// max_utilization, the repair avoids (s - 1) * N GPU-hours of spend, and the cell's ROI is
//   ((s - 1) * N * usd_per_gpu_hour * 730 * horizon_months - cost) / cost.
// Cells the repair cannot reach have no ROI. Decision rules (named settings, the notes' values):
//   repair        reachable and ROI >= roi_threshold (1.8)
//   repair-first  utilization below min_utilization_for_scale_out (0.35): scaling out at low
//                 utilization buys idle GPUs, so raise utilization before buying
//   scale-out     otherwise
//   no-change     the row s = 1 (nothing to avoid: ROI -1)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"

namespace seedance::cost {

inline constexpr double kHoursPerMonth = 8760.0 / 12.0;

struct Grid {
  double from = 0, to = 0;
  int steps = 1;  // evenly spaced, both ends included
  std::vector<double> Values() const;
};

struct RoiSpec {
  // the optimization
  double one_off_cost_usd = 0;
  double running_cost_per_month_usd = 0;
  double saving_fraction = 0;  // of the baseline spend, in [0, 1]
  double horizon_months = 12;
  // the baseline cluster
  std::string gpu = "H100-SXM";
  int64_t gpus = 64;
  double usd_per_gpu_hour = 0;      // 0 in the file: the catalog's price for `gpu`
  bool price_from_catalog = false;  // set by ParseRoiSpec when the file gave no price
  // sensitivity
  Grid utilization{0.4, 0.9, 6};
  Grid scale_out{1.0, 2.5, 5};
  double scale_out_efficiency = 0.78;
  double max_utilization = 0.9;
  // rules
  double roi_threshold = 1.8;
  double min_utilization_for_scale_out = 0.35;
};

// The YAML (every key optional; the optimization's cost must be above 0 in all):
//   optimization: {one_off_cost_usd: 20000, running_cost_per_month_usd: 500,
//                  saving_fraction: 0.15}
//   baseline: {gpu: H100-SXM, gpus: 64, usd_per_gpu_hour: 2.5}
//   horizon_months: 12
//   sensitivity: {utilization: {from: 0.4, to: 0.9, steps: 6},
//                 scale_out: {from: 1.0, to: 2.5, steps: 5},
//                 scale_out_efficiency: 0.78, max_utilization: 0.9}
//   rules: {roi_threshold: 1.8, min_utilization_for_scale_out: 0.35}
base::StatusOr<RoiSpec> ParseRoiSpec(std::string_view yaml, const std::string& file,
                                     const GpuCatalog& catalog);

enum class RoiDecision { kRepair, kRepairFirst, kScaleOut, kNoChange };
std::string_view RoiDecisionName(RoiDecision d);  // "repair", "repair-first", ...

struct RoiCell {
  double scale_out = 1, utilization = 0;
  double utilization_needed = 0;  // to do the scaled-out work on the GPUs there are
  std::optional<double> roi;      // none where the repair cannot reach
  RoiDecision decision = RoiDecision::kNoChange;
};

struct RoiResult {
  double baseline_usd_per_month = 0;
  double saving_usd_per_month = 0;
  double cost_usd = 0;
  double roi = 0;
  std::optional<double> payback_months;  // none when the saving never covers the running cost
  std::vector<RoiCell> cells;            // scale-out major, utilization minor
};

RoiResult ComputeRoi(const RoiSpec& spec);

// The report of `seedancectl cost roi`: the optimization's ROI and payback, and the matrix as a
// list of cells (scale-out major, utilization minor) with each cell's ROI and decision.
base::Report RoiReport(const RoiSpec& spec);

}  // namespace seedance::cost
