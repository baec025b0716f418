#include "seedance/cost/cost_page.h"

#include "seedance/cost/html_report.h"
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
  auto read = [&env](const std::string& file) -> base::StatusOr<std::string> {
    auto text = env.ReadFile(file);
    if (!text.ok()) return text.status().Annotate("cannot read the input");
    return text;
  };
  if (!q.tco.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::string text, read(q.tco));
    TcoView v;
    SEEDANCE_ASSIGN_OR_RETURN(v.spec, ParseTcoSpec(text, q.tco, catalog));
    SEEDANCE_ASSIGN_OR_RETURN(v.result, ComputeTco(v.spec, catalog));
    page.tco = std::move(v);
    out.sections.emplace_back("tco");
  }
  if (!q.breakdown.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::string text, read(q.breakdown));
    BreakdownView v;
    SEEDANCE_ASSIGN_OR_RETURN(v.spec, ParseBreakdownSpec(text, q.breakdown, catalog));
    v.result = ComputeBreakdown(v.spec, catalog);
    page.breakdown = std::move(v);
    out.sections.emplace_back("breakdown");
  }
  if (!q.roi.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::string text, read(q.roi));
    RoiView v;
    SEEDANCE_ASSIGN_OR_RETURN(v.spec, ParseRoiSpec(text, q.roi, catalog));
    v.result = ComputeRoi(v.spec);
    page.roi = std::move(v);
    out.sections.emplace_back("roi");
  }
  if (!q.pareto.empty()) {
    ParetoView v;
    SEEDANCE_ASSIGN_OR_RETURN(v.objectives, ParseObjectives(q.objectives, "objectives"));
    auto text = env.ReadFile(q.pareto);
    if (!text.ok()) return text.status().Annotate("cannot read the points");
    SEEDANCE_ASSIGN_OR_RETURN(v.points, ParetoCsvValues(*text, q.pareto, v.objectives));
    std::vector<Direction> directions;
    for (const Objective& o : v.objectives) directions.push_back(o.direction);
    std::vector<double> flat;
    for (const auto& p : v.points) flat.insert(flat.end(), p.begin(), p.end());
    SEEDANCE_ASSIGN_OR_RETURN(v.front, ParetoFront(flat, directions, q.dominance));
    page.pareto = std::move(v);
    out.sections.emplace_back("pareto");
  }
  out.html = RenderCostHtml(page);
  return out;
}

}  // namespace seedance::cost
