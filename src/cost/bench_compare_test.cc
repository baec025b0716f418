#include "seedance/cost/bench_compare.h"

#include <gtest/gtest.h>

#include <string>

namespace seedance::cost {
namespace {

// A Google Benchmark JSON document with `reps` repetitions of two benchmarks whose times are
// `base` + 0.1 * i ns (BM_Same) and `slow` + 0.1 * i us (BM_Shift, in microseconds), plus the
// aggregate rows the library adds.
std::string GoogleBenchmarkJson(int reps, double base, double slow) {
  std::string rows;
  for (int i = 0; i < reps; ++i) {
    for (auto [name, t, unit] : {std::tuple{"BM_Same", base + 0.1 * i, "ns"},
                                 std::tuple{"BM_Shift", slow + 0.1 * i, "us"}}) {
      if (!rows.empty()) rows += ",";
      rows += R"({"name": ")" + std::string(name) + R"(", "run_name": ")" + name +
              R"(", "run_type": "iteration", "repetitions": )" + std::to_string(reps) +
              R"(, "repetition_index": )" + std::to_string(i) +
              R"(, "iterations": 1000, "real_time": )" + std::to_string(t) + R"(, "cpu_time": )" +
              std::to_string(t) + R"(, "time_unit": ")" + unit + R"("})";
    }
  }
  rows += R"(, {"name": "BM_Same_mean", "run_name": "BM_Same", "run_type": "aggregate",
              "aggregate_name": "mean", "real_time": 1, "cpu_time": 1, "time_unit": "ns"})";
  return R"({"context": {"num_cpus": 2}, "benchmarks": [)" + rows + "]}";
}

TEST(BenchCompareTest, ReadsGoogleBenchmarkRepetitionsInNanoseconds) {
  auto set = ReadSamples(GoogleBenchmarkJson(3, 10, 2), "a.json");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->format, "google-benchmark");
  ASSERT_EQ(set->benchmarks.size(), 2u);
  EXPECT_EQ(set->benchmarks[0].name, "BM_Same");
  EXPECT_EQ(set->benchmarks[0].real_time.size(), 3u);         // the aggregate row is skipped
  EXPECT_DOUBLE_EQ(set->benchmarks[1].real_time[1], 2100.0);  // 2.1 us
}

TEST(BenchCompareTest, VerdictsOnAShiftAndOnNoChange) {
  auto a = ReadSamples(GoogleBenchmarkJson(10, 10, 2), "a.json");
  auto b = ReadSamples(GoogleBenchmarkJson(10, 10, 3), "b.json");
  ASSERT_TRUE(a.ok() && b.ok());
  auto r = CompareSamples(*a, *b, {.resamples = 2000});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& rows = (*r)["benchmarks"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["verdict"], "within noise");
  EXPECT_DOUBLE_EQ(rows[0]["change"].get<double>(), 0.0);
  EXPECT_EQ(rows[1]["verdict"], "slower");
  EXPECT_NEAR(rows[1]["change"].get<double>(), 3.45 / 2.45 - 1, 1e-12);
  EXPECT_LT(rows[1]["p_value"].get<double>(), 0.001);
  EXPECT_TRUE((*r)["warnings"].empty());
  auto reversed = CompareSamples(*b, *a, {.resamples = 2000});
  EXPECT_EQ((*reversed)["benchmarks"][1]["verdict"], "faster");
  auto throughput = CompareSamples(*a, *b, {.resamples = 2000, .higher_is_better = true});
  EXPECT_EQ((*throughput)["benchmarks"][1]["verdict"], "faster");
}

TEST(BenchCompareTest, FewRepetitionsWarnAndOneSampleGetsNoTest) {
  auto a = ReadSamples(GoogleBenchmarkJson(3, 10, 2), "a.json");
  auto b = ReadSamples(GoogleBenchmarkJson(1, 10, 2), "b.json");
  auto few = CompareSamples(*a, *a, {.resamples = 500});
  EXPECT_EQ((*few)["warnings"].size(), 1u);
  auto one = CompareSamples(*a, *b, {.resamples = 500});
  EXPECT_EQ((*one)["benchmarks"][0]["verdict"], "too few samples");
  EXPECT_TRUE((*one)["benchmarks"][0]["p_value"].is_null());
}

