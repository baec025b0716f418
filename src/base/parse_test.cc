// The strict number parsers: a table of edge cases, and random strings against a reference
// written independently (a regular expression for the accepted shape, then strtoll/strtod).
#include "seedance/base/parse.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <random>
#include <regex>
#include <sstream>
#include <string>

namespace seedance::base {
namespace {

TEST(Parse, Int64Table) {
  EXPECT_EQ(ParseInt64("0"), 0);
  EXPECT_EQ(ParseInt64("-0"), 0);
  EXPECT_EQ(ParseInt64("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(ParseInt64("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"9223372036854775808", "-9223372036854775809", "", " 1", "1 ", "+7", "+4",
                          "0x10", "1.0", "1e3", "nan", "inf", "-", "--1", "1_000", "١"}) {
    EXPECT_FALSE(ParseInt64(bad)) << "'" << bad << "'";
  }
}

TEST(Parse, FiniteDoubleTable) {
  EXPECT_EQ(ParseFiniteDouble("0"), 0.0);
  EXPECT_EQ(ParseFiniteDouble("1.5"), 1.5);
  EXPECT_EQ(ParseFiniteDouble("-2e-3"), -2e-3);
  EXPECT_EQ(ParseFiniteDouble(".5"), 0.5);
  EXPECT_EQ(ParseFiniteDouble("5."), 5.0);
  EXPECT_EQ(ParseFiniteDouble("1.7976931348623157e308"), 1.7976931348623157e308);
  EXPECT_EQ(ParseFiniteDouble("1e-400"), std::nullopt);  // underflow is out of range too
  for (const char* bad :
       {"",   "nan", "NaN",  "-nan",  "inf", "-inf", "infinity", "1e309", "-1e309", " 5",
        "5 ", "+5",  "0x10", "0x1p3", "1,5", "e5",   "-",        ".",     "5e",     "1..2"}) {
    EXPECT_FALSE(ParseFiniteDouble(bad)) << "'" << bad << "'";
  }
}

std::string RandomText(std::mt19937& rng) {
  static const std::string alphabet = "0123456789-+.eExXaf n";
  std::string s;
  const int n = static_cast<int>(rng() % 24);
  for (int i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
  return s;
}

TEST(Parse, Int64AgreesWithReferenceOnRandomText) {
  const std::regex shape("-?[0-9]+");
  std::mt19937 rng(5);
  int accepted = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string s = RandomText(rng);
    if (i % 3 == 0)
      s = std::to_string(static_cast<int64_t>(rng()) * (rng() % 2 ? 1 : -1)) +
          (i % 6 == 0 ? std::to_string(rng() % 100000) : "");
    std::optional<int64_t> want;
    if (std::regex_match(s, shape)) {
      errno = 0;
      const long long v = std::strtoll(s.c_str(), nullptr, 10);
      if (errno != ERANGE) want = v;
    }
    EXPECT_EQ(ParseInt64(s), want) << "'" << s << "'";
    accepted += want.has_value();
  }
  EXPECT_GT(accepted, 50000);
}

TEST(Parse, FiniteDoubleAgreesWithReferenceOnRandomText) {
  const std::regex shape(R"(-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?)");
  std::mt19937 rng(6);
  int accepted = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::string s = RandomText(rng);
    std::optional<double> want;
    if (std::regex_match(s, shape)) {
      errno = 0;
      const double v = std::strtod(s.c_str(), nullptr);
      // strtod flags underflow and overflow with ERANGE, as from_chars reports out of range.
      if (errno != ERANGE && std::isfinite(v)) want = v;
    }
    EXPECT_EQ(ParseFiniteDouble(s), want) << "'" << s << "'";
    accepted += want.has_value();
  }
  EXPECT_GT(accepted, 1000);
}

TEST(Parse, DurationSeconds) {
  EXPECT_EQ(ParseDurationSeconds("5s"), 5.0);
  EXPECT_EQ(ParseDurationSeconds("500ms"), 0.5);
  EXPECT_EQ(ParseDurationSeconds("1.5m"), 90.0);
  EXPECT_EQ(ParseDurationSeconds("2h"), 7200.0);
  EXPECT_EQ(ParseDurationSeconds("10"), 10.0);
  EXPECT_EQ(ParseDurationSeconds("0"), 0.0);
  for (const char* bad : {"", "s", "ms", "nan", "nans", "infs", "-1s", " 5s", "5 s", "5sec",
                          "0x10s", "1e400s", "5d"}) {
    EXPECT_FALSE(ParseDurationSeconds(bad)) << "'" << bad << "'";
  }
}

TEST(Parse, KeyValueList) {
  auto kv = ParseKeyValueList("LS=60,BE=,x=a=b", "--slo");
  ASSERT_TRUE(kv.ok());
  const std::vector<std::pair<std::string, std::string>> want = {
      {"LS", "60"}, {"BE", ""}, {"x", "a=b"}};
  EXPECT_EQ(*kv, want);
  EXPECT_TRUE(ParseKeyValueList("", "--slo")->empty());
  for (const char* bad : {"LS", "=5", "LS=1,,BE=2", "LS=1,", "a=1,a=2"}) {
    auto r = ParseKeyValueList(bad, "--slo");
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().where(), "--slo");
  }
}

// SplitFields against the C++ stream's word extraction (the reader it replaces), and SplitLines
// against std::getline with a CR stripped, on random texts of spaces, tabs, newlines and letters.
TEST(Parse, SplitFieldsAndLinesAgreeWithStreams) {
  std::mt19937_64 rng(7);
  const std::string alphabet = " \t\r\nab1-";
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i) text += alphabet[rng() % alphabet.size()];
    std::vector<std::string> words;
    std::istringstream in(text);
    for (std::string w; in >> w;) words.push_back(w);
    std::vector<std::string> fields;
    for (auto f : SplitFields(text)) fields.emplace_back(f);
    ASSERT_EQ(fields, words) << "'" << text << "'";
    std::vector<std::string> lines;
    std::istringstream li(text);
    for (std::string l; std::getline(li, l);) {
      if (!l.empty() && l.back() == '\r') l.pop_back();
      lines.push_back(l);
    }
    std::vector<std::string> split;
    for (auto l : SplitLines(text)) split.emplace_back(l);
    ASSERT_EQ(split, lines) << "'" << text << "'";
  }
}

}  // namespace
}  // namespace seedance::base
