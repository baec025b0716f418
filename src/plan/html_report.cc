#include "seedance/plan/html_report.h"

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

#include "seedance/base/html.h"

namespace seedance::plan {
namespace {

using base::FixedNumber;
using base::HtmlEscape;
using base::Report;

constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf"};

double Get(const Report& r, const char* key) {
  return r.contains(key) && r[key].is_number() ? r[key].get<double>() : 0.0;
}

std::string Layout(const Report& p) {
  return "TP " + std::to_string(p["tensor"].get<int64_t>()) + ", PP " +
         std::to_string(p["pipeline"].get<int64_t>()) +
         (p["virtual_stages"].get<int64_t>() > 1
              ? " x" + std::to_string(p["virtual_stages"].get<int64_t>())
              : "") +
         (p["sequence_parallel"].get<bool>() ? " + SP" : "") + ", DP " +
         std::to_string(p["data_parallel"].get<int64_t>()) + ", ZeRO " +
         std::to_string(p["zero_stage"].get<int64_t>()) + ", recompute " +
         p["recompute"].get<std::string>() + ", micro-batch " +
         std::to_string(p["micro_batch"].get<int64_t>());
}

// Stacked horizontal bars, one per (label, terms) row, on a common scale up to `limit` (a
// dashed line when > 0) or the largest row.
std::string StackedBars(const std::vector<std::pair<std::string, const Report*>>& rows,
                        const std::vector<std::pair<const char*, const char*>>& terms,
                        double scale_unit, const char* unit, double limit, const char* label) {
  double top = limit;
  for (const auto& [name, r] : rows) {
    double sum = 0;
    for (const auto& [key, title] : terms) sum += Get(*r, key);
    top = std::max(top, sum);
  }
  if (top <= 0) top = 1;
  const int w = 700, left = 70, bar = 560, row_h = 34;
  const int h = 40 + row_h * static_cast<int>(rows.size()) + 22 * static_cast<int>(terms.size());
  std::ostringstream s;
  s << base::SvgOpen(w, h, label);
  int y = 10;
  for (const auto& [name, r] : rows) {
    double x = left;
    s << "<text x=\"4\" y=\"" << y + 17 << "\">" << HtmlEscape(name) << "</text>\n";
    size_t i = 0;
    for (const auto& [key, title] : terms) {
      const double v = Get(*r, key);
      const double width = bar * v / top;
      if (width > 0) {
        s << "<rect class=\"term\" x=\"" << FixedNumber(x, 1) << "\" y=\"" << y << "\" width=\""
          << FixedNumber(width, 1) << "\" height=\"24\" fill=\"" << kColours[i % 8] << "\"><title>"
          << HtmlEscape(title) << ": " << FixedNumber(v / scale_unit, 2) << " " << unit
          << "</title></rect>\n";
      }
      x += width;
      ++i;
    }
    s << "<text x=\"" << FixedNumber(x + 4, 1) << "\" y=\"" << y + 17 << "\" class=\"small\">"
      << FixedNumber((x - left) / bar * top / scale_unit, 2) << " " << unit << "</text>\n";
    y += row_h;
  }
  if (limit > 0) {
    const double lx = left + bar * limit / top;
    s << "<line class=\"limit\" x1=\"" << FixedNumber(lx, 1) << "\" y1=\"4\" x2=\""
      << FixedNumber(lx, 1) << "\" y2=\"" << y << "\"/><text x=\"" << FixedNumber(lx, 1)
      << "\" y=\"" << y + 12 << "\" text-anchor=\"middle\" class=\"small\">capacity "
      << FixedNumber(limit / scale_unit, 1) << " " << unit << "</text>\n";
    y += 16;
  }
  size_t i = 0;
  for (const auto& [key, title] : terms) {
    s << "<rect x=\"" << left << "\" y=\"" << y + 4 << "\" width=\"12\" height=\"12\" fill=\""
      << kColours[i % 8] << "\"/><text x=\"" << left + 18 << "\" y=\"" << y + 14 << "\">"
      << HtmlEscape(title) << "</text>\n";
    y += 22;
    ++i;
  }
  s << "</svg>\n";
  return s.str();
}

std::string Summary(const Report& r) {
  std::ostringstream s;
  const Report& before = r["before"];
  const bool fits = r["fits"].get<bool>();
  s << "<p>" << HtmlEscape(r["model"]["family"].get<std::string>()) << ", "
    << r["derived"]["parameters"].get<int64_t>() / 1'000'000 << "M parameters on "
    << r["hardware"]["gpus_total"].get<int64_t>() << " x "
    << HtmlEscape(r["hardware"]["gpu"].get<std::string>()) << ". ";
  if (!fits) {
    s << "<b class=\"bad\">No layout fits.</b> " << HtmlEscape(r["does_not_fit"].dump())
      << "</p>\n";
    return s.str();
  }
  const Report& after = r["after"];
  s << "Recommended: <b>" << HtmlEscape(Layout(after["parallelism"])) << "</b>.</p>\n";
  s << "<table><tr><th></th><th>before (as stated)</th><th>after (recommended)</th></tr>\n";
  const std::pair<const char*, const char*> rows[] = {
      {"memory_fit", "fits (by the memory interval)"},
      {"memory_bytes_per_gpu", "memory per GPU (GB)"},
      {"step_time_s", "step time (s)"},
      {"tokens_per_s_per_gpu", "tokens/s per GPU"},
      {"mfu", "MFU"},
      {"hfu", "HFU"},
      {"cost_per_step_usd", "cost per step (USD)"},
      {"energy_per_step_j", "energy per step (kJ)"}};
  for (const auto& [key, title] : rows) {
    s << "<tr><td>" << title << "</td>";
    for (const Report* e : {&before, &after}) {
      const Report& v = (*e)[key];
      const double scale = std::string(key) == "memory_bytes_per_gpu" ? 1e9
                           : std::string(key) == "energy_per_step_j"  ? 1e3
                                                                      : 1;
      const int digits = scale > 1 ? 1 : 3;
      std::string text = v.is_boolean()  ? (v.get<bool>() ? "yes" : "no")
                         : v.is_string() ? HtmlEscape(v.get<std::string>())
                                         : FixedNumber(v.get<double>() / scale, digits);
      // The 90% prediction interval, where the figure has one.
      if (e->contains("interval") && (*e)["interval"].contains(key)) {
        const Report& span = (*e)["interval"][key];
        text += " <span class=\"interval\">(" + FixedNumber(span[0].get<double>() / scale, digits) +
                "&ndash;" + FixedNumber(span[1].get<double>() / scale, digits) + ")</span>";
      }
      s << "<td>" << text << "</td>";
    }
    s << "</tr>\n";
  }
  s << "</table>\n<p>Layout before: " << HtmlEscape(Layout(before["parallelism"])) << ".</p>\n";
  if (r["saving"].contains("step_time_pct")) {
    const Report& saving = r["saving"];
    s << "<p class=\"saving\">Saving: " << FixedNumber(Get(saving, "step_time_pct"), 1)
      << "% of the step time";
    if (saving.contains("step_time_pct_interval")) {
      s << " (90% interval " << FixedNumber(saving["step_time_pct_interval"][0].get<double>(), 1)
        << "&ndash;" << FixedNumber(saving["step_time_pct_interval"][1].get<double>(), 1) << "%"
        << (saving["significant"].get<bool>() ? "" : "; not significant") << ")";
    }
    s << ", " << FixedNumber(Get(saving, "cost_per_step_usd"), 4) << " USD and "
      << FixedNumber(Get(saving, "energy_per_step_j") / 1e3, 1) << " kJ per step.</p>\n";
    if (r.contains("recommendation")) {
      s << "<p>" << HtmlEscape(r["recommendation"].get<std::string>()) << ".</p>\n";
    }
  } else {
    s << "<p>" << HtmlEscape(r["saving"]["note"].get<std::string>()) << "</p>\n";
  }
  return s.str();
}

std::string Front(const Report& r) {
  const Report& layouts = r["pareto_front"]["layouts"];
  std::vector<std::pair<double, double>> points;
  for (const auto& l : layouts) {
    points.emplace_back(Get(l, "memory_bytes_per_gpu") / 1e9, Get(l, "tokens_per_s_per_gpu"));
  }
  const std::pair<double, double> before = {Get(r["before"], "memory_bytes_per_gpu") / 1e9,
                                            Get(r["before"], "tokens_per_s_per_gpu")};
  const std::pair<double, double> after = {Get(r["after"], "memory_bytes_per_gpu") / 1e9,
                                           Get(r["after"], "tokens_per_s_per_gpu")};
  // Each point's 90% interval of tokens/s per GPU, drawn as a bar through it.
  auto span_of = [](const Report& l) {
    const Report& i = l["interval"]["tokens_per_s_per_gpu"];
    return std::pair{i[0].get<double>(), i[1].get<double>()};
  };
  double x0 = 0, x1 = Get(r, "gpu_memory_bytes") / 1e9, y0 = 0, y1 = 0;
  for (auto [x, y] : points) x1 = std::max(x1, x), y1 = std::max(y1, y);
  for (auto [x, y] : {before, after}) x1 = std::max(x1, x), y1 = std::max(y1, y);
  for (const auto& l : layouts) y1 = std::max(y1, span_of(l).second);
  for (const char* k : {"before", "after"}) y1 = std::max(y1, span_of(r[k]).second);
  if (!(y1 > y0)) y1 = 1;
  const int w = 640, h = 400, left = 70, right = 20, top = 20, bottom = 50;
  auto px = [&](double x) { return left + (w - left - right) * (x - x0) / (x1 - x0); };
  auto py = [&](double y) { return top + (h - top - bottom) * (y1 - y) / (y1 - y0); };
  std::ostringstream s;
  s << base::SvgOpen(w, h, "Pareto front");
  s << "<line x1=\"" << left << "\" y1=\"" << h - bottom << "\" x2=\"" << w - right << "\" y2=\""
    << h - bottom << "\" class=\"axis\"/><line x1=\"" << left << "\" y1=\"" << top << "\" x2=\""
    << left << "\" y2=\"" << h - bottom << "\" class=\"axis\"/>\n";
  s << "<text x=\"" << (left + w - right) / 2 << "\" y=\"" << h - 12
    << "\" text-anchor=\"middle\">memory per GPU (GB)</text>\n";
  s << "<text x=\"16\" y=\"" << (top + h - bottom) / 2 << "\" transform=\"rotate(-90 16 "
    << (top + h - bottom) / 2 << ")\" text-anchor=\"middle\">tokens/s per GPU</text>\n";
  for (int k = 0; k <= 4; ++k) {
    const double xv = x0 + (x1 - x0) * k / 4, yv = y0 + (y1 - y0) * k / 4;
    s << "<text x=\"" << FixedNumber(px(xv), 1) << "\" y=\"" << h - bottom + 16
      << "\" text-anchor=\"middle\" class=\"small\">" << FixedNumber(xv, 1) << "</text><text x=\""
      << left - 6 << "\" y=\"" << FixedNumber(py(yv) + 4, 1)
      << "\" text-anchor=\"end\" class=\"small\">" << FixedNumber(yv, 0) << "</text>\n";
  }
  const double cap = Get(r, "gpu_memory_bytes") / 1e9;
  s << "<line class=\"limit\" x1=\"" << FixedNumber(px(cap), 1) << "\" y1=\"" << top << "\" x2=\""
    << FixedNumber(px(cap), 1) << "\" y2=\"" << h - bottom << "\"/>\n";
  auto bar = [&](double x, std::pair<double, double> span) {
    s << "<line class=\"interval\" x1=\"" << FixedNumber(px(x), 1) << "\" y1=\""
      << FixedNumber(py(span.first), 1) << "\" x2=\"" << FixedNumber(px(x), 1) << "\" y2=\""
      << FixedNumber(py(span.second), 1) << "\"><title>90% interval of tokens/s per GPU</title>"
      << "</line>\n";
  };
  for (size_t k = 0; k < layouts.size(); ++k) bar(points[k].first, span_of(layouts[k]));
  bar(before.first, span_of(r["before"]));
  bar(after.first, span_of(r["after"]));
  size_t i = 0;
  for (const auto& l : layouts) {
    s << "<circle class=\"front\" cx=\"" << FixedNumber(px(points[i].first), 1) << "\" cy=\""
      << FixedNumber(py(points[i].second), 1) << "\" r=\"5\"><title>"
      << HtmlEscape(Layout(l["parallelism"])) << "</title></circle>\n";
    ++i;
  }
  for (auto [name, p] : {std::pair{"before", before}, std::pair{"after", after}}) {
    s << "<circle class=\"" << name << "\" cx=\"" << FixedNumber(px(p.first), 1) << "\" cy=\""
      << FixedNumber(py(p.second), 1) << "\" r=\"8\"><title>" << name
      << "</title></circle><text x=\"" << FixedNumber(px(p.first) + 10, 1) << "\" y=\""
      << FixedNumber(py(p.second) - 8, 1) << "\">" << name << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace

std::string RenderPlanHtml(const Report& r) {
  const std::string title = "Seedance plan: " + r["job"]["name"].get<std::string>();
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
    << HtmlEscape(title) << "</title>\n<style>\n"
    << "body{font-family:sans-serif;margin:24px;max-width:960px;color:#222}\n"
    << "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
    << "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 10px;"
    << "text-align:right}td:first-child{text-align:left}\n"
    << "svg text{font-size:12px;fill:#222}svg text.small{font-size:10px}\n"
    << ".axis{stroke:#444}.limit{stroke:#d62728;stroke-dasharray:4 3}\n"
    << ".front{fill:#1f77b4}.before{fill:none;stroke:#ff7f0e;stroke-width:3}"
    << ".after{fill:none;stroke:#2ca02c;stroke-width:3}.bad{color:#d62728}\n"
    << ".interval{stroke:#7f7f7f;stroke-width:2}span.interval{color:#666;font-size:90%}\n"
    << "</style></head><body>\n<h1>" << HtmlEscape(title) << "</h1>\n";
  s << Summary(r);
  if (r["fits"].get<bool>()) {
    const double capacity = Get(r, "gpu_memory_bytes");
    s << "<h2>Memory per GPU</h2>\n"
      << StackedBars({{"before", &r["before"]["memory"]}, {"after", &r["after"]["memory"]}},
                     {{"model_state_bytes", "model states"},
                      {"activation_bytes", "activations"},
                      {"logits_bytes", "logits"},
                      {"temporary_bytes", "temporaries"},
                      {"fragmentation_bytes", "fragmentation margin"},
                      {"reserve_bytes", "runtime reserve"}},
                     1e9, "GB", capacity, "memory per GPU by term");
    s << "<h2>Step time</h2>\n"
      << StackedBars({{"before", &r["before"]["time"]}, {"after", &r["after"]["time"]}},
                     {{"compute_s", "compute (recompute included)"},
                      {"tensor_parallel_comm_s", "tensor-parallel collectives"},
                      {"pipeline_bubble_s", "pipeline bubble"},
                      {"pipeline_p2p_s", "pipeline transfers"},
                      {"data_parallel_exposed_s", "data-parallel traffic (exposed)"},
                      {"optimizer_s", "optimizer"}},
                     1, "s", 0, "step time by term");
    s << "<h2>Pareto front</h2>\n<p>" << r["pareto_front"]["size"].get<int64_t>()
      << " fitting layouts are on the front of tokens/s, memory and power (drawn: memory "
         "against tokens/s; the dashed line is the GPU's memory).</p>\n"
      << Front(r);
    s << "<h2>Reasons</h2>\n<ul>\n";
    for (const auto& line : r["reasons"]) {
      s << "<li>" << HtmlEscape(line.get<std::string>()) << "</li>\n";
    }
    s << "</ul>\n";
  }
  s << "</body></html>\n";
  return s.str();
}

}  // namespace seedance::plan
