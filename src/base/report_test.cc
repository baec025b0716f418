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
  EXPECT_EQ(yaml.status().message(), "expected table or json, got 'yaml'");
  EXPECT_EQ(yaml.status().where(), "--output");
}

}  // namespace
}  // namespace seedance::base
