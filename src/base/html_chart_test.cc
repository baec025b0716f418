#include "seedance/base/html_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "seedance/base/html.h"
#include "seedance/base/testing/text.h"

namespace seedance::base {
namespace {

// The brute-force reference of NiceRangeFor: of every step m x 10^p (m in 1, 2, 2.5, 5; p in
// -8..8) whose snapped range has at most max_ticks ticks, the one with the smallest span, ties
// to the smaller step.
NiceRange BruteForce(double lo, double hi, int max_ticks) {
  NiceRange best;
  double best_span = INFINITY;
  for (int p = -8; p <= 8; ++p) {
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      const double step = m * std::pow(10.0, p);
      const double a = std::floor(lo / step + 1e-9) * step, b = std::ceil(hi / step - 1e-9) * step;
      if (b <= a || std::llround((b - a) / step) + 1 > max_ticks) continue;
      if (b - a < best_span * (1 - 1e-12)) {
        best_span = b - a;
        best.lo = a, best.hi = b, best.step = step;
      }
    }
  }
  return best;
}

TEST(NiceRangeTest, KnownRanges) {
  struct Case {
    double lo, hi;
    double want_lo, want_hi, want_step;
    int digits;
  } cases[] = {
      {47.7, 72.7, 40, 80, 10, 0},  // the simulate page's old ticks
      {0, 1, 0, 1, 0.2, 1},
      {0, 100, 0, 100, 20, 0},
      {0.013, 0.087, 0, 0.1, 0.02, 2},
      {-3, 7, -5, 7.5, 2.5, 1},
      {0, 0.9, 0, 1, 0.2, 1},
      {1, 1, 0.9, 1.1, 0.05, 2},  // a point is widened by 10% each side
      {0, 0, -1, 1, 0.5, 1},
      {0, 12.5, 0, 12.5, 2.5, 1},
      {10, 0, 0, 10, 2, 0},  // a reversed span is the same span
  };
  for (const Case& c : cases) {
    const NiceRange r = NiceRangeFor(c.lo, c.hi);
    EXPECT_NEAR(r.lo, c.want_lo, 1e-12) << c.lo << ".." << c.hi;
    EXPECT_NEAR(r.hi, c.want_hi, 1e-12) << c.lo << ".." << c.hi;
    EXPECT_NEAR(r.step, c.want_step, 1e-12) << c.lo << ".." << c.hi;
    EXPECT_EQ(r.digits, c.digits) << c.lo << ".." << c.hi;
  }
}

TEST(NiceRangeTest, IsTheSmallestNiceRangeOnRandomSpans) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> exponent(-4, 5), unit(-1, 1);
  for (int i = 0; i < 20000; ++i) {
    const double scale = std::pow(10.0, exponent(rng));
    double lo = unit(rng) * scale, hi = unit(rng) * scale;
    if (lo > hi) std::swap(lo, hi);
    if (hi - lo < scale * 1e-6) continue;
    const int max_ticks = 3 + i % 6;
    const NiceRange r = NiceRangeFor(lo, hi, max_ticks);
    const NiceRange want = BruteForce(lo, hi, max_ticks);
    ASSERT_LE(r.lo, lo);
    ASSERT_GE(r.hi, hi);
    ASSERT_LE(r.Ticks().size(), static_cast<size_t>(max_ticks));
    ASSERT_NEAR(r.hi - r.lo, want.hi - want.lo, 1e-9 * scale) << lo << ".." << hi;
    // The ticks are told apart at their digits.
    const auto ticks = r.Ticks();
    for (size_t k = 1; k < ticks.size(); ++k) {
      ASSERT_NE(FixedNumber(ticks[k - 1], r.digits), FixedNumber(ticks[k], r.digits));
    }
  }
}

TEST(ScaleColourTest, InterpolatesInRgbAndClamps) {
  ColourScale s;
  s.lo = 10, s.hi = 20, s.low = "#000000", s.high = "#ff8040";
  EXPECT_EQ(ScaleColour(s, 10), "#000000");
  EXPECT_EQ(ScaleColour(s, 20), "#ff8040");
  EXPECT_EQ(ScaleColour(s, 15), "#804020");  // 127.5 rounds up, 64, 32
  EXPECT_EQ(ScaleColour(s, -5), "#000000");
  EXPECT_EQ(ScaleColour(s, 99), "#ff8040");
}

// The y tick labels and their positions, read off the drawing.
std::map<double, double> YTicks(const std::string& svg) {
  std::map<double, double> out;  // position -> value
  const std::regex tick(
      R"re(<text x="\d+" y="([\d.]+)" text-anchor="end" class="small">([-\d.]+)</text>)re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), tick), end; it != end; ++it) {
    out[std::stod((*it)[1]) - 4] = std::stod((*it)[2]);
  }
  return out;
}