TEST(BenchCompareTest, PlainJsonAndCsvSamplesAndNamesInOneFileOnly) {
  auto a = ReadSamples(R"({"x": [1, 2, 3], "only_a": [1, 2]})", "a.json");
  auto b = ReadSamples("name,value\nx,1\nx,2\nx,3\nonly_b,4\n", "b.csv");
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
  EXPECT_EQ(a->format, "json-samples");
  EXPECT_EQ(b->format, "csv-samples");
  auto r = CompareSamples(*a, *b, {.resamples = 500});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["only_in_a"], base::Report::array({"only_a"}));
  EXPECT_EQ((*r)["only_in_b"], base::Report::array({"only_b"}));
  EXPECT_FALSE(CompareSamples(*a, *b, {.metric = CompareMetric::kCpuTime}).ok());
}

TEST(BenchCompareTest, FiltersModeComparesTwoVariantsInOneFile) {
  auto one = ReadSamples(
      R"({"BM_PairGlibc/256": [10, 11, 12], "BM_PairSeedance/256": [5, 5.5, 6],)"
      R"( "BM_PairGlibc/4096": [20, 21], "BM_PairSeedance/4096": [20, 21], "other": [1, 2]})",
      "one.json");
  ASSERT_TRUE(one.ok());
  auto r =
      CompareSamples(*one, *one, {.resamples = 500, .filter_a = "Glibc", .filter_b = "Seedance"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& rows = (*r)["benchmarks"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["name"], "BM_Pair[Glibc vs Seedance]/256");
  EXPECT_DOUBLE_EQ(rows[0]["change"].get<double>(), 5.5 / 11 - 1);
  EXPECT_TRUE((*r)["only_in_a"].empty());
  EXPECT_FALSE(CompareSamples(*one, *one, {.filter_a = "Glibc"}).ok());
}

TEST(BenchCompareTest, BadInputsNameTheFileAndThePlace) {
  EXPECT_EQ(ReadSamples("", "e.json").status().where(), "e.json");
  auto broken = ReadSamples("{\"benchmarks\": [", "m.json");
  EXPECT_NE(broken.status().message().find("malformed JSON"), std::string::npos);
  EXPECT_EQ(broken.status().where(), "m.json");
  auto bad_time =
      ReadSamples(R"({"benchmarks": [{"name": "a", "real_time": "x", "cpu_time": 1}]})", "t.json");
  EXPECT_EQ(bad_time.status().where(), "t.json: benchmarks[0].real_time");
  auto bad_unit = ReadSamples(
      R"({"benchmarks": [{"name": "a", "real_time": 1, "cpu_time": 1, "time_unit": "h"}]})",
      "u.json");
  EXPECT_EQ(bad_unit.status().where(), "u.json: benchmarks[0].time_unit");
  // Found by the bench_results fuzz target: a number past the double range is out_of_range in
  // the JSON parser, not a parse error; it must still be an error, not an exception.
  auto huge = ReadSamples(R"({"x": [1, 8183011e322766116]})", "huge.json");
  EXPECT_EQ(huge.status().where(), "huge.json");
  EXPECT_NE(huge.status().message().find("malformed JSON"), std::string::npos);
  auto aggregates_only = ReadSamples(
      R"({"benchmarks": [{"name": "a_median", "run_name": "a", "run_type": "aggregate",)"
      R"( "real_time": 1, "cpu_time": 1}]})",
      "agg.json");
  EXPECT_NE(aggregates_only.status().message().find("aggregate rows only"), std::string::npos);
  auto bad_sample = ReadSamples(R"({"x": [1, null]})", "s.json");
  EXPECT_EQ(bad_sample.status().where(), "s.json: x[1]");
  auto bad_csv = ReadSamples("name,value\nx,1\nx,fast\n", "c.csv");
  EXPECT_EQ(bad_csv.status().where(), "c.csv:3: value");
  auto bad_header = ReadSamples("name,time\nx,1\n", "h.csv");
  EXPECT_FALSE(bad_header.ok());
}

}  // namespace
}  // namespace seedance::cost
