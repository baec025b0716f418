#include "seedance/base/report.h"

#include <gtest/gtest.h>

namespace seedance::base {
namespace {

TEST(ReportTest, JsonKeepsInsertionOrder) {
  Report r;
  r["zeta"] = 1;
  r["alpha"] = 2;
  EXPECT_EQ(RenderJson(r), "{\n  \"zeta\": 1,\n  \"alpha\": 2\n}\n");
}

TEST(ReportTest, TableRendersSectionsListsAndUnits) {
  Report r;
  r["name"] = "demo";
  r["model"]["layers"] = 32;
  r["model"]["weight_bytes"] = int64_t{3} * 1024 * 1024 * 1024;
  r["model"]["ratio"] = 0.25;
  r["gpus"] = Report::array(
      {Report{{"id", "H100"}, {"memory_gb", 80}}, Report{{"id", "L4"}, {"memory_gb", 24}}});
  r["tags"] = Report::array({"a", "b"});
  const std::string expected =
      "name  demo\n"
      "\n"
      "MODEL\n"
      "  layers        32\n"
      "  weight_bytes  3,221,225,472 (3 GiB)\n"
      "  ratio         0.25\n"
      "\n"
      "GPUS\n"
      "  ID    MEMORY GB\n"
      "  H100  80\n"
      "  L4    24\n"
      "\n"
      "tags  a, b\n";
  EXPECT_EQ(RenderTable(r), expected);
}

// A figure with its interval beside it: {"x": v, "interval": {"x": [lo, hi]}} shows
// "v (lo–hi)"; what the interval holds besides pairs for its siblings stays under it.
TEST(ReportTest, IntervalsFoldIntoTheirFigures) {
  Report r;
  r["before"]["step_time_s"] = 1.9;
  r["before"]["tokens_per_s_per_gpu"] = 7148.83;
  r["before"]["memory_bytes_per_gpu"] = int64_t{3} << 30;
  r["before"]["interval"] = {{"step_time_s", {1.6, 2.3}},
                             {"tokens_per_s_per_gpu", {4721.3, 9262.4}},
                             {"memory_bytes_per_gpu", {double(int64_t{2} << 30), 4294967296.0}},
                             {"orphan", {1, 2}},
                             {"level", 0.9}};
  const std::string expected =
      "BEFORE\n"
      "  step_time_s           1.9 (1.6–2.3)\n"
      "  tokens_per_s_per_gpu  7148.83 (4,721–9,262)\n"
      "  memory_bytes_per_gpu  3,221,225,472 (2 GiB–4 GiB)\n"
      "  interval:\n"
      "    orphan  1, 2\n"
      "    level   0.9\n";
  EXPECT_EQ(RenderTable(r), expected);
  // JSON keeps the interval as it is.
  EXPECT_EQ(Report::parse(RenderJson(r)), r);
}

TEST(ReportTest, SentencesGetALineEach) {
  Report r;
  r["reasons"] = Report::array({"tensor 1: faster", "zero_stage 3: fits"});
  r["inner"]["notes"] = Report::array({"one note", "another note"});
  r["words"] = Report::array({"a", "b"});  // no spaces: still joined
  EXPECT_EQ(RenderTable(r),
            "REASONS\n"
            "  - tensor 1: faster\n"
            "  - zero_stage 3: fits\n"
            "\n"
            "INNER\n"
            "  notes:\n"
            "    - one note\n"
            "    - another note\n"
            "\n"
            "words  a, b\n");
}

TEST(ReportTest, TableFlattensNestedObjectsAndSetsAsideLongLists) {
  Report r;
  r["runs"] = Report::array(
      {Report{{"policy", "fgd"},
              {"delay_s", {{"p50", 1200}, {"p99", 35000}}},
              {"pid", 123456},
              {"groups", Report::array({Report{{"group", "a"}, {"jobs", 1500}}})},
              {"use", Report::array({1, 2, 3, 4, 5, 6, 7, 8, 9})}},
       Report{{"policy", "bestfit"}, {"delay_s", {{"p50", 0}, {"p99", 9}}}, {"pid", 7}}});
  const std::string expected =
      "RUNS\n"
      "  POLICY   DELAY S.P50  DELAY S.P99  PID\n"
      "  fgd      1,200        35,000       123456\n"
      "  bestfit  0            9            7\n"
      "\n"
      "  fgd: GROUPS\n"
      "    GROUP  JOBS\n"
      "    a      1,500\n"
      "\n"
      "  fgd: USE\n"
      "    1, 2, 3, 4, 5, 6, 7, 8, 9\n";
  EXPECT_EQ(RenderTable(r), expected);
}

// The default table fits 100 columns: columns past the width are left to -o wide, in the
// report's order; a column the same in every row (of three or more) is said once; long cells are
// cut; sentences wrap under their dash.
TEST(ReportTest, DefaultTableFitsTheWidth) {
  Report rows = Report::array();
  for (int i = 0; i < 3; ++i) {
    Report row;
    row["layout"] = "tp" + std::to_string(i + 1);
    row["power_w"] = 700;
    for (int c = 0; c < 12; ++c) row["metric_" + std::to_string(c)] = 1000000 * (i + 1) + c;
    row["note"] = std::string(60, 'x');
    rows.push_back(row);
  }
  Report r;
  r["verdict"] = Report::array({"fits: " + std::string(40, 'a') + " " + std::string(70, 'b')});
  r["alternatives"] = rows;
  const std::string table = RenderTable(r);
  size_t lines = 0;
  for (size_t start = 0, end; start < table.size(); start = end + 1) {
    end = table.find('\n', start);
    EXPECT_LE(DisplayWidth(table.substr(start, end - start)), 100u) << table;
    ++lines;
  }
  EXPECT_NE(table.find("  - fits: " + std::string(40, 'a') + "\n    " + std::string(70, 'b')),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("  LAYOUT  METRIC 0   METRIC 1"), std::string::npos) << table;
  EXPECT_EQ(table.find("POWER W  "), std::string::npos) << table;
  EXPECT_NE(table.find("  every row: POWER W 700, NOTE xxx"), std::string::npos) << table;
  EXPECT_NE(table.find("more columns: -o wide)"), std::string::npos) << table;
  // Wide: every column in full, nothing folded.
  const std::string wide = Render(r, OutputFormat::kWide);
  EXPECT_NE(wide.find("POWER W"), std::string::npos);
  EXPECT_NE(wide.find(std::string(60, 'x')), std::string::npos);
  EXPECT_EQ(wide.find("-o wide"), std::string::npos);
}

TEST(ReportTest, VerboseSectionsAreNamedNotShown) {
  Report r;
  r["verdict"] = Report::array({"it fits"});
  r["spec"]["model"] = "llama";
  r["derived"]["parameters"] = 7;
  TableOptions options;
  options.verbose_sections = {"spec", "derived"};
  EXPECT_EQ(RenderTable(r, options), "VERDICT\n  - it fits\n\n(--verbose adds SPEC and DERIVED)\n");
  options.verbose = true;
  EXPECT_NE(RenderTable(r, options).find("SPEC\n  model  llama\n"), std::string::npos);
}

TEST(ReportTest, DisplayWidthCountsCodePoints) {
  EXPECT_EQ(DisplayWidth("1.6–2.3"), 7u);
  EXPECT_EQ(DisplayWidth("ab…"), 3u);
  EXPECT_EQ(DisplayWidth(""), 0u);
}

TEST(ReportTest, HumanBytes) {
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(80.0 * (1ull << 30)), "80 GiB");
  EXPECT_EQ(HumanBytes(1044480), "1020 KiB");
}

TEST(ReportTest, ParseOutputFormat) {
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("table"), OutputFormat::kTable);
  const auto yaml = ParseOutputFormat("yaml");
  ASSERT_FALSE(yaml.ok());
  EXPECT_EQ(*ParseOutputFormat("wide"), OutputFormat::kWide);
  EXPECT_EQ(yaml.status().message(), "expected table, wide or json, got 'yaml'");
  EXPECT_EQ(yaml.status().where(), "--output");
}

}  // namespace
}  // namespace seedance::base
