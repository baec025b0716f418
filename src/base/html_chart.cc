#include "seedance/base/html_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "seedance/base/html.h"

namespace seedance::base {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
// Line series cycle through these dash patterns as well as the colours.
constexpr const char* kDashes[] = {"", "7 4", "2 3", "9 3 2 3"};

std::string Num(double v) { return FixedNumber(v, 1); }

// "#rrggbb" -> its three channels; black for anything else.
struct Rgb {
  int r = 0, g = 0, b = 0;
};
Rgb ParseHex(const std::string& hex) {
  Rgb c;
  if (hex.size() == 7 && hex[0] == '#') {
    unsigned r = 0, g = 0, b = 0;
    if (std::sscanf(hex.c_str() + 1, "%2x%2x%2x", &r, &g, &b) == 3) {
      c = {static_cast<int>(r), static_cast<int>(g), static_cast<int>(b)};
    }
  }
  return c;
}

std::string RgbHex(Rgb c) {
  char out[8];
  std::snprintf(out, sizeof(out), "#%02x%02x%02x", c.r, c.g, c.b);
  return out;
}

// Text written on a fill: white on dark fills, the page's ink on light ones.
const char* InkOn(const std::string& fill) {
  const Rgb c = ParseHex(fill);
  return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b < 140 ? "#ffffff" : "#222222";
}

std::string TickText(double v, const NiceRange& r, const std::string& suffix) {
  const double snapped = std::fabs(v) < r.step * 1e-9 ? 0.0 : v;  // no "-0"
  return FixedNumber(snapped, r.digits) + suffix;
}

// The extent of some values, widened by an axis' `include`; [0, 1] when there are none.
struct Extent {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  NiceRange Range(const Axis& axis) {
    for (double v : axis.include) Add(v);
    if (!(lo <= hi)) lo = 0, hi = 1;
    return NiceRangeFor(lo, hi);
  }
};

// The plot area of a chart with two linear axes, and the drawing of its frame.
struct Plot {
  int w = 760, h = 360, left = 70, right = 24, top = 40, bottom = 50;
  NiceRange xr, yr;
  double X(double v) const { return left + (w - left - right) * (v - xr.lo) / (xr.hi - xr.lo); }
  double Y(double v) const { return top + (h - top - bottom) * (yr.hi - v) / (yr.hi - yr.lo); }

  std::string Frame(const std::string& title, const Axis& x, const Axis& y) const {
    std::ostringstream s;
    s << SvgOpen(w, h, title);
    s << "<text x=\"" << left << "\" y=\"20\" class=\"title\">" << HtmlEscape(title) << "</text>\n";
    for (double t : yr.Ticks()) {
      s << "<line class=\"grid\" x1=\"" << left << "\" x2=\"" << w - right << "\" y1=\""
        << Num(Y(t)) << "\" y2=\"" << Num(Y(t)) << "\"/><text x=\"" << left - 6 << "\" y=\""
        << Num(Y(t) + 4) << "\" text-anchor=\"end\" class=\"small\">"
        << HtmlEscape(TickText(t, yr, y.suffix)) << "</text>\n";
    }
    for (double t : xr.Ticks()) {
      s << "<line class=\"grid\" x1=\"" << Num(X(t)) << "\" x2=\"" << Num(X(t)) << "\" y1=\"" << top
        << "\" y2=\"" << h - bottom << "\"/><text x=\"" << Num(X(t)) << "\" y=\"" << h - bottom + 16
        << "\" text-anchor=\"middle\" class=\"small\">" << HtmlEscape(TickText(t, xr, x.suffix))
        << "</text>\n";
    }
    s << "<line class=\"axis\" x1=\"" << left << "\" x2=\"" << w - right << "\" y1=\"" << h - bottom
      << "\" y2=\"" << h - bottom << "\"/><line class=\"axis\" x1=\"" << left << "\" x2=\"" << left
      << "\" y1=\"" << top << "\" y2=\"" << h - bottom << "\"/>\n";
    const int mid_x = (left + w - right) / 2, mid_y = (top + h - bottom) / 2;
    s << "<text x=\"" << mid_x << "\" y=\"" << h - 10 << "\" text-anchor=\"middle\">"
      << HtmlEscape(x.label) << "</text>\n";
    s << "<text x=\"16\" y=\"" << mid_y << "\" transform=\"rotate(-90 16 " << mid_y
      << ")\" text-anchor=\"middle\">" << HtmlEscape(y.label) << "</text>\n";
    return s.str();
  }

