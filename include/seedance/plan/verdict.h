// The answer of an `optimize` report in words: at most ten lines that open the report (its
// `verdict` key, first in JSON as in the table), built from the report's own figures so that
// every number in it is one the report also carries.
//
// Training: whether the job fits (and in how much of the GPU's memory), the step time before and
// after with the saving's 90% interval and the cost saved per step, what to do with the layout
// to use, and the three reasons the planner names first. Serving: whether it fits, the chosen
// TP degree and KV-cache width with its throughput and cost per million tokens. A job that does
// not fit says so and names the smallest change that would make it fit.
#pragma once

#include <string>
#include <vector>

#include "seedance/base/report.h"

namespace seedance::plan {

// The verdict sentences of a finished optimize report (a list of strings).
base::Report OptimizeVerdict(const base::Report& report);

// The sections of an optimize report that its table shows only with --verbose: the spec as read
// and the figures derived from it, the model's provenance and the search's bookkeeping.
inline const std::vector<std::string> kVerboseSections = {
    "job",      "model",   "training",   "parallelism", "framework",        "planning",
    "hardware", "derived", "time_model", "links",       "gpu_memory_bytes", "fragmentation",
    "search"};

// The table form of an optimize report: `alternatives` and `pareto_front.layouts` as one short
// layout cell ("tp1 pp1 dp16 Z3 mb2 rc-none") and their figures with intervals, so that the
// figures, not the layout's twelve columns, fit the default table; the rest as it is.
base::Report OptimizeTableView(const base::Report& report);

// `report` with `verdict` as its first key.
base::Report WithVerdictFirst(const base::Report& report);

// "tp 2 · pp 1 · dp 8 · ZeRO-1 · micro-batch 2 · recompute full": a layout (the `parallelism`
// object of a report) on one line, its non-default options appended.
std::string LayoutLine(const base::Report& parallelism);

}  // namespace seedance::plan
