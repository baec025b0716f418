#include "seedance/base/prometheus_parse.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "seedance/base/prometheus_text.h"

namespace seedance::base {
namespace {

TEST(PrometheusParse, ReadsFamiliesLabelsValuesAndTimestamps) {
  const char* text =
      "# HELP etcd_disk_wal_fsync_duration_seconds The latency \\\\ of fsync.\\nSecond line\n"
      "# TYPE etcd_disk_wal_fsync_duration_seconds histogram\n"
      "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 3\n"
      "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 5\n"
      "etcd_disk_wal_fsync_duration_seconds_sum 0.25\n"
      "etcd_disk_wal_fsync_duration_seconds_count 5\r\n"
      "\n"
      "# a comment\n"
      "up{job=\"etcd\" , instance=\"a\\\"b\\\\c\\nd\",} 1 1700000000000\n"
      "\tweird_value -Inf\n"
      "nan_value NaN\n"
      "exp_value 1.5e-3\n";
  StatusOr<PromText> parsed = ParsePrometheusText(text, "etcd.txt");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const PromText& p = *parsed;
  ASSERT_EQ(p.samples.size(), 8u);
  EXPECT_EQ(p.types.at("etcd_disk_wal_fsync_duration_seconds"), "histogram");
  EXPECT_EQ(p.help.at("etcd_disk_wal_fsync_duration_seconds"),
            "The latency \\ of fsync.\nSecond line");
  EXPECT_EQ(p.samples[0].Label("le"), "0.001");
  EXPECT_EQ(p.samples[1].value, 5);
  EXPECT_EQ(p.samples[1].line, 4);
  EXPECT_EQ(p.samples[3].value, 5);
  const PromSample& up = p.samples[4];
  ASSERT_EQ(up.labels.size(), 2u);
  EXPECT_EQ(up.labels[0].first, "instance");  // sorted by name
  EXPECT_EQ(up.Label("instance"), "a\"b\\c\nd");
  EXPECT_EQ(up.Label("job"), "etcd");
  EXPECT_EQ(up.Label("missing"), "");
  EXPECT_EQ(up.timestamp_ms, 1700000000000);
  EXPECT_TRUE(std::isinf(p.samples[5].value) && p.samples[5].value < 0);
  EXPECT_TRUE(std::isnan(p.samples[6].value));
  EXPECT_DOUBLE_EQ(p.samples[7].value, 1.5e-3);
}

TEST(PrometheusParse, ValueSpellings) {
  EXPECT_EQ(ParsePrometheusValue("+Inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(ParsePrometheusValue("inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(ParsePrometheusValue("-infinity"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(ParsePrometheusValue("+12"), 12);
  EXPECT_EQ(ParsePrometheusValue("-0.5"), -0.5);
  for (const char* bad : {"", "+", "--1", "1,5", "0x10", "+NaN", "nanx", "1e", "one"}) {
    EXPECT_FALSE(ParsePrometheusValue(bad).has_value()) << bad;
  }
}

TEST(PrometheusParse, ErrorsNameTheLineAndWhatWasExpected) {
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"ok 1\n9bad 1\n", "expected a metric name, '#' or a blank line (x.txt:2)"},
      {"m{a=\"1\" 1\n", "expected ',' or '}'"},
      {"m{a=1} 1\n", "label 'a': expected '\"'"},
      {"m{a=\"1\\t\"} 1\n", "unknown escape"},
      {"m{a=\"1} 1\n", "expected a closing '\"'"},
      {"m{a=\"1\",a=\"2\"} 1\n", "label 'a' given twice"},
      {"m one\n", "value 'one' is not a number"},
      {"m\n", "expected a space, then a value"},
      {"m 1 12.5\n", "timestamp '12.5'"},
      {"m 1 12 extra\n", "after the timestamp"},
      {"# TYPE m countr\n", "expected counter, gauge"},
      {"# TYPE m gauge\n# TYPE m gauge\n", "second TYPE"},
      {"m 1\n# TYPE m gauge\n", "after its samples"},
      {"# HELP\n", "HELP line: expected a metric name"},
  };
  for (const Case& c : cases) {
    StatusOr<PromText> parsed = ParsePrometheusText(c.text, "x.txt");
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_NE(parsed.status().ToString().find("(x.txt:"), std::string::npos);
    EXPECT_NE(parsed.status().ToString().find(c.says), std::string::npos)
        << c.text << " -> " << parsed.status().ToString();
  }
}

// Property: whatever PrometheusWriter writes (random names, label values with every escaped
// character, values across the double range) reads back sample for sample.
TEST(PrometheusParse, ReadsBackWhatTheWriterWrites) {
  std::mt19937_64 rng(7);
  const std::string alphabet = "ab_:Z9\\\"\n {},=#é";
  for (int round = 0; round < 200; ++round) {
    PrometheusWriter w;
    std::vector<PromSample> expected;
    const int families = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < families; ++f) {
      const std::string name = "fam_" + std::to_string(round) + "_" + std::to_string(f);
      w.Family(name, f % 2 ? "gauge" : "counter", "help text");
      const int samples = static_cast<int>(rng() % 4);
      for (int s = 0; s < samples; ++s) {
        PrometheusWriter::Labels labels;
        const int n = static_cast<int>(rng() % 3);
        for (int l = 0; l < n; ++l) {
          std::string value;
          for (int k = static_cast<int>(rng() % 6); k > 0; --k) {
            value += alphabet[rng() % alphabet.size()];
          }
          labels.emplace_back("l" + std::to_string(l), value);
        }
        double v = 0;
        switch (rng() % 5) {
          case 0:
            v = static_cast<double>(rng() % 1000);
            break;
          case 1:
            v = std::ldexp(static_cast<double>(rng() % 100000) - 50000, -20);
            break;
          case 2:
            v = std::numeric_limits<double>::infinity();
            break;
          case 3:
            v = std::numeric_limits<double>::max();
            break;
          default:
            v = 1.0 / 3.0;
            break;
        }
        w.Sample(labels, v);
        PromSample e;
        e.name = name;
        e.labels = labels;
        std::sort(e.labels.begin(), e.labels.end());
        e.value = v;
        expected.push_back(e);
      }
    }
    StatusOr<PromText> parsed = ParsePrometheusText(w.str(), "written");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << w.str();
    ASSERT_EQ(parsed->samples.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(parsed->samples[i].name, expected[i].name);
      EXPECT_EQ(parsed->samples[i].labels, expected[i].labels);
      EXPECT_EQ(parsed->samples[i].value, expected[i].value);
    }
  }
}

}  // namespace
}  // namespace seedance::base
