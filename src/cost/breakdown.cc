#include "seedance/cost/breakdown.h"

#include <optional>

#include "seedance/base/yaml_map.h"
#include "seedance/cost/roi.h"

namespace seedance::cost {
namespace {

using base::Report;
using base::YamlMap;

constexpr double kBig = 1e15;

// Reads the keys `names` (numbers >= 0, into `fields` in the same order) of the mapping `key`;
// with `required` the mapping and every key must be there.
base::Status ReadSection(const YamlMap& doc, std::string_view key,
                         std::initializer_list<std::string_view> names,
                         std::initializer_list<double*> fields, bool required) {
  SEEDANCE_ASSIGN_OR_RETURN(auto m, doc.GetOptionalMap(key));
  if (!m) {
    if (required) {
      return base::InvalidArgumentError("missing required key '" + doc.KeyPath(key) + "'",
                                        doc.WhereSelf());
    }
    return base::OkStatus();
  }
  SEEDANCE_RETURN_IF_ERROR(m->CheckKeys(names));
  auto field = fields.begin();
  for (std::string_view name : names) {
    const std::optional<double> fallback = required ? std::nullopt : std::optional<double>(**field);
    SEEDANCE_ASSIGN_OR_RETURN(**field, m->GetNumber(name, fallback, 0, kBig));
    ++field;
  }
  return base::OkStatus();
}

}  // namespace

base::StatusOr<BreakdownSpec> ParseBreakdownSpec(std::string_view yaml, const std::string& file,
                                                 const GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(YAML::Node root, base::ParseYaml(yaml, file));
  SEEDANCE_ASSIGN_OR_RETURN(YamlMap doc, YamlMap::FromNode(root, file, ""));
  SEEDANCE_RETURN_IF_ERROR(doc.CheckKeys(
      {"gpu", "gpus", "usd_per_gpu_hour", "run", "storage", "network", "scheduling"}));
  BreakdownSpec s;
  SEEDANCE_ASSIGN_OR_RETURN(s.gpu, doc.GetString("gpu", s.gpu));
  auto gpu = catalog.Get(s.gpu);
  if (!gpu.ok()) return gpu.status().WithWhere(doc.Where("gpu"));
  s.gpu = (*gpu)->id;
  SEEDANCE_ASSIGN_OR_RETURN(s.gpus, doc.GetInt("gpus", s.gpus, 1, 10'000'000));
  SEEDANCE_ASSIGN_OR_RETURN(s.usd_per_gpu_hour, doc.GetNumber("usd_per_gpu_hour", 0.0, 0, 1e6));
  SEEDANCE_RETURN_IF_ERROR(ReadSection(doc, "run", {"steps", "step_time_s"},
                                       {&s.steps, &s.step_time_s}, /*required=*/true));
  SEEDANCE_RETURN_IF_ERROR(ReadSection(
      doc, "storage",
      {"checkpoints", "checkpoint_gb", "usd_per_gb_written", "stored_gb", "usd_per_gb_month"},
      {&s.checkpoints, &s.checkpoint_gb, &s.usd_per_gb_written, &s.stored_gb, &s.usd_per_gb_month},
      false));
  SEEDANCE_RETURN_IF_ERROR(ReadSection(doc, "network", {"egress_gb", "usd_per_gb_egress"},
                                       {&s.egress_gb, &s.usd_per_gb_egress}, false));
  SEEDANCE_RETURN_IF_ERROR(ReadSection(
      doc, "scheduling", {"restarts", "lost_s_per_restart", "startup_s", "queue_gpu_hours"},
      {&s.restarts, &s.lost_s_per_restart, &s.startup_s, &s.queue_gpu_hours}, false));
  return s;
}

RunCost ComputeBreakdown(const BreakdownSpec& s, const GpuCatalog& catalog) {
  const GpuSpec* gpu = catalog.Find(s.gpu);
  RunCost c;
  c.catalog_price = s.usd_per_gpu_hour == 0 && gpu != nullptr;
  const double price = c.catalog_price ? gpu->price_per_hour_usd : s.usd_per_gpu_hour;
  c.usd_per_gpu_hour = price;
  const double gpus = static_cast<double>(s.gpus);
  const double compute_hours = s.steps * s.step_time_s / 3600.0;
  const double overhead_hours = (s.restarts * s.lost_s_per_restart + s.startup_s) / 3600.0;
  c.wall_hours = compute_hours + overhead_hours;
  const double months = c.wall_hours / kHoursPerMonth;
  c.items = {{"compute", gpus * compute_hours * price},
             {"storage_io", s.checkpoints * s.checkpoint_gb * s.usd_per_gb_written +
                                s.stored_gb * months * s.usd_per_gb_month},
             {"network", s.egress_gb * s.usd_per_gb_egress},
             {"scheduling_overhead", gpus * overhead_hours * price + s.queue_gpu_hours * price}};
  for (const CostItem& item : c.items) c.total_usd += item.usd;
  c.gpu_hours = gpus * c.wall_hours + s.queue_gpu_hours;
  return c;
}

base::Report BreakdownReport(const BreakdownSpec& s, const GpuCatalog& catalog) {
  const RunCost c = ComputeBreakdown(s, catalog);
  Report r = Report::object();
  Report in = Report::object();
  in["gpu"] = s.gpu;
  in["gpus"] = s.gpus;
  in["usd_per_gpu_hour"] = c.usd_per_gpu_hour;
  if (c.catalog_price) {
    const GpuSpec* gpu = catalog.Find(s.gpu);
    in["price_kind"] = PriceKindName(gpu->price_kind);
    in["price_date"] = gpu->price_date;
    in["price_source"] = gpu->price_source;
  } else {
    in["price_kind"] = "own";
  }
  in["steps"] = s.steps;
  in["step_time_s"] = s.step_time_s;
  r["inputs"] = std::move(in);
  Report items = Report::array();
  for (const CostItem& item : c.items) {
    items.push_back(
        {{"item", item.item},
         {"usd", item.usd},
         {"share", c.total_usd > 0 ? Report(item.usd / c.total_usd) : Report(nullptr)}});
  }
  r["items"] = std::move(items);
  r["total_usd"] = c.total_usd;
  r["gpu_hours"] = c.gpu_hours;
  r["wall_hours"] = c.wall_hours;
  return r;
}

}  // namespace seedance::cost
