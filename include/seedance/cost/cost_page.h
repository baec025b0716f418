// `seedancectl cost report`: reads each section's input through `env`, builds the verbs' reports
// (model_reports.h, reports.h) and renders them as one page (html_report.h). Built here so the
// CLI only parses flags and prints, as sched::RunExperiment is for `simulate`.
#pragma once

#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/cost/pareto.h"

namespace seedance::cost {

// Paths of the inputs; "" leaves a section out. At least one is needed.
struct CostPageRequest {
  std::string tco;         // TCO spec (YAML), as for `cost tco`
  std::string breakdown;   // run spec (YAML), as for `cost breakdown`
  std::string roi;         // ROI spec (YAML), as for `cost roi`
  std::string pareto;      // points (CSV), as for `cost pareto`; needs objectives
  std::string objectives;  // with pareto only: "throughput:max,memory:min"
  Dominance dominance = Dominance::kPareto;
};

struct CostPage {
  std::string html;
  std::vector<std::string> sections;  // "tco", "breakdown", "roi", "pareto": those on the page
};

// Errors name the request's field (tco, breakdown, roi, pareto, objectives, or "request" for a
// combination) or the input's file and line.
base::StatusOr<CostPage> BuildCostPage(base::Env& env, const CostPageRequest& request,
                                       const GpuCatalog& catalog);

}  // namespace seedance::cost