  std::string NoData() const {
    return "<text x=\"" + std::to_string((left + w - right) / 2) + "\" y=\"" +
           std::to_string((top + h - bottom) / 2) + "\" text-anchor=\"middle\">no data</text>\n";
  }
};

// A legend entry at (x, y): a sample line (or marker) and the name.
// The k-th line series' marker at (x, y): a circle, a square, a diamond or a triangle (hollow
// after the first four), so that series lying on each other stay told apart by their points.
std::string SeriesMarker(size_t k, double x, double y, const char* colour,
                         const std::string& title) {
  std::ostringstream s;
  const double r = 3.5;
  const bool hollow = k % 8 >= 4;
  const std::string paint = hollow ? std::string("fill=\"white\" stroke=\"") + colour + "\""
                                   : std::string("fill=\"") + colour + "\"";
  switch (k % 4) {
    case 0:
      s << "<circle class=\"marker\" cx=\"" << Num(x) << "\" cy=\"" << Num(y) << "\" r=\"" << r
        << "\" " << paint << ">";
      break;
    case 1:
      s << "<rect class=\"marker\" x=\"" << Num(x - r) << "\" y=\"" << Num(y - r) << "\" width=\""
        << 2 * r << "\" height=\"" << 2 * r << "\" " << paint << ">";
      break;
    case 2:
      s << "<polygon class=\"marker\" points=\"" << Num(x) << "," << Num(y - r - 1) << " "
        << Num(x + r + 1) << "," << Num(y) << " " << Num(x) << "," << Num(y + r + 1) << " "
        << Num(x - r - 1) << "," << Num(y) << "\" " << paint << ">";
      break;
    default:
      s << "<polygon class=\"marker\" points=\"" << Num(x) << "," << Num(y - r - 1) << " "
        << Num(x + r + 1) << "," << Num(y + r) << " " << Num(x - r - 1) << "," << Num(y + r)
        << "\" " << paint << ">";
  }
  s << "<title>" << HtmlEscape(title) << "</title></"
    << (k % 4 == 0   ? "circle"
        : k % 4 == 1 ? "rect"
                     : "polygon")
    << ">";
  return s.str();
}

std::string LegendLine(int x, int y, const char* colour, const char* dash, const std::string& name,
                       size_t k) {
  std::ostringstream s;
  s << "<line x1=\"" << x << "\" x2=\"" << x + 24 << "\" y1=\"" << y - 4 << "\" y2=\"" << y - 4
    << "\" stroke=\"" << colour << "\" stroke-width=\"3\"";
  if (*dash != '\0') s << " stroke-dasharray=\"" << dash << "\"";
  s << "/>" << SeriesMarker(k, x + 12, y - 4, colour, name) << "<text x=\"" << x + 30 << "\" y=\""
    << y << "\">" << HtmlEscape(name) << "</text>\n";
  return s.str();
}

std::string MarkerAttributes(const PointGroup& g, const std::string& colour) {
  switch (g.marker) {
    case Marker::kHollow:
      return "fill=\"none\" stroke=\"" + colour + "\"";
    case Marker::kRing:
      return "fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"3\"";
    case Marker::kFilled:
      break;
  }
  return "fill=\"" + colour + "\"";
}

int LabelWidth(const std::vector<std::string>& labels, int lo, int hi) {
  size_t most = 0;
  for (const std::string& l : labels) most = std::max(most, l.size());
  return std::clamp(static_cast<int>(most) * 7 + 12, lo, hi);
}

}  // namespace

std::vector<double> NiceRange::Ticks() const {
  std::vector<double> out;
  const auto n = static_cast<int>(std::llround((hi - lo) / step));
  for (int i = 0; i <= n; ++i) out.push_back(lo + step * i);
  return out;
}

