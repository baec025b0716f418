// `seedancectl cost report --out PAGE.html` (features COST-2 to COST-7): one self-contained HTML
// page (the page kit, base/html_page.h) drawn from the same typed results the verbs' reports are
// built from, so the page and `-o json` never disagree.
//
// Sections, each present when its input is given: the cost per GPU-hour as a stacked bar with
// its terms (TCO), a run's cost breakdown as bars with shares, the ROI sensitivity matrix as a
// heat map (rows: scale-out, columns: utilization; green, deeper with the ROI, where the repair
// pays at least the threshold, categories for the rest — red below zero, amber below the
// threshold, grey where utilization repair cannot reach, pale for the no-change row — each cell
// labelled with its ROI and decision), and the Pareto front as a scatter of the first two
// objectives (front points filled, the others hollow; with two objectives the front is joined
// as its staircase; with three it is a projection, each front point's values in its tooltip).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "seedance/cost/breakdown.h"
#include "seedance/cost/reports.h"
#include "seedance/cost/roi.h"
#include "seedance/cost/tco.h"

namespace seedance::cost {

struct TcoView {
  TcoSpec spec;
  TcoBreakdown result;
};
struct BreakdownView {
  BreakdownSpec spec;
  RunCost result;
};
struct RoiView {
  RoiSpec spec;
  RoiResult result;
};
struct ParetoView {
  std::vector<Objective> objectives;
  std::vector<std::vector<double>> points;  // every point's objective values, file order
  std::vector<size_t> front;                // indexes into points
};

struct CostPageInput {
  std::string title = "Seedance cost report";
  std::optional<TcoView> tco;
  std::optional<BreakdownView> breakdown;
  std::optional<RoiView> roi;
  std::optional<ParetoView> pareto;
  // What every cost on the page prices a GPU-hour at (one basis per page), in words.
  std::string price_basis;
};

std::string RenderCostHtml(const CostPageInput& input);

}  // namespace seedance::cost