TEST(LineChartTest, PointsReadBackThroughTheAxisTicks) {
  LineChart c;
  c.title = "alloc <&> \"quoted\"";
  c.x.label = "arrived";
  c.y.label = "allocated";
  c.series = {{"fgd", {50, 60, 70, 80}, {48.2, 57.1, 66.0, 72.7}},
              {"seedance", {50, 60, 70, 80}, {48.2, 57.3, 66.4, 73.0}}};
  const std::string svg = RenderLineChart(c);
  EXPECT_NE(svg.find("alloc &lt;&amp;&gt; &quot;quoted&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("<&>"), std::string::npos);
  const auto ticks = YTicks(svg);
  ASSERT_GE(ticks.size(), 2u);
  for (const auto& [pos, value] : ticks) {
    EXPECT_EQ(value, std::round(value / 10) * 10) << "a tick not on a nice step: " << value;
  }
  // Invert the first and last tick's positions: the line's vertices give back the data.
  const double y0 = ticks.begin()->first, v0 = ticks.begin()->second;
  const double y1 = ticks.rbegin()->first, v1 = ticks.rbegin()->second;
  const std::regex line(R"re(<polyline class="series"[^>]* points="([^"]*)")re");
  size_t k = 0;
  for (std::sregex_iterator it(svg.begin(), svg.end(), line), end; it != end; ++it, ++k) {
    std::istringstream points((*it)[1].str());
    std::string pair;
    size_t i = 0;
    while (points >> pair) {
      const double py = std::stod(pair.substr(pair.find(',') + 1));
      const double value = v0 + (py - y0) * (v1 - v0) / (y1 - y0);
      EXPECT_NEAR(value, c.series[k].y[i], 0.05) << c.series[k].name << " " << i;
      ++i;
    }
    EXPECT_EQ(i, 4u);
  }
  EXPECT_EQ(k, 2u);
  // The two series differ in colour and in dash pattern; the legend names both.
  EXPECT_NE(svg.find("stroke-dasharray=\"7 4\""), std::string::npos);
  EXPECT_NE(svg.find(">seedance</text>"), std::string::npos);
}

TEST(ScatterChartTest, DrawsGroupsIntervalsAndReferences) {
  ScatterChart c;
  c.title = "front";
  c.groups.push_back({"all", "point", "#9e9e9e", Marker::kHollow, 3, false, {}});
  for (int i = 0; i < 7; ++i) c.groups[0].points.push_back({double(i), double(i * i), {}, "", ""});
  c.groups.push_back({"front", "front", "", Marker::kFilled, 5, true, {}});
  c.groups[1].points.push_back({1, 1, std::pair{0.5, 1.5}, "a", "before"});
  c.groups[1].points.push_back({3, 9, std::pair{8.0, 11.0}, "b", ""});
  c.references.push_back({6.5, "capacity"});
  const std::string svg = RenderScatterChart(c);
  auto count = [&](const std::string& what) { return testing::CountOccurrences(svg, what); };
  EXPECT_EQ(count("class=\"point\""), 7u);
  EXPECT_EQ(count("class=\"front\""), 2u);
  EXPECT_EQ(count("class=\"interval\""), 2u);
  EXPECT_EQ(count("class=\"front-line\""), 1u);
  EXPECT_EQ(count("class=\"limit\""), 1u);
  EXPECT_NE(svg.find(">before</text>"), std::string::npos);
  // The y axis reaches the highest interval end (11) and the largest point (36).
  const auto ticks = YTicks(svg);
  EXPECT_GE(ticks.begin()->second, 36);
}

TEST(BarChartTest, SegmentsAreProportionalAndTheLimitIsDrawn) {
  BarChart c;
  c.title = "memory";
  c.segment_names = {"states", "activations"};
  c.css_class = "term";
  c.unit_scale = 1e9;
  c.unit = "GB";
  c.limit = ReferenceLine{80e9, "capacity 80 GB"};
  c.rows = {{"before", {30e9, 10e9}, ""}, {"after", {20e9, 40e9}, ""}};
  const std::string svg = RenderBarChart(c);
  const std::regex rect(R"re(<rect class="term" x="([\d.]+)" y="\d+" width="([\d.]+)")re");
  std::vector<double> widths;
  for (std::sregex_iterator it(svg.begin(), svg.end(), rect), end; it != end; ++it) {
    widths.push_back(std::stod((*it)[2]));
  }
  ASSERT_EQ(widths.size(), 4u);
  EXPECT_NEAR(widths[0] / widths[1], 3.0, 0.02);
  EXPECT_NEAR(widths[3] / widths[2], 2.0, 0.02);
  EXPECT_NEAR((widths[2] + widths[3]) / (widths[0] + widths[1]), 1.5, 0.02);
  EXPECT_NE(svg.find("40.00 GB"), std::string::npos);  // the first row's total
  EXPECT_NE(svg.find("60.00 GB"), std::string::npos);
  EXPECT_NE(svg.find("capacity 80 GB"), std::string::npos);
  EXPECT_NE(svg.find(">activations</text>"), std::string::npos);  // the legend
}

TEST(HeatMapTest, CellsTakeTheScaleOrTheirCategoryAndTheScaleIsDrawn) {
  HeatMap m;
  m.title = "use";
  m.rows = {"a", "b"};
  m.columns = {"50%", "60%", "70%"};
  m.scale = {0, 100, "GPU in use", "#ffffff", "#000000", "%"};
  m.categories = {{"unreachable", "#cccccc"}};
  m.cells = {{{0.0, "", "", "", "a0"}, {50.0, "", "", "", "a1"}, {100.0, "", "", "", "a2"}},
             {{std::nullopt, "unreachable", "", "", "b0"}, {25.0, "", "", "", "b1"}}};
  const std::string svg = RenderHeatMap(m);
  const std::regex cell(
      R"re(<rect class="cell"[^>]* fill="(#[0-9a-f]{6})"><title>(\w+)</title>)re");
  std::map<std::string, std::string> fill;
  for (std::sregex_iterator it(svg.begin(), svg.end(), cell), end; it != end; ++it) {
    fill[(*it)[2]] = (*it)[1];
  }
  EXPECT_EQ(fill, (std::map<std::string, std::string>{{"a0", "#ffffff"},
                                                      {"a1", "#808080"},
                                                      {"a2", "#000000"},
                                                      {"b0", "#cccccc"},
                                                      {"b1", "#bfbfbf"}}));
  for (const char* tick : {">0%<", ">20%<", ">100%<", ">GPU in use<", ">unreachable<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
}

}  // namespace
}  // namespace seedance::base
