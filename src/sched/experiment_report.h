// The figures of an experiment's report (experiment.h), averaged over seeds (private to
// seedance::sched).
#pragma once

#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/sched/event_sim.h"
#include "seedance/sched/experiment.h"
#include "seedance/sched/fgd_protocol.h"
#include "seedance/sched/html_report.h"

namespace seedance::sched {

// One policy's event runs (every one OK), averaged; per-group, per-tier and over-time figures
// of the first seed.
base::Report EventFigures(const std::vector<base::StatusOr<EventRun>>& runs);
// The event HTML report's header (files, settings), without the policies.
EventReportInput EventHtmlInput(const ExperimentSpec& spec);

struct FgdFigures {
  base::Report report;              // the policy's figures, without its name
  std::vector<double> alloc, frag;  // means at 50, 60, ..., 130% arrived
  double runtime_ms = 0;
};
// One policy's FGD-protocol runs (every one OK), averaged.
FgdFigures FgdFiguresOf(const std::vector<base::StatusOr<FgdRun>>& runs);

}  // namespace seedance::sched
