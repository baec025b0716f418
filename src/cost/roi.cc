#include "seedance/cost/roi.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "seedance/base/enum_names.h"
#include "seedance/base/yaml_map.h"

namespace seedance::cost {
namespace {

using base::Report;
using base::YamlMap;

constexpr double kMaxRoiUsd = 1e12;

constexpr base::EnumTable<RoiDecision, 4> kRoiDecisionNames = {
    {{RoiDecision::kRepair, "repair"},
     {RoiDecision::kRepairFirst, "repair-first"},
     {RoiDecision::kScaleOut, "scale-out"},
     {RoiDecision::kNoChange, "no-change"}}};

base::StatusOr<Grid> ReadGrid(const YamlMap& parent, std::string_view key, Grid fallback, double lo,
                              double hi) {
  SEEDANCE_ASSIGN_OR_RETURN(auto m, parent.GetOptionalMap(key));
  if (!m) return fallback;
  SEEDANCE_RETURN_IF_ERROR(m->CheckKeys({"from", "to", "steps"}));
  Grid g;
  SEEDANCE_ASSIGN_OR_RETURN(g.from, m->GetNumber("from", fallback.from, lo, hi));
  SEEDANCE_ASSIGN_OR_RETURN(g.to, m->GetNumber("to", fallback.to, lo, hi));
  SEEDANCE_ASSIGN_OR_RETURN(const int64_t steps, m->GetInt("steps", fallback.steps, 1, 100));
  g.steps = static_cast<int>(steps);
  if (g.to < g.from) {
    return base::InvalidArgumentError("'" + m->KeyPath("to") + "' must not be below 'from'",
                                      m->Where("to"));
  }
  return g;
}

}  // namespace

std::vector<double> Grid::Values() const {
  std::vector<double> v;
  v.reserve(static_cast<size_t>(std::max(steps, 0)));
  for (int i = 0; i < steps; ++i) {
    v.push_back(steps == 1 ? from : from + (to - from) * i / (steps - 1));
  }
  return v;
}

base::StatusOr<RoiSpec> ParseRoiSpec(std::string_view yaml, const std::string& file,
                                     const GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(YAML::Node root, base::ParseYaml(yaml, file));
  SEEDANCE_ASSIGN_OR_RETURN(YamlMap doc, YamlMap::FromNode(root, file, ""));
  SEEDANCE_RETURN_IF_ERROR(
      doc.CheckKeys({"optimization", "baseline", "horizon_months", "sensitivity", "rules"}));
  RoiSpec s;
  SEEDANCE_ASSIGN_OR_RETURN(auto opt, doc.GetOptionalMap("optimization"));
  if (opt) {
    SEEDANCE_RETURN_IF_ERROR(
        opt->CheckKeys({"one_off_cost_usd", "running_cost_per_month_usd", "saving_fraction"}));
    SEEDANCE_ASSIGN_OR_RETURN(s.one_off_cost_usd,
                              opt->GetNumber("one_off_cost_usd", 0.0, 0, kMaxRoiUsd));
    SEEDANCE_ASSIGN_OR_RETURN(s.running_cost_per_month_usd,
                              opt->GetNumber("running_cost_per_month_usd", 0.0, 0, kMaxRoiUsd));
    SEEDANCE_ASSIGN_OR_RETURN(s.saving_fraction, opt->GetNumber("saving_fraction", 0.0, 0, 1));
  }
  SEEDANCE_ASSIGN_OR_RETURN(s.horizon_months,
                            doc.GetNumber("horizon_months", s.horizon_months, 1e-3, 1200));
  if (s.one_off_cost_usd + s.running_cost_per_month_usd * s.horizon_months <= 0) {
    return base::InvalidArgumentError(
        "the optimization costs nothing (one_off_cost_usd and running_cost_per_month_usd are 0): "
        "its ROI is unbounded; state what it costs",
        opt ? opt->WhereSelf() : file);
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto base_map, doc.GetOptionalMap("baseline"));
  if (base_map) {
    SEEDANCE_RETURN_IF_ERROR(base_map->CheckKeys({"gpu", "gpus", "usd_per_gpu_hour"}));
    SEEDANCE_ASSIGN_OR_RETURN(s.gpu, base_map->GetString("gpu", s.gpu));
    SEEDANCE_ASSIGN_OR_RETURN(s.gpus, base_map->GetInt("gpus", s.gpus, 1, 10'000'000));
    SEEDANCE_ASSIGN_OR_RETURN(s.usd_per_gpu_hour,
                              base_map->GetNumber("usd_per_gpu_hour", 0.0, 0, 1e6));
  }
  if (s.usd_per_gpu_hour == 0) {
    auto gpu = catalog.Get(s.gpu);
    if (!gpu.ok()) {
      return gpu.status().WithWhere(base_map ? base_map->Where("gpu") : file);
    }
    s.gpu = (*gpu)->id;
    s.usd_per_gpu_hour = (*gpu)->price_per_hour_usd;
    s.price_from_catalog = true;
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto sens, doc.GetOptionalMap("sensitivity"));
  if (sens) {
    SEEDANCE_RETURN_IF_ERROR(
        sens->CheckKeys({"utilization", "scale_out", "scale_out_efficiency", "max_utilization"}));
    SEEDANCE_ASSIGN_OR_RETURN(s.utilization, ReadGrid(*sens, "utilization", s.utilization, 0, 1));
    SEEDANCE_ASSIGN_OR_RETURN(s.scale_out, ReadGrid(*sens, "scale_out", s.scale_out, 1, 1000));
    SEEDANCE_ASSIGN_OR_RETURN(
        s.scale_out_efficiency,
        sens->GetNumber("scale_out_efficiency", s.scale_out_efficiency, 0, 1));
    SEEDANCE_ASSIGN_OR_RETURN(s.max_utilization,
                              sens->GetNumber("max_utilization", s.max_utilization, 0, 1));
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto rules, doc.GetOptionalMap("rules"));
  if (rules) {
    SEEDANCE_RETURN_IF_ERROR(rules->CheckKeys({"roi_threshold", "min_utilization_for_scale_out"}));
    SEEDANCE_ASSIGN_OR_RETURN(s.roi_threshold,
                              rules->GetNumber("roi_threshold", s.roi_threshold, -1, 1e6));
    SEEDANCE_ASSIGN_OR_RETURN(
        s.min_utilization_for_scale_out,
        rules->GetNumber("min_utilization_for_scale_out", s.min_utilization_for_scale_out, 0, 1));
  }
  return s;
}

std::string_view RoiDecisionName(RoiDecision d) { return base::EnumName(kRoiDecisionNames, d); }

RoiResult ComputeRoi(const RoiSpec& s) {
  RoiResult r;
  r.cost_usd = s.one_off_cost_usd + s.running_cost_per_month_usd * s.horizon_months;
  r.baseline_usd_per_month = static_cast<double>(s.gpus) * s.usd_per_gpu_hour * kHoursPerMonth;
  r.saving_usd_per_month = r.baseline_usd_per_month * s.saving_fraction;
  r.roi = (r.saving_usd_per_month * s.horizon_months - r.cost_usd) / r.cost_usd;
  const double net = r.saving_usd_per_month - s.running_cost_per_month_usd;
  if (net > 0) r.payback_months = s.one_off_cost_usd / net;
  for (double scale : s.scale_out.Values()) {
    for (double u : s.utilization.Values()) {
      RoiCell cell;
      cell.scale_out = scale;
      cell.utilization = u;
      cell.utilization_needed = u * std::pow(scale, s.scale_out_efficiency);
      const bool reachable = cell.utilization_needed <= s.max_utilization + 1e-12;
      if (reachable) {
        const double avoided = (scale - 1.0) * static_cast<double>(s.gpus) * s.usd_per_gpu_hour *
                               kHoursPerMonth * s.horizon_months;
        cell.roi = (avoided - r.cost_usd) / r.cost_usd;
      }
      cell.decision = scale <= 1.0                                ? RoiDecision::kNoChange
                      : reachable && *cell.roi >= s.roi_threshold ? RoiDecision::kRepair
                      : u < s.min_utilization_for_scale_out       ? RoiDecision::kRepairFirst
                                                                  : RoiDecision::kScaleOut;
      r.cells.push_back(cell);
    }
  }
  return r;
}

base::Report RoiReport(const RoiSpec& s) {
  const RoiResult result = ComputeRoi(s);
  Report r = Report::object();
  Report in = Report::object();
  in["gpu"] = s.gpu;
  in["gpus"] = s.gpus;
  in["usd_per_gpu_hour"] = s.usd_per_gpu_hour;
  in["baseline_usd_per_month"] = result.baseline_usd_per_month;
  in["one_off_cost_usd"] = s.one_off_cost_usd;
  in["running_cost_per_month_usd"] = s.running_cost_per_month_usd;
  in["saving_fraction"] = s.saving_fraction;
  in["horizon_months"] = s.horizon_months;
  in["scale_out_efficiency"] = s.scale_out_efficiency;
  in["max_utilization"] = s.max_utilization;
  in["roi_threshold"] = s.roi_threshold;
  in["min_utilization_for_scale_out"] = s.min_utilization_for_scale_out;
  r["inputs"] = std::move(in);
  Report opt = Report::object();
  opt["saving_usd_per_month"] = result.saving_usd_per_month;
  opt["cost_usd"] = result.cost_usd;
  opt["roi"] = result.roi;
  opt["payback_months"] = result.payback_months ? Report(*result.payback_months) : Report(nullptr);
  r["optimization"] = std::move(opt);
  Report cells = Report::array();
  for (const RoiCell& c : result.cells) {
    cells.push_back({{"scale_out", c.scale_out},
                     {"utilization", c.utilization},
                     {"utilization_needed", c.utilization_needed},
                     {"roi", c.roi ? Report(*c.roi) : Report(nullptr)},
                     {"decision", RoiDecisionName(c.decision)}});
  }
  r["sensitivity"] = std::move(cells);
  return r;
}

}  // namespace seedance::cost
