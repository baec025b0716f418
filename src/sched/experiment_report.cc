#include "src/sched/experiment_report.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace seedance::sched {

base::Report EventFigures(const std::vector<base::StatusOr<EventRun>>& runs) {
  const double n = static_cast<double>(runs.size());
  auto mean = [&](auto get) {
    double s = 0;
    for (const auto& r : runs) s += get(*r);
    return s / n;
  };
  // A count averaged over the seeds: a JSON integer when the seeds' counts divide evenly (always
  // with one seed, and whenever every seed gives the same count), the fractional mean otherwise.
  auto mean_count = [&](auto get) -> base::Report {
    int64_t sum = 0;
    for (const auto& r : runs) sum += static_cast<int64_t>(get(*r));
    const auto seeds = static_cast<int64_t>(runs.size());
    if (sum % seeds == 0) return sum / seeds;
    return static_cast<double>(sum) / n;
  };
  auto pct = [&](auto get) {
    base::Report p;
    p["p50"] = mean([&](const EventRun& r) { return get(r).p50; });
    p["p90"] = mean([&](const EventRun& r) { return get(r).p90; });
    p["p99"] = mean([&](const EventRun& r) { return get(r).p99; });
    return p;
  };
  const EventRun& first = *runs.front();
  base::Report r;
  r["jobs"] = first.jobs;
  r["completed"] = mean_count([](const EventRun& x) { return x.completed; });
  r["never_fit"] = first.never_fit;
  r["still_queued"] = mean_count([](const EventRun& x) { return x.still_queued; });
  r["jct_s"] = pct([](const EventRun& x) { return x.jct_s; });
  r["queue_delay_s"] = pct([](const EventRun& x) { return x.queue_delay_s; });
  r["mean_gpu_used_pct"] = mean([](const EventRun& x) { return x.mean_gpu_used_pct; });
  r["gpu_hours"] = mean([](const EventRun& x) { return x.gpu_hours; });
  r["spot_interruptions"] = mean_count([](const EventRun& x) { return x.spot_interruptions; });
  r["spot_gpu_hours"] = mean([](const EventRun& x) { return x.spot_gpu_hours; });
  r["cost_on_demand_gpu_hours"] =
      mean([](const EventRun& x) { return x.cost_on_demand_gpu_hours; });
  r["preemptions"] = mean_count([](const EventRun& x) { return x.preemptions; });
  r["lost_gpu_hours"] = mean([](const EventRun& x) { return x.lost_gpu_hours; });
  r["makespan_s"] = mean([](const EventRun& x) { return x.makespan_s; });
  r["redistributions"] = mean_count([](const EventRun& x) { return x.redistributions; });
  r["consolidations"] = mean_count([](const EventRun& x) { return x.consolidations; });
  r["consolidation_freed_gpu_hours"] =
      mean([](const EventRun& x) { return x.consolidation_freed_gpu_hours; });
  if (first.share_run_s > 0) {
    r["overcommit"] = {
        {"share_run_hours", mean([](const EventRun& x) { return x.share_run_s / 3600; })},
        {"slowed_pct", mean([](const EventRun& x) {
           return x.share_run_s > 0 ? 100 * x.slowed_s / x.share_run_s : 0.0;
         })},
        {"beyond_margin_pct", mean([](const EventRun& x) {
           return x.share_run_s > 0 ? 100 * x.above_margin_s / x.share_run_s : 0.0;
         })},
        {"mean_slowdown", mean([](const EventRun& x) { return x.mean_share_slowdown; })}};
  }
  base::Report groups = base::Report::array();
  for (const auto& g : first.groups) {
    base::Report one = {
        {"group", g.group},
        {"jobs", g.jobs},
        {"queue_delay_s", {{"p50", g.queue_delay_s.p50}, {"p99", g.queue_delay_s.p99}}}};
    if (g.slo_attainment_pct >= 0) one["slo_attainment_pct"] = g.slo_attainment_pct;
    groups.push_back(one);
  }
  r["groups_first_seed"] = groups;
  if (!first.tiers.empty()) {
    base::Report tiers = base::Report::array();
    for (const auto& t : first.tiers) {
      base::Report one = {{"tier", std::string(TierName(t.tier))},
                          {"jobs", t.jobs},
                          {"started", t.started},
                          {"preemptions", t.preemptions},
                          {"queue_delay_s",
                           {{"p50", t.queue_delay_s.p50},
                            {"p90", t.queue_delay_s.p90},
                            {"p99", t.queue_delay_s.p99}}}};
      if (t.slo_attainment_pct >= 0) one["slo_attainment_pct"] = t.slo_attainment_pct;
      if (t.share_run_s > 0)
        one["share_beyond_margin_pct"] = 100 * t.above_margin_s / t.share_run_s;
      tiers.push_back(one);
    }
    r["tiers_first_seed"] = tiers;
    r["retry_limited"] = mean_count([](const EventRun& x) { return x.retry_limited; });
  }
  r["gpu_used_pct_over_time_first_seed"] = first.gpu_used_pct_over_time;
  r["events"] = first.events;
  r["runtime_ms"] = mean([](const EventRun& x) { return x.runtime_ms; });
  return r;
}

