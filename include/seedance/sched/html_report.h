// `seedancectl simulate --report FILE.html` (feature SCHED-7): one
// self-contained HTML page (the page kit, base/html_page.h), drawn from the
// simulation's typed results.
//
// Sections: the run (files, seeds); allocation vs arrived demand per policy
// (line chart); fragmentation vs arrived demand (line chart); a table of the
// figures at 100% and 130% arrived; per policy, a heat map of GPU use over
// node groups (rows, by GPU model) and arrival marks (columns), from the
// first seed, with its colour scale.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seedance/sched/event_sim.h"

namespace seedance::sched {

struct PolicySeries {
  std::string policy;
  std::vector<double> alloc_pct_at;  // marks 50, 60, ..., 130
  std::vector<double> frag_pct_at;
  double unallocated_pct_at_130 = 0;
  double runtime_ms = 0;
  std::vector<std::vector<float>> node_gpu_used_at;  // [mark][node], first seed
  // unallocated_pct_at_130's 95% interval over the seeds (seed_stats.h; none with one seed),
  // and its value per seed.
  std::optional<std::pair<double, double>> unallocated_interval;
  std::vector<double> unallocated_per_seed;
};

struct HtmlReportInput {
  std::string title = "Seedance scheduling simulation";
  std::string nodes_file, pods_file;
  int seeds = 0;
  std::vector<std::string> node_models;  // GPU model per node, input order
  std::vector<PolicySeries> policies;
};

std::string RenderHtmlReport(const HtmlReportInput& input);

// The event mode's page: figures per policy (first seed), GPU use over time,
// and per-group queueing delays and SLO attainment.
struct EventSeries {
  std::string policy;
  EventRun run;  // the first seed's
};
struct EventReportInput {
  std::string title = "Seedance scheduling simulation (event mode)";
  std::string nodes_file, jobs_file;
  std::string settings;  // quotas, spot, SLOs as given, for the page's header
  std::vector<EventSeries> policies;
};
std::string RenderEventHtmlReport(const EventReportInput& input);

}  // namespace seedance::sched
