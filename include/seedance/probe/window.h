// One window of the probe as a report (feature PROBE-1): what `seedancectl probe -o json` prints
// per window and what `seedance.probe.sample()` returns — one builder for both faces.
//
//   {"timestamp_s": <end of the window, Unix seconds, whole milliseconds>,
//    "window_s": <length measured on the monotonic clock>,
//    "values": [...], "findings": [...], "notes": [...]}
//
// Thread safety: as Probe (one thread at a time per Probe).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/probe/probe.h"
#include "seedance/probe/rules.h"

namespace seedance::probe {

// A comma-separated list of value names or prefixes ("gpu", "net.out_bytes"); an error at
// `where` listing the known names otherwise. Empty: every value.
base::StatusOr<std::vector<std::string>> ParseMetricFilter(std::string_view list,
                                                           std::string_view where = "--metrics");

base::Report WindowReport(const Snapshot& before, const Snapshot& after,
                          const std::vector<Value>& values, const std::vector<Finding>& findings);

// Reads, sleeps `interval` on `clock`, reads again, and reports the window (values filtered by
// `metrics`, the rules' findings).
base::StatusOr<base::Report> SampleWindow(Probe& probe, base::Env& clock,
                                          std::chrono::nanoseconds interval,
                                          const std::vector<std::string>& metrics = {});

}  // namespace seedance::probe
