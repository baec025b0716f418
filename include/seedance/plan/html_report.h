// `seedancectl optimize --report PAGE.html` (feature CLI-4 for the planner): one self-contained
// page (inline SVG and CSS, no scripts, no external resources) drawn from optimize's own report,
// so the page and `-o json` never disagree.
//
// Sections: the verdict and before/after side by side (memory, step time, tokens/s, MFU, cost
// and energy per step, the saving); the memory per GPU of before and after as stacked bars by
// term against the GPU's capacity; the step time as stacked bars by term; the Pareto front of the
// fitting layouts (memory per GPU against tokens/s per GPU; front points filled, with before
// and after marked); the reasons.
#pragma once

#include <string>

#include "seedance/base/report.h"

namespace seedance::plan {

// `report`: Optimize's report of a training job (not --dry-run).
std::string RenderPlanHtml(const base::Report& report);

}  // namespace seedance::plan
