// The first screen of `seedancectl simulate` (feature SCHED-7): the verdict — which policy wins
// on the headline figure, by how much against the baseline, with the interval over seeds and the
// paired test — and a table of the headline figures that fits 100 columns. Built from the report
// RunExperiment returns (experiment.h), so the CLI and Python print the same words; `-o wide` and
// JSON carry the whole report.
#pragma once

#include "seedance/base/report.h"

namespace seedance::sched {

// At most ten sentences: the best policy on the first headline figure with its 95% interval,
// then each other policy against the baseline (difference, interval, p-value, and "better" or
// "worse" only where the interval excludes 0 and p < 0.05, else "no difference beyond seed
// noise").
base::Report ExperimentVerdict(const base::Report& report);

// `report` with the verdict first (what RunExperiment returns).
base::Report WithExperimentVerdict(const base::Report& report);

// The default table: the verdict, the inputs by file name, one row per policy with its headline
// figures (intervals beside them), and the comparisons.
base::Report ExperimentTableView(const base::Report& report);

}  // namespace seedance::sched