NiceRange NiceRangeFor(double lo, double hi, int max_ticks) {
  max_ticks = std::max(max_ticks, 2);
  if (hi < lo) std::swap(lo, hi);
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1.0 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  // Of the steps near the raw one, the one whose snapped range is tightest (ties: the finer).
  const double raw = (hi - lo) / (max_ticks - 1);
  const int power = static_cast<int>(std::floor(std::log10(raw)));
  constexpr double kMultiples[] = {1, 2, 2.5, 5};
  NiceRange best;
  double best_span = std::numeric_limits<double>::infinity();
  for (int p = power - 1; p <= power + 2; ++p) {
    for (double m : kMultiples) {
      const double step = m * std::pow(10.0, p);
      const double nlo = std::floor(lo / step + 1e-9) * step;
      const double nhi = std::ceil(hi / step - 1e-9) * step;
      if (std::llround((nhi - nlo) / step) + 1 > max_ticks) continue;
      if (nhi - nlo < best_span * (1 - 1e-12)) {
        best_span = nhi - nlo;
        best.lo = nlo;
        best.hi = nhi;
        best.step = step;
        best.digits = std::max(0, (m == 2.5 ? 1 : 0) - p);
      }
    }
  }
  return best;
}

const char* SeriesColour(size_t i) { return kPalette[i % std::size(kPalette)]; }

std::string ScaleColour(const ColourScale& scale, double v) {
  const double t =
      scale.hi > scale.lo ? std::clamp((v - scale.lo) / (scale.hi - scale.lo), 0.0, 1.0) : 1.0;
  const Rgb a = ParseHex(scale.low), b = ParseHex(scale.high);
  auto mix = [t](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * t)); };
  return RgbHex({mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)});
}

std::string RenderLineChart(const LineChart& c) {
  Plot p;
  p.right = 180;  // the legend
  Extent x, y;
  for (const LineSeries& s : c.series) {
    for (double v : s.x) x.Add(v);
    for (double v : s.y) y.Add(v);
  }
  p.xr = x.Range(c.x);
  p.yr = y.Range(c.y);
  std::ostringstream s;
  s << p.Frame(c.title, c.x, c.y);
  if (c.series.empty()) s << p.NoData();
  for (size_t k = 0; k < c.series.size(); ++k) {
    const LineSeries& line = c.series[k];
    const char* dash = kDashes[k % std::size(kDashes)];
    s << "<polyline class=\"series\" fill=\"none\" stroke=\"" << SeriesColour(k)
      << "\" stroke-width=\"2\"";
    if (*dash != '\0') s << " stroke-dasharray=\"" << dash << "\"";
    s << " points=\"";
    for (size_t i = 0; i < std::min(line.x.size(), line.y.size()); ++i) {
      s << Num(p.X(line.x[i])) << "," << Num(p.Y(line.y[i])) << " ";
    }
    s << "\"><title>" << HtmlEscape(line.name) << "</title></polyline>\n";
    for (size_t i = 0; i < std::min(line.x.size(), line.y.size()); ++i) {
      s << SeriesMarker(k, p.X(line.x[i]), p.Y(line.y[i]), SeriesColour(k),
                        line.name + ": " + FixedNumber(line.y[i], 2));
    }
    s << "\n"
      << LegendLine(p.w - p.right + 14, p.top + 12 + 20 * static_cast<int>(k), SeriesColour(k),
                    dash, line.name, k);
  }
  s << "</svg>\n";
  return s.str();
}

