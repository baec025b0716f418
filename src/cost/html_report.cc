#include "seedance/cost/html_report.h"

#include <algorithm>
#include <cmath>

#include "seedance/base/html.h"
#include "seedance/base/html_chart.h"
#include "seedance/base/html_page.h"

namespace seedance::cost {
namespace {

using base::FixedNumber;

// At most this many of the Pareto input's points are drawn (evenly spaced in file order): the
// page stays small whatever the input; every front point is always drawn.
constexpr size_t kMaxCloudPoints = 4000;

std::string Money(double usd) {
  if (usd == 0) return "$0";
  return "$" + (std::fabs(usd) >= 100 ? FixedNumber(usd, 0)
                : std::fabs(usd) >= 1 ? FixedNumber(usd, 2)
                                      : FixedNumber(usd, 4));
}

std::string Share(double part, double total) {
  return total > 0 ? " (" + FixedNumber(100 * part / total, 1) + "%)" : "";
}

void TcoSection(base::HtmlPage& page, const TcoView& v) {
  const TcoBreakdown& t = v.result;
  page.Heading("Cost per GPU-hour");
  page.Paragraph(
      {base::Plain(v.spec.gpu + ", " + std::string(OwnershipName(v.spec.ownership)) + ": "),
       base::Strong(Money(t.total_usd_per_gpu_hour)),
       base::Plain(" per GPU-hour, " + Money(t.usd_per_pflop_hour) + " per PFLOP-hour at " +
                   FixedNumber(v.spec.utilization * 100, 0) + "% of the " +
                   std::string(base::NumericFormatName(v.spec.precision)) + " peak.")});
  const bool owned = v.spec.ownership == Ownership::kOwned;
  std::vector<std::pair<std::string, double>> terms = {
      {owned ? "depreciation" : "rent", t.compute_usd_per_gpu_hour}};
  if (owned) {  // the terms only an owned GPU has
    terms.emplace_back("host", t.host_usd_per_gpu_hour);
    terms.emplace_back("colocation", t.colocation_usd_per_gpu_hour);
  }
  terms.emplace_back("power", t.power_usd_per_gpu_hour);
  terms.emplace_back("network", t.network_usd_per_gpu_hour);
  terms.emplace_back("storage", t.storage_usd_per_gpu_hour);
  terms.emplace_back("operations", t.operations_usd_per_gpu_hour);
  base::BarChart c;
  c.title = "Cost per GPU-hour by term";
  c.unit = "USD per GPU-hour";
  c.digits = 4;
  base::BarRow row{"per GPU-hour", {}, Money(t.total_usd_per_gpu_hour)};
  for (const auto& [name, usd] : terms) {
    c.segment_names.push_back(name + ": " + Money(usd) + Share(usd, t.total_usd_per_gpu_hour));
    row.segments.push_back(usd);
  }
  c.rows.push_back(std::move(row));
  page.Chart(base::RenderBarChart(c));
}

void BreakdownSection(base::HtmlPage& page, const BreakdownView& v) {
  const RunCost& r = v.result;
  page.Heading("Cost of the run");
  page.Paragraph({base::Plain("Total "), base::Strong(Money(r.total_usd)),
                  base::Plain(" over " + FixedNumber(r.gpu_hours, 1) + " GPU-hours.")});
  base::BarChart c;
  c.title = "Cost of the run by item";
  c.unit = "USD";
  for (const CostItem& item : r.items) {
    c.rows.push_back({item.item, {item.usd}, Money(item.usd) + Share(item.usd, r.total_usd)});
  }
  page.Chart(base::RenderBarChart(c));
}

void RoiSection(base::HtmlPage& page, const RoiView& v) {
  const RoiSpec& s = v.spec;
  const RoiResult& r = v.result;
  page.Heading("Return on the optimization");
  std::string payback;
  if (r.payback_months) payback = ", paid back in " + FixedNumber(*r.payback_months, 1) + " months";
  page.Paragraph(
      {base::Plain("ROI over " + FixedNumber(s.horizon_months, 0) + " months: "),
       base::Strong(FixedNumber(r.roi, 2)),
       base::Plain(payback + ". Below: repairing utilization instead of scaling out (rows: "
                             "scale-out, columns: utilization).")});
  base::HeatMap m;
  m.title = "ROI of repairing utilization instead of scaling out";
  m.row_title = "scale-out";
  m.column_title = "utilization";
  m.cell_width = 96;
  m.cell_height = 44;
  double best = s.roi_threshold + 1;
  for (const RoiCell& c : r.cells) {
    if (c.roi) best = std::max(best, *c.roi);
  }
  m.scale = {s.roi_threshold, best, "ROI (repair pays)", "#c8e6c9", "#1b5e20", ""};
  const char* kNoChange = "no change";
  const char* kLoss = "ROI below 0";
  const char* kBelow = "ROI below the threshold";
  const char* kUnreachable = "utilization cannot reach";
  m.categories = {
      {kNoChange, "#eceff1"}, {kLoss, "#e57373"}, {kBelow, "#ffd54f"}, {kUnreachable, "#cccccc"}};
  for (const RoiCell& c : r.cells) {
    const std::string row = "s=" + FixedNumber(c.scale_out, 2);
    const std::string col = "u=" + FixedNumber(c.utilization, 2);
    if (m.rows.empty() || m.rows.back() != row) {
      m.rows.push_back(row);
      m.cells.emplace_back();
    }
    if (std::find(m.columns.begin(), m.columns.end(), col) == m.columns.end()) {
      m.columns.push_back(col);
    }
    base::HeatCell cell;
    cell.value = c.roi;
    cell.category = c.decision == RoiDecision::kNoChange ? kNoChange
                    : !c.roi                             ? kUnreachable
                    : *c.roi < 0                         ? kLoss
                    : *c.roi < s.roi_threshold           ? kBelow
                                                         : "";
    cell.text = c.roi ? FixedNumber(*c.roi, 1) : "\u2013";
    cell.subtext = std::string(RoiDecisionName(c.decision));
    cell.tooltip = "scale-out " + FixedNumber(c.scale_out, 2) + ", utilization " +
                   FixedNumber(c.utilization, 2) + ": " + cell.subtext;
    m.cells.back().push_back(std::move(cell));
  }
  page.Chart(base::RenderHeatMap(m));
}

std::string ValuesText(const ParetoView& v, size_t i) {
  std::string out = "row " + std::to_string(i + 1);
  for (size_t k = 0; k < v.objectives.size() && k < v.points[i].size(); ++k) {
    out += (k == 0 ? ": " : ", ") + v.objectives[k].column + " " + FixedNumber(v.points[i][k], 4);
  }
  return out;
}

void ParetoSection(base::HtmlPage& page, const ParetoView& v) {
  const bool two = v.objectives.size() >= 2;
  std::string settings;
  for (const Objective& o : v.objectives) {
    settings +=
        (settings.empty() ? "" : ", ") + o.column + " " + std::string(DirectionName(o.direction));
  }
  page.Heading("Pareto front");
  page.Paragraph(std::to_string(v.front.size()) + " of " + std::to_string(v.points.size()) +
                 " points are on the front (" + settings + ")" +
                 (v.objectives.size() == 3
                      ? "; drawn on the first two, each front point's values in its tooltip"
                      : "") +
                 ".");
  base::ScatterChart c;
  c.title = "Pareto front";
  c.x.label = v.objectives.at(0).column;
  c.y.label = two ? v.objectives[1].column : "row";
  auto y_of = [&](size_t i) { return two ? v.points[i][1] : static_cast<double>(i + 1); };
  base::PointGroup all{"all points", "point", "#9e9e9e", base::Marker::kHollow, 3, false, {}};
  const size_t step =
      std::max<size_t>(1, (v.points.size() + kMaxCloudPoints - 1) / kMaxCloudPoints);
  for (size_t i = 0; i < v.points.size(); i += step) {
    all.points.push_back({v.points[i][0], y_of(i), {}, "", ""});
  }
  base::PointGroup front{
      "front", "front", "#d62728", base::Marker::kFilled, 5, v.objectives.size() == 2, {}};
  for (size_t i : v.front)
    front.points.push_back({v.points[i][0], y_of(i), {}, ValuesText(v, i), ""});
  c.groups = {std::move(all), std::move(front)};
  page.Chart(base::RenderScatterChart(c));
}

}  // namespace

std::string RenderCostHtml(const CostPageInput& in) {
  base::HtmlPage page(in.title);
  if (!in.price_basis.empty()) page.Paragraph(in.price_basis);
  if (in.tco) TcoSection(page, *in.tco);
  if (in.breakdown) BreakdownSection(page, *in.breakdown);
  if (in.roi) RoiSection(page, *in.roi);
  if (in.pareto) ParetoSection(page, *in.pareto);
  if (!in.tco && !in.breakdown && !in.roi && !in.pareto) page.Paragraph("No report was given.");
  return page.Render();
}

}  // namespace seedance::cost
