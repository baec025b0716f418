#include "seedance/sched/html_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace seedance::sched {
namespace {

using base::FixedNumber;

// A qualitative palette (one colour per policy), readable on white.
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

// One line of a chart: its name and values at evenly spaced x positions.
struct Line {
  std::string name;
  const std::vector<double>* values;
};

// A line chart, one line per policy; `ticks` label evenly spaced x positions
// from the first value to the last.
std::string LineChart(const std::vector<Line>& lines, const std::vector<std::string>& ticks,
                      const std::string& title, const std::string& x_label,
                      const std::string& y_label) {
  const int w = 640, h = 320, left = 56, right = 150, top = 28, bottom = 40;
  const int pw = w - left - right, ph = h - top - bottom;
  double lo = 1e9, hi = -1e9;
  size_t n = 0;
  for (const auto& l : lines) {
    n = std::max(n, l.values->size());
    for (double v : *l.values) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!(hi > lo)) {
    lo -= 1;
    hi += 1;
  }
  const double pad = (hi - lo) * 0.05;
  lo -= pad;
  hi += pad;
  const double span = n > 1 ? static_cast<double>(n - 1) : 1.0;
  auto x = [&](double i) { return left + static_cast<double>(pw) * i / span; };
  auto y = [&](double v) { return top + static_cast<double>(ph) * (hi - v) / (hi - lo); };
  std::ostringstream s;
  s << base::SvgOpen(w, h, title);
  s << "<text x=\"" << left << "\" y=\"18\" class=\"t\">" << HtmlEscape(title) << "</text>\n";
  for (int k = 0; k <= 4; ++k) {  // horizontal grid
    const double v = lo + (hi - lo) * k / 4.0;
    s << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << FixedNumber(y(v), 1)
      << "\" y2=\"" << FixedNumber(y(v), 1) << "\" class=\"g\"/>"
      << "<text x=\"" << left - 6 << "\" y=\"" << FixedNumber(y(v) + 4, 1)
      << "\" class=\"a\" text-anchor=\"end\">" << FixedNumber(v, 1) << "</text>\n";
  }
  for (size_t i = 0; i < ticks.size(); ++i) {
    const double at = ticks.size() > 1
                          ? span * static_cast<double>(i) / static_cast<double>(ticks.size() - 1)
                          : 0.0;
    s << "<text x=\"" << FixedNumber(x(at), 1) << "\" y=\"" << top + ph + 16
      << "\" class=\"a\" text-anchor=\"middle\">" << HtmlEscape(ticks[i]) << "</text>\n";
  }
  s << "<text x=\"" << left + pw / 2 << "\" y=\"" << h - 6
    << "\" class=\"a\" text-anchor=\"middle\">" << HtmlEscape(x_label) << "</text>\n";
  s << "<text x=\"14\" y=\"" << top + ph / 2 << "\" class=\"a\" transform=\"rotate(-90 14 "
    << top + ph / 2 << ")\" text-anchor=\"middle\">" << HtmlEscape(y_label) << "</text>\n";
  for (size_t k = 0; k < lines.size(); ++k) {
    const auto& v = *lines[k].values;
    const char* colour = kColours[k % 8];
    s << "<polyline class=\"series\" fill=\"none\" stroke=\"" << colour
      << "\" stroke-width=\"2\" points=\"";
    for (size_t i = 0; i < v.size(); ++i) {
      s << FixedNumber(x(static_cast<double>(i)), 1) << "," << FixedNumber(y(v[i]), 1) << " ";
    }
    s << "\"><title>" << HtmlEscape(lines[k].name) << "</title></polyline>\n";
    const int ly = top + 14 + 18 * static_cast<int>(k);
    s << "<line x1=\"" << left + pw + 14 << "\" x2=\"" << left + pw + 34 << "\" y1=\"" << ly - 4
      << "\" y2=\"" << ly - 4 << "\" stroke=\"" << colour << "\" stroke-width=\"3\"/>"
      << "<text x=\"" << left + pw + 40 << "\" y=\"" << ly << "\" class=\"a\">"
      << HtmlEscape(lines[k].name) << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::vector<std::string> ArrivalTicks() {
  std::vector<std::string> t;
  for (int k = 50; k <= 130; k += 10) t.push_back(std::to_string(k));
  return t;
}

const char kStyle[] =
    "<style>\nbody{font-family:sans-serif;margin:24px;color:#222}"
    "table{border-collapse:collapse;margin:12px 0}"
    "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
    "th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}"
    ".t{font-size:14px;font-weight:bold}.a{font-size:11px}.s{font-size:9px}"
    ".g{stroke:#e5e5e5}\n</style>\n";

std::string Head(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         HtmlEscape(title) + "</title>\n" + kStyle + "</head>\n<body>\n<h1>" + HtmlEscape(title) +
         "</h1>\n";
}

// Nodes grouped by GPU model, then in chunks of at most `per_row`: one row each.
struct Row {
  std::string label;
  std::vector<size_t> nodes;
};

std::vector<Row> NodeRows(const std::vector<std::string>& models, size_t per_row) {
  std::map<std::string, std::vector<size_t>> by_model;
  for (size_t n = 0; n < models.size(); ++n) by_model[models[n]].push_back(n);
  std::vector<Row> rows;
  for (const auto& [model, nodes] : by_model) {
    for (size_t i = 0; i < nodes.size(); i += per_row) {
      Row r;
      const size_t end = std::min(nodes.size(), i + per_row);
      r.label = (model.empty() ? std::string("CPU") : model) + " " + std::to_string(i + 1) + "-" +
                std::to_string(end);
      r.nodes.assign(nodes.begin() + static_cast<int64_t>(i),
                     nodes.begin() + static_cast<int64_t>(end));
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

std::string HeatMap(const PolicySeries& p, const std::vector<std::string>& models) {
  if (p.node_gpu_used_at.empty()) return {};
  const auto rows = NodeRows(models, 32);
  const int cell_w = 44, cell_h = 10, left = 130, top = 24;
  const int w = std::max(left + cell_w * 9 + 20, 720);
  const int h = top + cell_h * static_cast<int>(rows.size()) + 30;
  std::ostringstream s;
  s << base::SvgOpen(w, h, "GPU use heat map, " + p.policy);
  s << "<text x=\"0\" y=\"14\" class=\"t\">" << HtmlEscape(p.policy)
    << ": share of GPU in use per node group, first seed (white idle, dark blue full)</text>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    const int y = top + cell_h * static_cast<int>(r);
    if (r % 4 == 0) {
      s << "<text x=\"" << left - 4 << "\" y=\"" << y + cell_h - 1
        << "\" class=\"s\" text-anchor=\"end\">" << HtmlEscape(rows[r].label) << "</text>\n";
    }
    for (size_t k = 0; k < 9 && k < p.node_gpu_used_at.size(); ++k) {
      double sum = 0;
      for (size_t n : rows[r].nodes) {
        if (n < p.node_gpu_used_at[k].size()) sum += p.node_gpu_used_at[k][n];
      }
      const double u = rows[r].nodes.empty() ? 0 : sum / static_cast<double>(rows[r].nodes.size());
      // White (idle) to dark blue (full).
      const int shade = static_cast<int>(255 - 200 * std::clamp(u, 0.0, 1.0));
      char colour[16];
      std::snprintf(colour, sizeof(colour), "#%02x%02xff", shade, shade);
      s << "<rect x=\"" << left + cell_w * static_cast<int>(k) << "\" y=\"" << y << "\" width=\""
        << cell_w - 1 << "\" height=\"" << cell_h - 1 << "\" fill=\"" << colour << "\"><title>"
        << HtmlEscape(rows[r].label) << " at " << 50 + 10 * k << "%: " << FixedNumber(100 * u, 1)
        << "% used</title></rect>\n";
    }
  }
  const int base = top + cell_h * static_cast<int>(rows.size()) + 14;
  for (size_t k = 0; k < 9; ++k) {
    s << "<text x=\"" << left + cell_w * static_cast<int>(k) + cell_w / 2 << "\" y=\"" << base
      << "\" class=\"s\" text-anchor=\"middle\">" << 50 + 10 * k << "%</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace

namespace {

std::vector<Line> AllocLines(const std::vector<PolicySeries>& ps, bool frag) {
  std::vector<Line> lines;
  lines.reserve(ps.size());
  for (const auto& p : ps) lines.push_back({p.policy, frag ? &p.frag_pct_at : &p.alloc_pct_at});
  return lines;
}

}  // namespace

std::string RenderHtmlReport(const HtmlReportInput& in) {
  std::ostringstream s;
  s << Head(in.title);
  s << "<p>Nodes: <code>" << HtmlEscape(in.nodes_file) << "</code>; pods: <code>"
    << HtmlEscape(in.pods_file) << "</code>; " << in.seeds
    << " seed(s), FGD protocol (pods shuffled, topped up to 130% of GPU capacity, no "
       "departures). Figures are means over the seeds.</p>\n";
  s << "<h2>Figures</h2>\n<table id=\"summary\">\n<tr><th>policy</th><th>allocation % at 100% "
       "arrived</th><th>allocation % at 130%</th><th>unallocated GPU % at 130%</th>"
       "<th>fragmented GPU % at 100%</th><th>run time (ms)</th></tr>\n";
  for (const auto& p : in.policies) {
    s << "<tr><td>" << HtmlEscape(p.policy) << "</td><td>" << FixedNumber(p.alloc_pct_at.at(5))
      << "</td><td>" << FixedNumber(p.alloc_pct_at.at(8)) << "</td><td>"
      << FixedNumber(p.unallocated_pct_at_130) << "</td><td>" << FixedNumber(p.frag_pct_at.at(5))
      << "</td><td>" << FixedNumber(p.runtime_ms, 0) << "</td></tr>\n";
  }
  s << "</table>\n<h2>Allocation</h2>\n"
    << LineChart(AllocLines(in.policies, false), ArrivalTicks(), "GPU allocation vs arrived demand",
                 "arrived GPU demand, % of capacity", "allocated, % of capacity");
  s << "<h2>Fragmentation</h2>\n"
    << LineChart(AllocLines(in.policies, true), ArrivalTicks(),
                 "Fragmented GPU vs arrived demand (FGD's measure)",
                 "arrived GPU demand, % of capacity", "fragmented, % of capacity");
  s << "<h2>GPU use over nodes and time</h2>\n";
  for (const auto& p : in.policies) s << HeatMap(p, in.node_models);
  s << "</body>\n</html>\n";
  return s.str();
}

std::string RenderEventHtmlReport(const EventReportInput& in) {
  std::ostringstream s;
  s << Head(in.title);
  s << "<p>Nodes: <code>" << HtmlEscape(in.nodes_file) << "</code>; jobs: <code>"
    << HtmlEscape(in.jobs_file) << "</code>; event mode (arrivals and departures at the trace's "
    << "times). " << HtmlEscape(in.settings) << "</p>\n";
  s << "<h2>Figures</h2>\n<table id=\"summary\">\n<tr><th>policy</th><th>jobs</th><th>completed"
       "</th><th>JCT p50 (s)</th><th>JCT p99 (s)</th><th>queue delay p50 (s)</th>"
       "<th>queue delay p99 (s)</th><th>mean GPU use %</th><th>GPU-hours</th>"
       "<th>preemptions</th><th>cost (on-demand GPU-hours)</th></tr>\n";
  for (const auto& p : in.policies) {
    const EventRun& r = p.run;
    s << "<tr><td>" << HtmlEscape(p.policy) << "</td><td>" << r.jobs << "</td><td>" << r.completed
      << "</td><td>" << FixedNumber(r.jct_s.p50, 0) << "</td><td>" << FixedNumber(r.jct_s.p99, 0)
      << "</td><td>" << FixedNumber(r.queue_delay_s.p50, 0) << "</td><td>"
      << FixedNumber(r.queue_delay_s.p99, 0) << "</td><td>" << FixedNumber(r.mean_gpu_used_pct, 1)
      << "</td><td>" << FixedNumber(r.gpu_hours, 0) << "</td><td>" << r.preemptions << "</td><td>"
      << FixedNumber(r.cost_on_demand_gpu_hours, 0) << "</td></tr>\n";
  }
  s << "</table>\n<h2>GPU use over time</h2>\n";
  std::vector<Line> lines;
  for (const auto& p : in.policies) lines.push_back({p.policy, &p.run.gpu_used_pct_over_time});
  s << LineChart(lines, {"0", "25", "50", "75", "100"}, "GPU in use (time-weighted, 100 slices)",
                 "% of the run", "GPU in use, % of capacity");
  for (const auto& p : in.policies) {
    s << "<h2>Groups: " << HtmlEscape(p.policy)
      << "</h2>\n<table>\n<tr><th>group</th>"
         "<th>jobs</th><th>queue delay p50 (s)</th><th>p90 (s)</th><th>p99 (s)</th>"
         "<th>SLO attainment %</th></tr>\n";
    for (const auto& g : p.run.groups) {
      s << "<tr><td>" << HtmlEscape(g.group) << "</td><td>" << g.jobs << "</td><td>"
        << FixedNumber(g.queue_delay_s.p50, 0) << "</td><td>" << FixedNumber(g.queue_delay_s.p90, 0)
        << "</td><td>" << FixedNumber(g.queue_delay_s.p99, 0) << "</td><td>"
        << (g.slo_attainment_pct < 0 ? std::string("-") : FixedNumber(g.slo_attainment_pct, 1))
        << "</td></tr>\n";
    }
    s << "</table>\n";
    if (!p.run.tiers.empty()) {
      s << "<h2>QoS tiers: " << HtmlEscape(p.policy)
        << "</h2>\n<table class=\"tiers\">\n<tr><th>tier</th><th>jobs</th><th>started</th>"
           "<th>queue delay p50 (s)</th><th>p90 (s)</th><th>p99 (s)</th><th>preemptions</th>"
           "<th>SLO attainment %</th><th>share time beyond margin %</th></tr>\n";
      for (const auto& t : p.run.tiers) {
        s << "<tr><td>" << TierName(t.tier) << "</td><td>" << t.jobs << "</td><td>" << t.started
          << "</td><td>" << FixedNumber(t.queue_delay_s.p50, 0) << "</td><td>"
          << FixedNumber(t.queue_delay_s.p90, 0) << "</td><td>"
          << FixedNumber(t.queue_delay_s.p99, 0) << "</td><td>" << t.preemptions << "</td><td>"
          << (t.slo_attainment_pct < 0 ? std::string("-") : FixedNumber(t.slo_attainment_pct, 1))
          << "</td><td>"
          << (t.share_run_s > 0 ? FixedNumber(100 * t.above_margin_s / t.share_run_s, 1)
                                : std::string("-"))
          << "</td></tr>\n";
      }
      s << "</table>\n";
    }
  }
  s << "</body>\n</html>\n";
  return s.str();
}

}  // namespace seedance::sched