std::string RenderScatterChart(const ScatterChart& c) {
  Plot p;
  const bool legend = c.groups.size() > 1;
  if (legend) p.right = 180;
  Extent x, y;
  for (const PointGroup& g : c.groups) {
    for (const ChartPoint& pt : g.points) {
      x.Add(pt.x);
      y.Add(pt.y);
      if (pt.y_interval) y.Add(pt.y_interval->first), y.Add(pt.y_interval->second);
    }
  }
  for (const ReferenceLine& r : c.references) x.Add(r.x);
  p.xr = x.Range(c.x);
  p.yr = y.Range(c.y);
  std::ostringstream s;
  s << p.Frame(c.title, c.x, c.y);
  size_t drawn = 0;
  for (const PointGroup& g : c.groups) drawn += g.points.size();
  if (drawn == 0) s << p.NoData();
  for (const ReferenceLine& r : c.references) {
    s << "<line class=\"limit\" x1=\"" << Num(p.X(r.x)) << "\" x2=\"" << Num(p.X(r.x)) << "\" y1=\""
      << p.top << "\" y2=\"" << p.h - p.bottom << "\"/><text x=\"" << Num(p.X(r.x) - 4) << "\" y=\""
      << p.top + 12 << "\" text-anchor=\"end\" class=\"small\">" << HtmlEscape(r.label)
      << "</text>\n";
  }
  for (size_t k = 0; k < c.groups.size(); ++k) {
    const PointGroup& g = c.groups[k];
    const std::string colour = g.colour.empty() ? SeriesColour(k) : g.colour;
    for (const ChartPoint& pt : g.points) {
      if (!pt.y_interval) continue;
      s << "<line class=\"interval\" x1=\"" << Num(p.X(pt.x)) << "\" x2=\"" << Num(p.X(pt.x))
        << "\" y1=\"" << Num(p.Y(pt.y_interval->first)) << "\" y2=\""
        << Num(p.Y(pt.y_interval->second)) << "\"><title>" << HtmlEscape(pt.tooltip)
        << " (interval " << FixedNumber(pt.y_interval->first, p.yr.digits + 1) << " to "
        << FixedNumber(pt.y_interval->second, p.yr.digits + 1) << ")</title></line>\n";
    }
    if (g.staircase && g.points.size() > 1) {
      std::vector<std::pair<double, double>> sorted;
      for (const ChartPoint& pt : g.points) sorted.emplace_back(pt.x, pt.y);
      std::sort(sorted.begin(), sorted.end());
      s << "<polyline class=\"" << HtmlEscape(g.css_class) << "-line\" fill=\"none\" stroke=\""
        << colour << "\" stroke-width=\"1.5\" points=\"";
      for (auto [px, py] : sorted) s << Num(p.X(px)) << "," << Num(p.Y(py)) << " ";
      s << "\"/>\n";
    }
    const std::string attributes = MarkerAttributes(g, colour);
    for (const ChartPoint& pt : g.points) {
      s << "<circle class=\"" << HtmlEscape(g.css_class) << "\" cx=\"" << Num(p.X(pt.x))
        << "\" cy=\"" << Num(p.Y(pt.y)) << "\" r=\"" << Num(g.radius) << "\" " << attributes;
      if (pt.tooltip.empty()) {
        s << "/>\n";
      } else {
        s << "><title>" << HtmlEscape(pt.tooltip) << "</title></circle>\n";
      }
      if (!pt.label.empty()) {
        s << "<text x=\"" << Num(p.X(pt.x) + g.radius + 4) << "\" y=\""
          << Num(p.Y(pt.y) - g.radius - 2) << "\">" << HtmlEscape(pt.label) << "</text>\n";
      }
    }
    if (legend) {
      const int ly = p.top + 12 + 20 * static_cast<int>(k), lx = p.w - p.right + 14;
      s << "<circle cx=\"" << lx + 10 << "\" cy=\"" << ly - 4 << "\" r=\"" << Num(g.radius) << "\" "
        << attributes << "/><text x=\"" << lx + 30 << "\" y=\"" << ly << "\">" << HtmlEscape(g.name)
        << "</text>\n";
    }
  }
  s << "</svg>\n";
  return s.str();
}

