#include "seedance/cost/cost_page.h"

#include <optional>
#include <tuple>

#include "seedance/cost/html_report.h"
#include "seedance/cost/model_reports.h"
#include "seedance/cost/reports.h"

namespace seedance::cost {

base::StatusOr<CostPage> BuildCostPage(base::Env& env, const CostPageRequest& q,
                                       const GpuCatalog& catalog) {
  if (q.pareto.empty() != q.objectives.empty()) {  // names the one missing
    return base::InvalidArgumentError("pareto and objectives go together",
                                      q.pareto.empty() ? "pareto" : "objectives");
  }
  if (q.tco.empty() && q.breakdown.empty() && q.roi.empty() && q.pareto.empty()) {
    return base::InvalidArgumentError("give at least one of tco, breakdown, roi, pareto",
                                      "request");
  }
  CostPageInput page;
  CostPage out;
  using Build =
      base::StatusOr<base::Report> (*)(std::string_view, const std::string&, const GpuCatalog&);
  const std::tuple<const std::string*, std::optional<base::Report>*, Build, const char*> models[] =
      {{&q.tco, &page.tco, &TcoYamlReport, "tco"},
       {&q.breakdown, &page.breakdown, &BreakdownYamlReport, "breakdown"},
       {&q.roi, &page.roi, &RoiYamlReport, "roi"}};
  for (const auto& [file, slot, build, name] : models) {
    if (file->empty()) continue;
    auto text = env.ReadFile(*file);
    if (!text.ok()) return text.status().Annotate("cannot read the input");
    SEEDANCE_ASSIGN_OR_RETURN(base::Report report, build(*text, *file, catalog));
    *slot = std::move(report);
    out.sections.emplace_back(name);
  }
  if (!q.pareto.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::vector<Objective> objectives,
                              ParseObjectives(q.objectives, "objectives"));
    auto text = env.ReadFile(q.pareto);
    if (!text.ok()) return text.status().Annotate("cannot read the points");
    SEEDANCE_ASSIGN_OR_RETURN(page.pareto,
                              ParetoCsvReport(*text, q.pareto, objectives, q.dominance, false));
    SEEDANCE_ASSIGN_OR_RETURN(page.pareto_points, ParetoCsvValues(*text, q.pareto, objectives));
    out.sections.emplace_back("pareto");
  }
  out.html = RenderCostHtml(page);
  return out;
}

}  // namespace seedance::cost
