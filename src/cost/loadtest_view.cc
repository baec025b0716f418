// The verdict and the default table of `seedancectl loadtest` (loadtest.h).
#include <cmath>
#include <string>

#include "seedance/cost/loadtest.h"

namespace seedance::cost {
namespace {

using base::Report;

std::string Sig3(double v) { return base::SignificantText(v); }

std::string LevelName(const Report& level) {
  if (level.contains("offered_rps"))
    return Sig3(level["offered_rps"].get<double>()) + " req/s offered";
  return "concurrency " + level["concurrency"].dump();
}

// {"estimate", "low", "high"} as "x (lo to hi)".
std::string WithCi(const Report& ci, const char* unit) {
  if (!ci.is_object()) return "-";
  return Sig3(ci["estimate"].get<double>()) + unit + " (95% CI " + Sig3(ci["low"].get<double>()) +
         " to " + Sig3(ci["high"].get<double>()) + ")";
}

double P99(const Report& level) {
  const Report& l = level["latency_ms"];
  return l.contains("p99") ? l["p99"]["estimate"].get<double>() : std::nan("");
}

}  // namespace

Report LoadTestVerdict(const Report& report) {
  Report out = Report::array();
  const Report& levels = report["levels"];
  if (levels.empty()) return out;
  const Report* best = &levels[0];
  for (const Report& l : levels) {
    if (l["throughput_rps"].get<double>() > (*best)["throughput_rps"].get<double>()) best = &l;
  }
  out.push_back("Highest throughput: " + WithCi((*best)["throughput_rps_ci"], " req/s") + " at " +
                LevelName(*best) + ", P99 latency " +
                ((*best)["latency_ms"].contains("p99") ? WithCi((*best)["latency_ms"]["p99"], " ms")
                                                       : std::string("-")) +
                ".");
  const double first = P99(levels[0]);
  std::string knee;
  for (size_t i = 1; i < levels.size() && std::isfinite(first); ++i) {
    if (P99(levels[i]) > 2 * first) {
      knee = "P99 latency first more than doubles at " + LevelName(levels[i]) + " (" +
             Sig3(P99(levels[i])) + " ms against " + Sig3(first) + " ms at " +
             LevelName(levels[0]) + ").";
      break;
    }
  }
  out.push_back(knee.empty() ? "P99 latency stays within twice the first level's (" + Sig3(first) +
                                   " ms) at every level."
                             : knee);
  int64_t errors = 0, unsteady = 0;
  for (const Report& l : levels) {
    errors += l["errors"].get<int64_t>();
    unsteady += l["steady"].get<bool>() ? 0 : 1;
  }
  out.push_back(std::to_string(errors) + " errors in the steady windows; " +
                std::to_string(levels.size() - static_cast<size_t>(unsteady)) + " of " +
                std::to_string(levels.size()) + " levels steady (P99 drift within " +
                base::FixedText(report["drift_threshold"].get<double>() * 100, 0) + "%).");
  if ((*best)["usd_per_1k_requests"].is_number()) {
    out.push_back("Cost at the highest throughput: $" +
                  Sig3((*best)["usd_per_1k_requests"].get<double>()) + " per 1,000 requests.");
  }
  return out;
}

Report LoadTestTableView(const Report& report) {
  Report view = Report::object();
  view["verdict"] = report.contains("verdict") ? report["verdict"] : LoadTestVerdict(report);
  for (const char* key : {"url", "kind", "arrivals", "level_s"}) {
    if (report.contains(key)) view[key] = report[key];
  }
  Report rows = Report::array();
  for (const Report& l : report["levels"]) {
    Report row = Report::object();
    Report interval = Report::object();
    if (l.contains("offered_rps")) {
      row["offered_rps"] = l["offered_rps"];
    } else {
      row["concurrency"] = l["concurrency"];
    }
    row["rps"] = l["throughput_rps"];
    if (l["throughput_rps_ci"].is_object()) {
      interval["rps"] = {l["throughput_rps_ci"]["low"], l["throughput_rps_ci"]["high"]};
    }
    for (const char* q : {"p50", "p99"}) {
      if (!l["latency_ms"].contains(q)) continue;
      const std::string column = std::string(q) + "_ms";
      const Report& ci = l["latency_ms"][q];
      row[column] = ci["estimate"];
      interval[column] = {ci["low"], ci["high"]};
    }
    if (l.contains("ttft_ms") && l["ttft_ms"].is_object()) row["ttft_p50_ms"] = l["ttft_ms"]["p50"];
    if (l.contains("tokens_per_s")) row["tokens_per_s"] = l["tokens_per_s"];
    row["errors"] = l["errors"];
    row["steady"] = l["steady"];
    if (l["usd_per_1k_requests"].is_number()) row["usd_per_1k"] = l["usd_per_1k_requests"];
    if (!interval.empty()) row["interval"] = interval;
    rows.push_back(row);
  }
  view["levels"] = rows;
  return view;
}

}  // namespace seedance::cost