std::string RenderBarChart(const BarChart& c) {
  std::vector<std::string> labels;
  double top = c.limit ? c.limit->x : 0;
  for (const BarRow& r : c.rows) {
    labels.push_back(r.label);
    double sum = 0;
    for (double v : r.segments) sum += std::max(0.0, v);
    top = std::max(top, sum);
  }
  const NiceRange range = NiceRangeFor(0, top > 0 ? top / c.unit_scale : 1);
  const double full = range.hi * c.unit_scale;  // the scale's end, in the values' units
  const int w = 760, left = LabelWidth(labels, 60, 220), right = 120, row_h = 32, top_y = 34;
  const int bar = w - left - right;
  const bool legend = c.segment_names.size() > 1;
  const int axis_y = top_y + row_h * static_cast<int>(c.rows.size()) + 4;
  // The legend flows in columns of 220 units.
  const int legend_columns = std::max(1, (w - left - 10) / 220);
  const int legend_rows =
      legend ? (static_cast<int>(c.segment_names.size()) + legend_columns - 1) / legend_columns : 0;
  const int h = axis_y + 40 + 22 * legend_rows;
  auto X = [&](double v) { return left + bar * v / full; };
  std::ostringstream s;
  s << SvgOpen(w, h, c.title);
  s << "<text x=\"4\" y=\"20\" class=\"title\">" << HtmlEscape(c.title) << "</text>\n";
  for (double t : range.Ticks()) {
    const double x = X(t * c.unit_scale);
    s << "<line class=\"grid\" x1=\"" << Num(x) << "\" x2=\"" << Num(x) << "\" y1=\"" << top_y - 4
      << "\" y2=\"" << axis_y << "\"/><text x=\"" << Num(x) << "\" y=\"" << axis_y + 14
      << "\" text-anchor=\"middle\" class=\"small\">" << TickText(t, range, "") << "</text>\n";
  }
  s << "<text x=\"" << left + bar / 2 << "\" y=\"" << axis_y + 32 << "\" text-anchor=\"middle\">"
    << HtmlEscape(c.unit) << "</text>\n";
  int y = top_y;
  for (size_t row = 0; row < c.rows.size(); ++row, y += row_h) {
    const BarRow& r = c.rows[row];
    s << "<text x=\"" << left - 8 << "\" y=\"" << y + 16 << "\" text-anchor=\"end\">"
      << HtmlEscape(r.label) << "</text>\n";
    double x = left, sum = 0;
    for (size_t i = 0; i < r.segments.size(); ++i) {
      const double v = std::max(0.0, r.segments[i]);
      const double width = bar * v / full;
      sum += v;
      if (width <= 0) continue;
      // Stacked segments take the legend's colours; single bars one colour per row.
      const char* colour = SeriesColour(legend ? i : row);
      const std::string name = i < c.segment_names.size() ? c.segment_names[i] : r.label;
      s << "<rect class=\"" << HtmlEscape(c.css_class) << "\" x=\"" << Num(x) << "\" y=\"" << y
        << "\" width=\"" << Num(width) << "\" height=\"22\" fill=\"" << colour << "\"><title>"
        << HtmlEscape(name) << ": " << FixedNumber(v / c.unit_scale, c.digits) << " "
        << HtmlEscape(c.unit) << "</title></rect>\n";
      x += width;
    }
    const std::string note =
        r.note.empty() ? FixedNumber(sum / c.unit_scale, c.digits) + " " + c.unit : r.note;
    s << "<text x=\"" << Num(x + 6) << "\" y=\"" << y + 16 << "\" class=\"small\">"
      << HtmlEscape(note) << "</text>\n";
  }
  if (c.limit) {
    const double lx = X(c.limit->x);
    s << "<line class=\"limit\" x1=\"" << Num(lx) << "\" x2=\"" << Num(lx) << "\" y1=\""
      << top_y - 4 << "\" y2=\"" << axis_y << "\"/><text x=\"" << Num(lx) << "\" y=\"" << top_y - 8
      << "\" text-anchor=\"middle\" class=\"small\">" << HtmlEscape(c.limit->label) << "</text>\n";
  }
  if (legend) {
    for (size_t i = 0; i < c.segment_names.size(); ++i) {
      const int lx = left + 220 * (static_cast<int>(i) % legend_columns);
      const int ly = axis_y + 54 + 22 * (static_cast<int>(i) / legend_columns);
      s << "<rect x=\"" << lx << "\" y=\"" << ly - 11 << "\" width=\"12\" height=\"12\" fill=\""
        << SeriesColour(i) << "\"/><text x=\"" << lx + 18 << "\" y=\"" << ly << "\">"
        << HtmlEscape(c.segment_names[i]) << "</text>\n";
    }
  }
  s << "</svg>\n";
  return s.str();
}

