#include "seedance/k8s/histogram_quantile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "seedance/base/prometheus_text.h"

namespace seedance::k8s {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(HistogramQuantile, HandWorkedCases) {
  // 10 observations: 4 <= 0.1, 8 <= 0.5, all <= +Inf.
  const std::vector<Bucket> b = {{0.1, 4}, {0.5, 8}, {kInf, 10}};
  EXPECT_DOUBLE_EQ(BucketQuantile(0.2, b), 0.05);               // 0 + 0.1 * 2/4
  EXPECT_DOUBLE_EQ(BucketQuantile(0.6, b), 0.1 + 0.4 * 2 / 4);  // inside the second bucket
  EXPECT_EQ(BucketQuantile(0.9, b), 0.5);                       // in +Inf: the highest bound
  EXPECT_EQ(BucketQuantile(-1, b), -kInf);
  EXPECT_EQ(BucketQuantile(2, b), kInf);
  EXPECT_TRUE(std::isnan(BucketQuantile(0.5, {{0.1, 4}, {0.5, 8}})));  // no +Inf
  EXPECT_TRUE(std::isnan(BucketQuantile(0.5, {{kInf, 3}})));           // one bucket
  EXPECT_TRUE(std::isnan(BucketQuantile(0.5, {{1, 0}, {kInf, 0}})));   // nothing observed
  EXPECT_EQ(BucketQuantile(0.1, {{-1, 5}, {kInf, 10}}), -1);           // a bound <= 0 first
  // Unsorted, duplicated and non-monotonic input is sorted, merged and made monotonic.
  // Here: le=1 holds 2 + 3, le=2 is lifted from 4 to 5; rank 5 is reached at le=1.
  EXPECT_DOUBLE_EQ(BucketQuantile(0.5, {{kInf, 10}, {1, 2}, {1, 3}, {2, 4}}), 1);
  EXPECT_DOUBLE_EQ(BucketQuantile(0.3, {{kInf, 10}, {1, 2}, {1, 3}, {2, 4}}), 0.6);
}

TEST(HistogramQuantile, CollectsSumsAndTakesIncreases) {
  base::PrometheusWriter w;
  w.Family("lat_seconds", "histogram", "x");
  const double bounds[] = {0.1, 1};
  const uint64_t get[] = {1, 3, 4}, put[] = {0, 2, 2};
  w.Histogram({{"verb", "GET"}}, bounds, get, 2.5);
  w.Histogram({{"verb", "PUT"}}, bounds, put, 1.5);
  base::StatusOr<base::PromText> text = base::ParsePrometheusText(w.str(), "t");
  ASSERT_TRUE(text.ok());
  const std::vector<HistogramSeries> series = CollectHistograms(*text, "lat_seconds");
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].labels[0].second, "GET");
  EXPECT_EQ(series[0].count, 4);
  EXPECT_EQ(series[0].sum, 2.5);
  const HistogramSeries total = SumByLe(series);
  ASSERT_EQ(total.buckets.size(), 3u);
  EXPECT_EQ(total.buckets[1].count, 5);
  EXPECT_EQ(total.count, 6);
  HistogramSeries later = total;
  for (Bucket& b : later.buckets) b.count += 10;
  later.count += 10;
  const HistogramSeries inc = Increase(later, &total);
  EXPECT_EQ(inc.buckets[0].count, 10);
  EXPECT_EQ(inc.count, 10);
  EXPECT_EQ(Increase(total, &later).count, total.count);  // a reset: the later value whole
}

// The reference: promtool (Debian package prometheus) evaluates histogram_quantile over the same
// buckets in a rules unit test whose expected values are Seedance's; it passes only when every
// value is the same double.
std::string YamlValue(double v) {
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  return base::FormatSampleValue(v);
}

TEST(HistogramQuantile, AgreesWithPromtool) {
  const bool have = std::system("command -v promtool >/dev/null 2>&1") == 0;
  if (!have) {
    const char* ci = std::getenv("CI");
    if (ci != nullptr && std::string(ci) == "true") FAIL() << "promtool missing under CI";
    GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  }
  std::mt19937_64 rng(2026);
  const std::vector<std::string> bounds = {"-1", "0",   "0.001", "0.005", "0.1",
                                           "1",  "1.0", "2.5",   "10"};
  const double quantiles[] = {0, 0.25, 0.5, 0.9, 0.99, 1, -0.5, 1.5};
  std::ostringstream series, tests;
  int exact = 0, nan = 0;
  for (int c = 0; c < 400; ++c) {
    std::vector<std::string> les;
    for (const std::string& b : bounds) {
      if (rng() % 2) les.push_back(b);
    }
    if (rng() % 8) les.push_back("+Inf");
    if (les.empty()) les.push_back("+Inf");
    std::vector<Bucket> buckets;
    double running = 0;
    for (const std::string& le : les) {
      running += static_cast<double>(rng() % 20);
      // Now and then a count below the one before (a scrape mid-update): forced monotonic.
      const double count = rng() % 10 == 0 ? std::floor(running / 2) : running;
      const std::string name = "h_bucket{case=\"" + std::to_string(c) + "\",le=\"" + le + "\"}";
      series << "      - series: '" << name << "'\n        values: '"
             << base::FormatSampleValue(count) << "'\n";
      buckets.push_back({*base::ParsePrometheusValue(le), count});
    }
    const double q = quantiles[rng() % std::size(quantiles)];
    const double got = BucketQuantile(q, buckets);
    const std::string expr = "histogram_quantile(" + base::FormatSampleValue(q) +
                             ", h_bucket{case=\"" + std::to_string(c) + "\"})";
    if (std::isnan(got)) {
      ++nan;  // NaN != NaN keeps the sample; counting it says "NaN" in a comparable way
      tests << "      - expr: count(" << expr << " != " << expr << ")\n        eval_time: 0m\n"
            << "        exp_samples:\n          - labels: '{}'\n            value: 1\n";
    } else {
      ++exact;
      tests << "      - expr: '" << expr << "'\n        eval_time: 0m\n"
            << "        exp_samples:\n          - labels: '{case=\"" << c << "\"}'\n"
            << "            value: " << YamlValue(got) << "\n";
    }
  }
  EXPECT_GT(exact, 200);
  EXPECT_GT(nan, 10);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("seedance_quantile_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "quantile_test.yaml";
  {
    std::ofstream out(file);
    out << "rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n"
        << "    input_series:\n"
        << series.str() << "    promql_expr_test:\n"
        << tests.str();
  }
  const std::string log = (dir / "promtool.log").string();
  const int rc =
      std::system(("promtool test rules " + file.string() + " >" + log + " 2>&1").c_str());
  std::ifstream in(log);
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << said.substr(0, 4000);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace seedance::k8s
