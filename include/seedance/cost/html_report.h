// `seedancectl cost report --out PAGE.html` (features COST-2 to COST-7): one self-contained HTML
// page (inline SVG and CSS, no scripts, no external resources) built from the same reports the
// verbs print, so the page and `-o json` never disagree.
//
// Sections, each present when its report is given: the cost per GPU-hour as a stacked bar with
// its terms (TCO), a run's cost breakdown as bars with shares, the ROI sensitivity matrix as a
// heat map (rows: scale-out, columns: utilization; green for ROI above the threshold, red below
// zero, grey where utilization repair cannot reach, each cell labelled with its ROI and
// decision; the no-change row pale), and the Pareto front as a scatter of the first two
// objectives (front points filled, the others hollow; with two objectives the front is joined
// as its staircase; with three it is a projection, each front point's row in its tooltip).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "seedance/base/report.h"

namespace seedance::cost {

struct CostPageInput {
  std::string title = "Seedance cost report";
  std::optional<base::Report> tco;        // cost tco's report
  std::optional<base::Report> breakdown;  // cost breakdown's report
  std::optional<base::Report> roi;        // cost roi's report
  std::optional<base::Report> pareto;     // cost pareto's report
  // Every point of the Pareto input (its objective values, as ParetoCsvValues reads them), for
  // the hollow markers; empty draws the front alone.
  std::vector<std::vector<double>> pareto_points;
};

std::string RenderCostHtml(const CostPageInput& input);

}  // namespace seedance::cost
