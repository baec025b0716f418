#include "seedance/sched/experiment_view.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace seedance::sched {
namespace {

using base::Report;

std::string Fixed(double v, int digits) { return base::FixedText(v, digits); }

std::string Signed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%+.*f", digits, v);
  return buf;
}

std::string PValue(double p) {
  if (p < 0.001) return "p < 0.001";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "p = %.3g", p);
  return buf;
}

std::string FileName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsEvents(const Report& report) { return report.value("protocol", "fgd") == "events"; }

struct Headline {
  const char* metric;  // seed_spread key
  const char* words;   // "unallocated at 130% arrived"
  const char* unit;    // "%", " s"
  const char* diff_unit;
  bool lower_is_better;
  int digits;
};

Headline HeadlineOf(const Report& report) {
  if (IsEvents(report)) return {"jct_s_p50", "median job completion time", " s", " s", true, 0};
  return {
      "unallocated_gpu_pct_at_130", "GPUs unallocated at 130% arrived", "%", " points", true, 2};
}

std::string MeanWithInterval(const Report& spread, const Headline& h) {
  std::string out = Fixed(spread["mean"].get<double>(), h.digits) + h.unit;
  if (spread["interval_95"].is_array()) {
    out += " (95% CI " + Fixed(spread["interval_95"][0].get<double>(), h.digits) + " to " +
           Fixed(spread["interval_95"][1].get<double>(), h.digits) + ")";
  }
  return out;
}

}  // namespace

Report ExperimentVerdict(const Report& report) {
  Report out = Report::array();
  if (!report.contains("policies") || report["policies"].empty()) return out;
  const Headline h = HeadlineOf(report);
  const Report* best = nullptr;
  for (const Report& p : report["policies"]) {
    if (!p.contains("seed_spread")) return out;
    const double v = p["seed_spread"][h.metric]["mean"].get<double>();
    if (best == nullptr) {
      best = &p;
      continue;
    }
    const double b = (*best)["seed_spread"][h.metric]["mean"].get<double>();
    if (h.lower_is_better ? v < b : v > b) best = &p;
  }
  if (best == nullptr) return out;
  const int seeds = report.value("seeds", 0);
  out.push_back("Best on " + std::string(h.words) + ": " + (*best)["policy"].get<std::string>() +
                ", " + MeanWithInterval((*best)["seed_spread"][h.metric], h) + " over " +
                std::to_string(seeds) + (seeds == 1 ? " seed." : " seeds."));
  size_t shown = 0;
  for (const Report& c : report.value("comparisons", Report::array())) {
    if (c["metric"] != h.metric) continue;
    if (++shown > 8) break;
    std::string line = c["policy"].get<std::string>() + " vs " + c["baseline"].get<std::string>() +
                       ": " + Signed(c["difference"].get<double>(), h.digits) + h.diff_unit;
    if (c["interval"].is_object()) {
      const Report& range = c["interval"]["difference"];
      const double lo = range[0].get<double>(), hi = range[1].get<double>();
      line += " (95% CI " + Signed(lo, h.digits) + " to " + Signed(hi, h.digits) + "), " +
              PValue(c["p_value"].get<double>());
      // Told apart from seed noise when both say so: the interval excludes 0 and p < 0.05 (with
      // few seeds the sign-flip test cannot reach 0.05: 3 seeds give p >= 0.25).
      const bool apart = (lo > 0 || hi < 0) && c["p_value"].get<double>() < 0.05;
      line += apart ? (c["better"] == "policy" ? ": better" : ": worse")
                    : ": no difference beyond seed noise";
    } else {
      line += " (one seed: no interval)";
    }
    out.push_back(line + ".");
  }
  return out;
}

Report WithExperimentVerdict(const Report& report) {
  Report out = Report::object();
  out["verdict"] = ExperimentVerdict(report);
  for (auto it = report.begin(); it != report.end(); ++it) out[it.key()] = it.value();
  return out;
}

Report ExperimentTableView(const Report& report) {
  Report view = Report::object();
  view["verdict"] = report.contains("verdict") ? report["verdict"] : ExperimentVerdict(report);
  view["nodes"] = FileName(report.value("nodes", ""));
  view["pods"] = FileName(report.value("pods", ""));
  if (report.contains("protocol")) view["protocol"] = report["protocol"];
  view["seeds"] = report.value("seeds", 0);
  view["baseline"] = report.value("baseline", "");
  Report rows = Report::array();
  const bool events = IsEvents(report);
  for (const Report& p : report.value("policies", Report::array())) {
    Report row = Report::object();
    row["policy"] = p["policy"];
    Report interval = Report::object();
    auto headline = [&](const char* metric, const char* column) {
      if (!p.contains("seed_spread") || !p["seed_spread"].contains(metric)) return;
      const Report& s = p["seed_spread"][metric];
      row[column] = s["mean"];
      if (s["interval_95"].is_array()) interval[column] = s["interval_95"];
    };
    if (events) {
      row["completed"] = p.value("completed", Report());
      headline("jct_s_p50", "jct_p50_s");
      headline("queue_delay_s_p99", "queue_p99_s");
      headline("mean_gpu_used_pct", "gpu_used_pct");
      row["gpu_hours"] = p.value("gpu_hours", Report());
      row["preemptions"] = p.value("preemptions", Report());
    } else {
      headline("unallocated_gpu_pct_at_130", "unalloc_130_pct");
      headline("alloc_ratio_pct_at_100", "alloc_100_pct");
      if (p.contains("frag_gpu_pct_at")) row["frag_100_pct"] = p["frag_gpu_pct_at"]["100"];
      row["runtime_ms"] = p.value("runtime_ms", Report());
    }
    if (!interval.empty()) row["interval"] = interval;
    rows.push_back(row);
  }
  view["policies"] = rows;
  Report comparisons = Report::array();
  for (const Report& c : report.value("comparisons", Report::array())) {
    Report row = Report::object();
    row["policy"] = c["policy"];
    row["metric"] = c["metric"];
    row["difference"] = c["difference"];
    if (c["interval"].is_object()) row["interval"] = c["interval"];
    row["p_value"] = c["p_value"];
    row["better"] = c["better"];
    comparisons.push_back(row);
  }
  if (!comparisons.empty()) view["comparisons_with_" + report.value("baseline", "")] = comparisons;
  return view;
}

}  // namespace seedance::sched
