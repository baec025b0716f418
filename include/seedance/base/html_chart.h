// The charts of Seedance's HTML pages (the page kit; the page itself is html_page.h): inline SVG
// drawn from typed structs, never from a report read back. Every chart is a fixed-size drawing
// (its viewBox) that the page's CSS scales to the width of the page.
//
// One vocabulary for every page:
//   - axes are linear, with "nice" ticks (1, 2, 2.5 or 5 times a power of ten: 40 / 60 / 80,
//     never 47.7 / 60.2 / 72.7) covering the data, and a label;
//   - series and point groups take the palette's colours in order (SeriesColour), line series a
//     dash pattern and a marker shape at each point as well (circle, square, diamond, triangle),
//     so lines that lie on each other stay told apart; every chart with more than one series
//     has a legend;
//   - a heat map always draws its colour scale, with ticks, and the swatches of any cell
//     categories (cells that carry a category colour rather than a value).
// CSS classes the pages and their tests rely on: `series` (one polyline per line series),
// `marker` (a line series' point),
// a point group's own class on each of its markers, `interval` (a point's interval bar),
// `limit` (a reference line), `cell` (a heat-map cell), and a bar chart's class on each segment.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace seedance::base {

// A linear range with evenly spaced nice ticks: lo and hi are ticks, step is 1, 2, 2.5 or 5
// times a power of ten, and `digits` decimals tell the ticks apart.
struct NiceRange {
  double lo = 0, hi = 1, step = 0.25;
  int digits = 2;
  std::vector<double> Ticks() const;
};

// The smallest nice range with at most `max_ticks` ticks (at least 2) that contains
// [lo, hi]; an empty or reversed span is widened around its value first. lo and hi must be
// finite.
NiceRange NiceRangeFor(double lo, double hi, int max_ticks = 6);

struct Axis {
  std::string label;
  // The range to cover beside the data's (for instance 0, or a capacity to show).
  std::vector<double> include;
  std::string suffix;  // after each tick's number ("%")
};

// The i-th colour of the palette (a qualitative palette readable on white, 8 colours, cycled).
const char* SeriesColour(size_t i);

struct LineSeries {
  std::string name;
  std::vector<double> x, y;  // equal lengths
};

struct LineChart {
  std::string title;
  Axis x, y;
  std::vector<LineSeries> series;
};

struct ChartPoint {
  double x = 0, y = 0;
  std::optional<std::pair<double, double>> y_interval;  // drawn as a bar through the point
  std::string tooltip;
  std::string label;  // written beside the marker
};

enum class Marker { kHollow, kFilled, kRing };

struct PointGroup {
  std::string name;       // in the legend
  std::string css_class;  // on each marker
  std::string colour;     // "#rrggbb"; empty: the palette's, by the group's position
  Marker marker = Marker::kFilled;
  double radius = 4;
  bool staircase = false;  // joins the points in x order (a two-objective Pareto front)
  std::vector<ChartPoint> points;
};

// A vertical line across the plot at `x` (a capacity, a budget), dashed, with its label.
struct ReferenceLine {
  double x = 0;
  std::string label;
};

struct ScatterChart {
  std::string title;
  Axis x, y;
  std::vector<PointGroup> groups;  // drawn in order: later groups on top
  std::vector<ReferenceLine> references;
};

// Horizontal stacked bars on one scale: each row's segments in the chart's segment order.
struct BarRow {
  std::string label;
  std::vector<double> segments;
  std::string note;  // after the bar; empty: the row's total in the chart's unit
};

struct BarChart {
  std::string title;
  std::vector<std::string> segment_names;  // the legend (one segment: no legend)
  std::string css_class = "bar";
  double unit_scale = 1;  // values are divided by it for labels
  std::string unit;       // "GB", "s", "USD"
  int digits = 2;
  std::optional<ReferenceLine> limit;  // in the values' own scale
  std::vector<BarRow> rows;
};

// A heat-map cell: a value coloured on the chart's scale, or a category's colour.
struct HeatCell {
  std::optional<double> value;
  std::string category;  // a name of HeatMap::categories: its colour, not the scale's
  std::string text;      // written in the cell (big cells only)
  std::string subtext;
  std::string tooltip;
};

struct ColourScale {
  double lo = 0, hi = 1;
  std::string label;
  std::string low = "#f7fbff", high = "#08306b";  // "#rrggbb"
  std::string suffix;                             // after each tick's number
};

struct Category {
  std::string name, colour;
};

struct HeatMap {
  std::string title;
  std::string row_title, column_title;
  std::vector<std::string> rows, columns;    // labels
  std::vector<std::vector<HeatCell>> cells;  // [row][column]
  ColourScale scale;
  std::vector<Category> categories;
  int cell_width = 60, cell_height = 14;
  int row_label_every = 1;  // label every n-th row (dense maps)
};

// The colour of `v` on the scale (linear in RGB between low and high; clamped).
std::string ScaleColour(const ColourScale& scale, double v);

// Each returns one <svg> element and a newline. A chart with no data draws its axes and says
// "no data".
std::string RenderLineChart(const LineChart& chart);
std::string RenderScatterChart(const ScatterChart& chart);
std::string RenderBarChart(const BarChart& chart);
std::string RenderHeatMap(const HeatMap& map);

}  // namespace seedance::base