std::string RenderHeatMap(const HeatMap& m) {
  const int left = LabelWidth(m.rows, 40, 240), top = 44;
  const int cols = static_cast<int>(m.columns.size()), rows = static_cast<int>(m.rows.size());
  const int map_bottom = top + m.cell_height * rows;
  const int legend_y = map_bottom + 52 + (m.column_title.empty() ? 0 : 16);
  const int strip = 200;  // the colour scale's width
  int legend_w = left + strip + 24;
  for (const Category& cat : m.categories) legend_w += 24 + static_cast<int>(cat.name.size()) * 6;
  const int w = std::max(left + m.cell_width * cols + 20, legend_w + 10);
  const int h = legend_y + 44;
  std::ostringstream s;
  s << SvgOpen(w, h, m.title);
  s << "<text x=\"4\" y=\"18\" class=\"title\">" << HtmlEscape(m.title) << "</text>\n";
  if (!m.row_title.empty()) {
    s << "<text x=\"4\" y=\"" << top - 8 << "\" class=\"small\">" << HtmlEscape(m.row_title)
      << "</text>\n";
  }
  const bool big = m.cell_height >= 30;
  for (int r = 0; r < rows; ++r) {
    const int y = top + m.cell_height * r;
    if (r % std::max(1, m.row_label_every) == 0) {
      s << "<text x=\"" << left - 6 << "\" y=\"" << y + m.cell_height / 2 + 4
        << "\" text-anchor=\"end\" class=\"small\">" << HtmlEscape(m.rows[static_cast<size_t>(r)])
        << "</text>\n";
    }
    const auto& line = r < static_cast<int>(m.cells.size()) ? m.cells[static_cast<size_t>(r)]
                                                            : std::vector<HeatCell>{};
    for (int k = 0; k < cols && k < static_cast<int>(line.size()); ++k) {
      const HeatCell& cell = line[static_cast<size_t>(k)];
      std::string fill = "#ffffff";
      for (const Category& cat : m.categories) {
        if (cat.name == cell.category) fill = cat.colour;
      }
      if (cell.category.empty() && cell.value) fill = ScaleColour(m.scale, *cell.value);
      const int x = left + m.cell_width * k;
      s << "<rect class=\"cell\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << m.cell_width - 1
        << "\" height=\"" << m.cell_height - 1 << "\" fill=\"" << fill << "\"><title>"
        << HtmlEscape(cell.tooltip) << "</title></rect>\n";
      if (big && !cell.text.empty()) {
        const char* ink = InkOn(fill);
        s << "<text x=\"" << x + m.cell_width / 2 << "\" y=\"" << y + m.cell_height / 2 - 2
          << "\" text-anchor=\"middle\" style=\"fill:" << ink << "\">" << HtmlEscape(cell.text)
          << "</text><text x=\"" << x + m.cell_width / 2 << "\" y=\"" << y + m.cell_height / 2 + 12
          << "\" text-anchor=\"middle\" class=\"small\" style=\"fill:" << ink << "\">"
          << HtmlEscape(cell.subtext) << "</text>\n";
      }
    }
  }
  for (int k = 0; k < cols; ++k) {
    s << "<text x=\"" << left + m.cell_width * k + m.cell_width / 2 << "\" y=\"" << map_bottom + 14
      << "\" text-anchor=\"middle\" class=\"small\">"
      << HtmlEscape(m.columns[static_cast<size_t>(k)]) << "</text>\n";
  }
  if (!m.column_title.empty()) {
    s << "<text x=\"" << left + m.cell_width * cols / 2 << "\" y=\"" << map_bottom + 30
      << "\" text-anchor=\"middle\">" << HtmlEscape(m.column_title) << "</text>\n";
  }
  // The colour scale: a strip of 20 steps from lo to hi, with nice ticks inside it.
  const int strip_x = left;
  s << "<text x=\"" << strip_x << "\" y=\"" << legend_y - 6 << "\" class=\"small\">"
    << HtmlEscape(m.scale.label) << "</text>\n";
  for (int i = 0; i < 20; ++i) {
    const double v = m.scale.lo + (m.scale.hi - m.scale.lo) * (i + 0.5) / 20;
    s << "<rect x=\"" << strip_x + strip * i / 20 << "\" y=\"" << legend_y << "\" width=\""
      << strip / 20 + 1 << "\" height=\"12\" fill=\"" << ScaleColour(m.scale, v) << "\"/>";
  }
  s << "\n";
  const NiceRange range = NiceRangeFor(m.scale.lo, m.scale.hi);
  const double span = m.scale.hi > m.scale.lo ? m.scale.hi - m.scale.lo : 1;
  for (double t : range.Ticks()) {
    if (t < m.scale.lo - 1e-9 * span || t > m.scale.hi + 1e-9 * span) continue;
    const double x = strip_x + strip * (t - m.scale.lo) / span;
    s << "<line class=\"axis\" x1=\"" << Num(x) << "\" x2=\"" << Num(x) << "\" y1=\""
      << legend_y + 12 << "\" y2=\"" << legend_y + 16 << "\"/><text x=\"" << Num(x) << "\" y=\""
      << legend_y + 28 << "\" text-anchor=\"middle\" class=\"small\">"
      << HtmlEscape(TickText(t, range, m.scale.suffix)) << "</text>\n";
  }
  int cx = strip_x + strip + 24;
  for (const Category& cat : m.categories) {
    s << "<rect x=\"" << cx << "\" y=\"" << legend_y << "\" width=\"12\" height=\"12\" fill=\""
      << cat.colour << "\" stroke=\"#999\"/><text x=\"" << cx + 16 << "\" y=\"" << legend_y + 10
      << "\" class=\"small\">" << HtmlEscape(cat.name) << "</text>\n";
    cx += 24 + static_cast<int>(cat.name.size()) * 6;
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace seedance::base
