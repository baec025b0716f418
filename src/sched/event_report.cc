// The event simulator's report: percentiles, per-group and per-tier figures, GPU use over time.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "seedance/base/quantile.h"
#include "src/sched/simulation.h"

namespace seedance::sched {
namespace {

// base::Quantile's definition; no job started: all 0.
Percentiles Of(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.p50 = base::QuantileOfSorted(v, 0.50);
  p.p90 = base::QuantileOfSorted(v, 0.90);
  p.p99 = base::QuantileOfSorted(v, 0.99);
  return p;
}

// Share of `delays` at most `slo`, % of `jobs` (jobs never started missed it).
double Attainment(const std::vector<double>& delays, double slo, int64_t jobs) {
  const auto met = std::count_if(delays.begin(), delays.end(), [&](double x) { return x <= slo; });
  return 100.0 * static_cast<double>(met) / static_cast<double>(jobs);
}

// 100 slices of time-weighted use: use[k].second holds on [use[k].first, use[k+1].first).
std::vector<double> UseOverTime(const std::vector<std::pair<double, double>>& use, double t0,
                                double end, double makespan) {
  std::vector<double> out(100, 0.0);
  if (makespan <= 0) return out;
  const double slice = makespan / 100;
  size_t k = 0;
  for (size_t sl = 0; sl < 100; ++sl) {
    const double lo = t0 + slice * static_cast<double>(sl);
    const double hi = sl == 99 ? end : t0 + slice * static_cast<double>(sl + 1);
    while (k + 1 < use.size() && use[k + 1].first <= lo) ++k;
    double area = 0;
    for (size_t m = k; m + 1 < use.size() && use[m].first < hi; ++m) {
      const double a0 = std::max(lo, use[m].first), a1 = std::min(hi, use[m + 1].first);
      if (a1 > a0) area += use[m].second * (a1 - a0);
    }
    out[sl] = hi > lo ? 100 * area / (hi - lo) : 0;
  }
  return out;
}

std::vector<TierFigures> TierReport(Simulation& sim) {
  std::map<Tier, int64_t> tier_jobs;
  for (const auto& j : sim.jobs()) ++tier_jobs[j.tier];
  Tally& tally = sim.tally();
  const auto& slos = sim.options().slo_queue_delay_s;
  std::vector<TierFigures> out;
  for (const auto& [t, n] : tier_jobs) {
    TierFigures f;
    f.tier = t;
    f.jobs = n;
    const auto& d = tally.tier_delay[t];
    f.started = static_cast<int64_t>(d.size());
    f.queue_delay_s = Of(d);
    f.preemptions = tally.tier_preempted[t];
    f.share_run_s = tally.tier_share_s[t].first;
    f.above_margin_s = tally.tier_share_s[t].second;
    if (auto slo = slos.find(std::string(TierName(t))); slo != slos.end()) {
      f.slo_attainment_pct = Attainment(d, slo->second, n);
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace

void FinishReport(Simulation& sim, double t0, double end) {
  EventRun& run = sim.run();
  Tally& tally = sim.tally();
  run.still_queued = static_cast<int64_t>(sim.queue().size());
  run.makespan_s = end - t0;
  run.mean_gpu_used_pct = run.makespan_s > 0 ? 100 * tally.used_area / run.makespan_s : 0;
  run.gpu_used_pct_over_time = UseOverTime(tally.use, t0, end, run.makespan_s);
  run.jct_s = Of(tally.jct);
  run.queue_delay_s = Of(tally.delay);
  std::map<std::string, int64_t> group_jobs;
  for (const auto& j : sim.jobs()) ++group_jobs[j.group];
  const auto& slos = sim.options().slo_queue_delay_s;
  for (const auto& [g, n] : group_jobs) {
    GroupFigures f{g, n, Of(tally.group_delay[g]), -1};
    if (auto slo = slos.find(g); slo != slos.end()) {
      f.slo_attainment_pct = Attainment(tally.group_delay[g], slo->second, n);
    }
    run.groups.push_back(std::move(f));
  }
  if (run.share_run_s > 0) run.mean_share_slowdown = tally.slowdown_area / run.share_run_s;
  if (sim.options().tiers) run.tiers = TierReport(sim);
  run.nodes_examined = sim.scheduler().framework().nodes_examined();
}

}  // namespace seedance::sched