EventReportInput EventHtmlInput(const ExperimentSpec& spec) {
  const EventRunOptions& e = spec.events;
  EventReportInput html;
  html.nodes_file = spec.nodes_file;
  html.jobs_file = spec.pods_file;
  std::string slo;
  for (const auto& [group, seconds] : e.slo_queue_delay_s) {
    slo += (slo.empty() ? "" : ",") + group + "=" + base::DumpJson(base::Report(seconds));
  }
  html.settings =
      std::to_string(spec.seeds) + " seed(s), figures of the first; " +
      (e.quotas ? "elastic quotas on" : "no quotas") + (e.tiers ? ", QoS tiers" : "") +
      (e.consolidate ? ", long-tail consolidation" : "") +
      (e.overcommit ? ", GPU over-commit" : "") + (e.redistribute ? ", load redistribution" : "") +
      (spec.spot_fraction > 0 ? ", spot share " + std::to_string(spec.spot_fraction) : "") +
      (slo.empty() ? "" : ", SLOs " + slo) + ".";
  return html;
}

FgdFigures FgdFiguresOf(const std::vector<base::StatusOr<FgdRun>>& runs) {
  const double seeds = static_cast<double>(runs.size());
  FgdFigures f;
  f.alloc.assign(9, 0.0);
  f.frag.assign(9, 0.0);
  double idle_whole = 0, idle_partial = 0;
  for (const auto& run : runs) {
    for (size_t i = 0; i < 9; ++i) {
      f.alloc[i] += run->alloc_pct_at[i] / seeds;
      f.frag[i] += run->frag_pct_at[i] / seeds;
    }
    f.runtime_ms += run->runtime_ms / seeds;
    idle_whole += run->idle_whole_gpu_pct / seeds;
    idle_partial += run->idle_partial_gpu_pct / seeds;
  }
  base::Report at = base::Report::object(), fr = base::Report::object();
  for (size_t i = 0; i < 9; ++i) {
    at[std::to_string(50 + 10 * i)] = f.alloc[i];
    fr[std::to_string(50 + 10 * i)] = f.frag[i];
  }
  base::Report& p = f.report;
  p["alloc_ratio_pct_at"] = at;
  p["unallocated_gpu_pct_at_130"] = 100 - f.alloc[8];
  // Where it sits: whole idle GPUs, partly used ones, and the commonest remnants (milli-GPU left
  // on a GPU) of the first seed.
  std::vector<std::pair<int64_t, int>> common;
  for (const auto& [milli, gpus] : runs[0]->remnant_gpus) common.emplace_back(gpus, milli);
  std::sort(common.rbegin(), common.rend());
  base::Report remnants = base::Report::array();
  for (size_t i = 0; i < std::min<size_t>(5, common.size()); ++i) {
    remnants.push_back({{"milli_left", common[i].second}, {"gpus", common[i].first}});
  }
  p["unallocated_at_130"] = {{"whole_gpu_pct", idle_whole},
                             {"partial_gpu_pct", idle_partial},
                             {"top_remnants_first_seed", remnants}};
  p["frag_gpu_pct_at"] = fr;
  p["runtime_ms"] = f.runtime_ms;
  return f;
}

}  // namespace seedance::sched
