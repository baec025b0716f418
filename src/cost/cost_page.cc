#include "seedance/cost/cost_page.h"

#include <cstdio>
#include <string>

#include "seedance/cost/html_report.h"
#include "seedance/cost/reports.h"

namespace seedance::cost {
namespace {

std::string BasisUsd(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "$%.4g", v);
  return buf;
}

// One page, one price of a GPU-hour. With a TCO, the ROI and the breakdown take its total where
// they state no price of their own (a catalog price beside an owned TCO would compare an owned
// cluster with a rented one); one that states another price, or prices another GPU, is an error.
// Without a TCO, the ROI and the breakdown must agree with each other the same way.
base::Status OnePriceBasis(const CostPageRequest& q, CostPageInput& page,
                           const GpuCatalog& catalog) {
  std::string gpu, origin;
  double price = 0;
  if (page.tco) {
    gpu = page.tco->spec.gpu;
    price = page.tco->result.total_usd_per_gpu_hour;
    origin = "the TCO's " + std::string(OwnershipName(page.tco->spec.ownership)) + " total";
  }
  auto join = [&](const std::string& named, double& their_price, bool stated,
                  const std::string& what, const std::string& where) -> base::Status {
    const GpuSpec* found = catalog.Find(named);
    const std::string their_gpu = found != nullptr ? found->id : named;
    if (gpu.empty()) {
      gpu = their_gpu;
      price = their_price;
      origin = stated ? what + "'s own price" : "the catalog's price";
      return base::OkStatus();
    }
    if (their_gpu != gpu) {
      return base::InvalidArgumentError("one page prices one GPU: the " + what + " is for " +
                                            their_gpu + ", the page's other costs for " + gpu,
                                        where);
    }
    if (!stated || BasisUsd(their_price) == BasisUsd(price)) {
      their_price = price;  // the basis exactly, not a rounded copy of it
      return base::OkStatus();
    }
    if (BasisUsd(their_price) != BasisUsd(price)) {  // equal at the precision the page prints
      return base::InvalidArgumentError("one page uses one price basis: the " + what +
                                            " prices a GPU-hour at " + BasisUsd(their_price) +
                                            ", " + origin + " is " + BasisUsd(price) +
                                            "; give the same price, or none to take " + origin,
                                        where);
    }
    return base::OkStatus();
  };
  // The parts that state a price set the basis before those that take one (so the files' order
  // does not matter).
  const bool breakdown_states = page.breakdown && page.breakdown->spec.usd_per_gpu_hour > 0;
  const bool roi_states = page.roi && !page.roi->spec.price_from_catalog;
  auto join_breakdown = [&]() -> base::Status {
    BreakdownView& b = *page.breakdown;
    double their =
        breakdown_states ? b.spec.usd_per_gpu_hour : catalog.Find(b.spec.gpu)->price_per_hour_usd;
    SEEDANCE_RETURN_IF_ERROR(join(b.spec.gpu, their, breakdown_states, "breakdown", q.breakdown));
    if (b.spec.usd_per_gpu_hour != their) {
      b.spec.usd_per_gpu_hour = their;
      b.result = ComputeBreakdown(b.spec, catalog);
    }
    return base::OkStatus();
  };
  auto join_roi = [&]() -> base::Status {
    RoiView& r = *page.roi;
    double their = r.spec.usd_per_gpu_hour;
    SEEDANCE_RETURN_IF_ERROR(join(r.spec.gpu, their, roi_states, "ROI", q.roi));
    if (their != r.spec.usd_per_gpu_hour) {
      r.spec.usd_per_gpu_hour = their;
      r.result = ComputeRoi(r.spec);
    }
    return base::OkStatus();
  };
  for (const bool stating : {true, false}) {
    if (page.breakdown && breakdown_states == stating) SEEDANCE_RETURN_IF_ERROR(join_breakdown());
    if (page.roi && roi_states == stating) SEEDANCE_RETURN_IF_ERROR(join_roi());
  }
  if (!gpu.empty()) {
    page.price_basis = "Every cost on this page prices a " + gpu + " GPU-hour at " +
                       BasisUsd(price) + " (" + origin + ").";
  }
  return base::OkStatus();
}

}  // namespace

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
  SEEDANCE_RETURN_IF_ERROR(OnePriceBasis(q, page, catalog));
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
