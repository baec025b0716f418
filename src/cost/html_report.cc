#include "seedance/cost/html_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "seedance/base/html.h"

namespace seedance::cost {
namespace {

using base::FixedNumber;
using base::HtmlEscape;
using base::Report;
using base::SvgOpen;

constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf"};
// At most this many of the Pareto input's points are drawn (evenly spaced in file order): the
// page stays small whatever the input; every front point is always drawn.
constexpr size_t kMaxCloudPoints = 4000;

std::string Money(double usd) {
  return "$" + (std::fabs(usd) >= 100 ? FixedNumber(usd, 0)
                : std::fabs(usd) >= 1 ? FixedNumber(usd, 2)
                                      : FixedNumber(usd, 4));
}

double NumberOr(const Report& r, const char* key, double fallback = 0) {
  return r.contains(key) && r[key].is_number() ? r[key].get<double>() : fallback;
}

// The TCO: one stacked bar of the per-GPU-hour terms, with a legend.
std::string TcoSection(const Report& tco) {
  const Report& per = tco["per_gpu_hour"];
  const double total = NumberOr(per, "total_usd");
  std::ostringstream s;
  s << "<h2>Cost per GPU-hour</h2>\n<p>" << HtmlEscape(tco["inputs"]["gpu"].get<std::string>())
    << ", " << HtmlEscape(tco["inputs"]["ownership"].get<std::string>()) << ": <b>" << Money(total)
    << "</b> per GPU-hour, " << Money(NumberOr(tco["derived"], "usd_per_pflop_hour"))
    << " per PFLOP-hour at " << FixedNumber(NumberOr(tco["inputs"], "utilization") * 100, 0)
    << "% of the " << HtmlEscape(tco["inputs"]["precision"].get<std::string>()) << " peak.</p>\n";
  const int w = 640, h = 70 + 22 * static_cast<int>(per.size()), left = 20, bar = 600;
  s << SvgOpen(w, h, "cost per GPU-hour by term");
  double x = left;
  int i = 0, row = 0;
  for (const auto& [key, value] : per.items()) {
    if (key == "total_usd" || !value.is_number()) continue;
    const double v = value.get<double>();
    const double width = total > 0 ? bar * v / total : 0;
    const char* colour = kColours[i++ % std::size(kColours)];
    if (width > 0) {
      s << "<rect class=\"bar\" x=\"" << FixedNumber(x, 1) << "\" y=\"10\" width=\""
        << FixedNumber(width, 1) << "\" height=\"28\" fill=\"" << colour << "\"><title>"
        << HtmlEscape(key) << " " << Money(v) << "</title></rect>\n";
    }
    x += width;
    const int y = 60 + 22 * row++;
    s << "<rect x=\"" << left << "\" y=\"" << y - 11 << "\" width=\"12\" height=\"12\" fill=\""
      << colour << "\"/><text x=\"" << left + 18 << "\" y=\"" << y << "\">" << HtmlEscape(key)
      << ": " << Money(v) << (total > 0 ? " (" + FixedNumber(100 * v / total, 1) + "%)" : "")
      << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

// A run's breakdown: one bar per item, with its USD and share.
std::string BreakdownSection(const Report& b) {
  const Report& items = b["items"];
  double top = 0;
  for (const auto& it : items) top = std::max(top, NumberOr(it, "usd"));
  std::ostringstream s;
  s << "<h2>Cost of the run</h2>\n<p>Total <b>" << Money(NumberOr(b, "total_usd")) << "</b> over "
    << FixedNumber(NumberOr(b, "gpu_hours"), 1) << " GPU-hours.</p>\n";
  const int w = 640, left = 170, bar = 380, h = 20 + 30 * static_cast<int>(items.size());
  s << SvgOpen(w, h, "cost of the run by item");
  int row = 0;
  for (const auto& it : items) {
    const double v = NumberOr(it, "usd");
    const int y = 10 + 30 * row;
    s << "<text x=\"" << left - 8 << "\" y=\"" << y + 16 << "\" text-anchor=\"end\">"
      << HtmlEscape(it["item"].get<std::string>()) << "</text>\n";
    s << "<rect class=\"bar\" x=\"" << left << "\" y=\"" << y << "\" width=\""
      << FixedNumber(top > 0 ? bar * v / top : 0, 1) << "\" height=\"22\" fill=\""
      << kColours[row % std::size(kColours)] << "\"/>\n";
    s << "<text x=\"" << left + (top > 0 ? bar * v / top : 0) + 6 << "\" y=\"" << y + 16 << "\">"
      << Money(v)
      << (it["share"].is_number() ? " (" + FixedNumber(100 * it["share"].get<double>(), 1) + "%)"
                                  : "")
      << "</text>\n";
    ++row;
  }
  s << "</svg>\n";
  return s.str();
}

// The ROI matrix as a heat map.
std::string RoiSection(const Report& roi) {
  const double threshold = NumberOr(roi["inputs"], "roi_threshold", 1.8);
  std::vector<double> rows, cols;
  std::map<std::pair<double, double>, const Report*> cell;
  for (const auto& c : roi["sensitivity"]) {
    const double s = c["scale_out"].get<double>(), u = c["utilization"].get<double>();
    if (std::find(rows.begin(), rows.end(), s) == rows.end()) rows.push_back(s);
    if (std::find(cols.begin(), cols.end(), u) == cols.end()) cols.push_back(u);
    cell[{s, u}] = &c;
  }
  double best = threshold;
  for (const auto& [k, c] : cell) best = std::max(best, NumberOr(*c, "roi", 0));
  const Report& opt = roi["optimization"];
  std::ostringstream s;
  s << "<h2>Return on the optimization</h2>\n<p>ROI over "
    << FixedNumber(NumberOr(roi["inputs"], "horizon_months"), 0) << " months: <b>"
    << FixedNumber(NumberOr(opt, "roi"), 2) << "</b>";
  if (opt["payback_months"].is_number()) {
    s << ", paid back in " << FixedNumber(opt["payback_months"].get<double>(), 1) << " months";
  }
  s << ". Below: repairing utilization instead of scaling out (rows: scale-out, columns: "
       "utilization; green at ROI &ge; "
    << FixedNumber(threshold, 1) << ", red below 0, grey where utilization cannot reach).</p>\n";
  const int cw = 96, ch = 44, left = 90, top = 34;
  const int w = left + cw * static_cast<int>(cols.size()) + 10;
  const int h = top + ch * static_cast<int>(rows.size()) + 30;
  s << SvgOpen(w, h, "ROI heat map");
  for (size_t j = 0; j < cols.size(); ++j) {
    s << "<text x=\"" << left + cw * static_cast<int>(j) + cw / 2 << "\" y=\"24\" "
      << "text-anchor=\"middle\">u=" << FixedNumber(cols[j], 2) << "</text>\n";
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const int y = top + ch * static_cast<int>(i);
    s << "<text x=\"" << left - 8 << "\" y=\"" << y + ch / 2 + 5
      << "\" text-anchor=\"end\">s=" << FixedNumber(rows[i], 2) << "</text>\n";
    for (size_t j = 0; j < cols.size(); ++j) {
      const Report& c = *cell[{rows[i], cols[j]}];
      const bool has = c["roi"].is_number();
      const double v = has ? c["roi"].get<double>() : 0;
      std::string fill = "#cccccc";
      if (c["decision"] == "no-change") {
        fill = "#eceff1";
      } else if (has && v < 0) {
        fill = "#e57373";
      } else if (has && v < threshold) {
        fill = "#ffd54f";
      } else if (has) {
        // Deeper green for higher ROI, on a log scale from the threshold to the best cell.
        const double t =
            best > threshold ? std::log1p(v - threshold) / std::log1p(best - threshold) : 1;
        const int g = static_cast<int>(200 - 90 * std::clamp(t, 0.0, 1.0));
        fill = "rgb(60," + std::to_string(g) + ",90)";
      }
      const int x = left + cw * static_cast<int>(j);
      s << "<rect class=\"cell\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << cw - 2
        << "\" height=\"" << ch - 2 << "\" fill=\"" << fill << "\"><title>scale-out "
        << FixedNumber(rows[i], 2) << ", utilization " << FixedNumber(cols[j], 2) << ": "
        << HtmlEscape(c["decision"].get<std::string>()) << "</title></rect>\n";
      s << "<text x=\"" << x + cw / 2 << "\" y=\"" << y + 18 << "\" text-anchor=\"middle\">"
        << (has ? FixedNumber(v, 1) : "&#8211;") << "</text><text x=\"" << x + cw / 2 << "\" y=\""
        << y + 34 << "\" text-anchor=\"middle\" class=\"small\">"
        << HtmlEscape(c["decision"].get<std::string>()) << "</text>\n";
    }
  }
  s << "</svg>\n";
  return s.str();
}

// The Pareto front as a scatter of the first two objectives (one objective: against the row).
std::string ParetoSection(const Report& p, const std::vector<std::vector<double>>& cloud) {
  const Report& objectives = p["objectives"];
  const std::string xk = objectives[0]["column"].get<std::string>();
  const bool two = objectives.size() >= 2;
  const std::string yk = two ? objectives[1]["column"].get<std::string>() : "row";
  std::vector<std::pair<double, double>> front;
  for (const auto& row : p["front"]) {
    front.emplace_back(row[xk].get<double>(),
                       two ? row[yk].get<double>() : row["row"].get<double>());
  }
  std::vector<std::pair<double, double>> all;
  const size_t step = std::max<size_t>(1, (cloud.size() + kMaxCloudPoints - 1) / kMaxCloudPoints);
  for (size_t i = 0; i < cloud.size(); i += step) {
    all.emplace_back(cloud[i][0], two ? cloud[i][1] : static_cast<double>(i + 1));
  }
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const auto* set : {&front, &all}) {
    for (auto [x, y] : *set) {
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  }
  if (!(x1 > x0)) x0 -= 1, x1 += 1;
  if (!(y1 > y0)) y0 -= 1, y1 += 1;
  const int w = 640, h = 400, left = 70, right = 20, top = 20, bottom = 50;
  auto px = [&](double x) { return left + (w - left - right) * (x - x0) / (x1 - x0); };
  auto py = [&](double y) { return top + (h - top - bottom) * (y1 - y) / (y1 - y0); };
  std::ostringstream s;
  s << "<h2>Pareto front</h2>\n<p>" << p["front_size"].get<int64_t>() << " of "
    << p["points"].get<int64_t>() << " points are on the front (" << HtmlEscape(xk) << " "
    << HtmlEscape(objectives[0]["direction"].get<std::string>());
  for (size_t k = 1; k < objectives.size(); ++k) {
    s << ", " << HtmlEscape(objectives[k]["column"].get<std::string>()) << " "
      << HtmlEscape(objectives[k]["direction"].get<std::string>());
  }
  s << ")";
  if (objectives.size() == 3) {
    s << "; drawn on the first two, each front point's row (with the third) in its tooltip";
  }
  s << ".</p>\n" << SvgOpen(w, h, "Pareto front");
  s << "<line x1=\"" << left << "\" y1=\"" << h - bottom << "\" x2=\"" << w - right << "\" y2=\""
    << h - bottom << "\" class=\"axis\"/><line x1=\"" << left << "\" y1=\"" << top << "\" x2=\""
    << left << "\" y2=\"" << h - bottom << "\" class=\"axis\"/>\n";
  s << "<text x=\"" << (left + w - right) / 2 << "\" y=\"" << h - 12 << "\" text-anchor=\"middle\">"
    << HtmlEscape(xk) << "</text>\n";
  s << "<text x=\"16\" y=\"" << (top + h - bottom) / 2 << "\" transform=\"rotate(-90 16 "
    << (top + h - bottom) / 2 << ")\" text-anchor=\"middle\">" << HtmlEscape(yk) << "</text>\n";
  for (int k = 0; k <= 4; ++k) {
    const double xv = x0 + (x1 - x0) * k / 4, yv = y0 + (y1 - y0) * k / 4;
    s << "<text x=\"" << FixedNumber(px(xv), 1) << "\" y=\"" << h - bottom + 16
      << "\" text-anchor=\"middle\" class=\"small\">" << FixedNumber(xv, 2) << "</text>";
    s << "<text x=\"" << left - 6 << "\" y=\"" << FixedNumber(py(yv) + 4, 1)
      << "\" text-anchor=\"end\" class=\"small\">" << FixedNumber(yv, 2) << "</text>\n";
  }
  for (auto [x, y] : all) {
    s << "<circle class=\"point\" cx=\"" << FixedNumber(px(x), 1) << "\" cy=\""
      << FixedNumber(py(y), 1) << "\" r=\"3\"/>\n";
  }
  if (objectives.size() == 2) {  // two objectives: the front is a staircase, drawn joined
    std::vector<std::pair<double, double>> sorted = front;
    std::sort(sorted.begin(), sorted.end());
    s << "<polyline class=\"front-line\" points=\"";
    for (auto [x, y] : sorted) s << FixedNumber(px(x), 1) << "," << FixedNumber(py(y), 1) << " ";
    s << "\"/>\n";
  }
  size_t i = 0;
  for (const auto& row : p["front"]) {
    s << "<circle class=\"front\" cx=\"" << FixedNumber(px(front[i].first), 1) << "\" cy=\""
      << FixedNumber(py(front[i].second), 1) << "\" r=\"5\"><title>" << HtmlEscape(row.dump())
      << "</title></circle>\n";
    ++i;
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace

std::string RenderCostHtml(const CostPageInput& in) {
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
    << HtmlEscape(in.title) << "</title>\n<style>\n"
    << "body{font-family:sans-serif;margin:24px;max-width:960px;color:#222}\n"
    << "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
    << "svg text{font-size:12px;fill:#222}svg text.small{font-size:10px}\n"
    << ".axis{stroke:#444}.point{fill:none;stroke:#9e9e9e}.front{fill:#d62728}\n"
    << ".front-line{fill:none;stroke:#d62728;stroke-width:1.5}\n"
    << "</style></head><body>\n<h1>" << HtmlEscape(in.title) << "</h1>\n";
  if (in.tco) s << TcoSection(*in.tco);
  if (in.breakdown) s << BreakdownSection(*in.breakdown);
  if (in.roi) s << RoiSection(*in.roi);
  if (in.pareto) s << ParetoSection(*in.pareto, in.pareto_points);
  if (!in.tco && !in.breakdown && !in.roi && !in.pareto) s << "<p>No report was given.</p>\n";
  s << "</body></html>\n";
  return s.str();
}

}  // namespace seedance::cost
