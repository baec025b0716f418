#include "seedance/k8s/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace seedance::k8s {
namespace {

__extension__ typedef __int128 Wide;  // a GCC and clang extension

// The API's own examples and edge cases, with the values its Value() / MilliValue() give.
TEST(K8sQuantityTest, TheApisExamples) {
  struct Case {
    const char* text;
    int64_t value, milli;
  };
  const Case cases[] = {
      {"0", 0, 0},
      {"1", 1, 1000},
      {"96", 96, 96000},
      {"100m", 1, 100},
      {"0.1", 1, 100},
      {".5", 1, 500},
      {"1.5", 2, 1500},
      {"2.", 2, 2000},
      {"1k", 1000, 1000000},
      {"129M", 129000000, 129000000000},
      {"129e6", 129000000, 129000000000},
      {"129E6", 129000000, 129000000000},
      {"1e-3", 1, 1},
      {"123Mi", 128974848, 128974848000},
      {"1.5Gi", 1610612736, 1610612736000},
      {"1Ki", 1024, 1024000},
      {"8Ei", INT64_MAX, 0},  // overflow: checked below
      {"1n", 1, 1},
      {"1500u", 1, 2},
      {"8000", 8000, 8000000},
      {"+4", 4, 4000},
      {"1E", 1000000000000000000, 0},
  };
  for (const auto& c : cases) {
    const std::string t = c.text;
    if (t == "8Ei") {
      EXPECT_FALSE(ParseQuantity(t, "q").ok());
      continue;
    }
    EXPECT_EQ(ParseQuantity(t, "q").value(), c.value) << t;
    if (t == "1E") {
      EXPECT_FALSE(ParseQuantityMilli(t, "q").ok());  // 10^21 milli: beyond int64
      continue;
    }
    EXPECT_EQ(ParseQuantityMilli(t, "q").value(), c.milli) << t;
  }
}

TEST(K8sQuantityTest, BadTextNamesTheFieldAndWhy) {
  for (const char* bad : {"", "m", "1.2.3", "1Qi", "1e", "1e+", "abc", "1 Gi", "--1", "1ee3",
                          "1234567890123456789012345678901"}) {
    auto r = ParseQuantity(bad, "status.capacity[cpu]");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().ToString().find("status.capacity[cpu]"), std::string::npos);
  }
}

// Whole numbers with every suffix against 128-bit arithmetic done here.
TEST(K8sQuantityTest, SuffixesMultiplyExactly) {
  std::mt19937_64 rng(4);
  const std::pair<const char*, Wide> suffixes[] = {
      {"", 1},      {"k", 1000},     {"M", 1000000},        {"G", 1000000000},
      {"Ki", 1024}, {"Mi", 1 << 20}, {"Gi", Wide{1} << 30}, {"Ti", Wide{1} << 40}};
  for (int i = 0; i < 2000; ++i) {
    const int64_t n = static_cast<int64_t>(rng() % 1000000);
    const auto& [suffix, mult] = suffixes[rng() % std::size(suffixes)];
    const std::string text = std::to_string(n) + suffix;
    const Wide want = n * mult;
    if (want > INT64_MAX) {
      EXPECT_FALSE(ParseQuantity(text, "q").ok()) << text;
    } else {
      EXPECT_EQ(ParseQuantity(text, "q").value(), static_cast<int64_t>(want)) << text;
    }
  }
}

// Found by the kube_objects fuzz target: a mantissa of 30 digits with an exponent that puts
// 10^29 below the unit rounded to 1 (the divisor did not fit), while the milli value, 10^26 below
// its unit, rounded right to 1556. Each is ceil(x × 10^scale), one decimal place at a time.
TEST(K8sQuantityTest, LongMantissasRoundUpExactly) {
  EXPECT_EQ(*ParseQuantity("1.55555555555555555546666666666", "q"), 2);
  EXPECT_EQ(*ParseQuantityMilli("1.55555555555555555546666666666", "q"), 1556);
  EXPECT_EQ(*ParseQuantity("1e-40", "q"), 1);   // below a unit: 1
  EXPECT_EQ(*ParseQuantity("-1e-40", "q"), 0);  // toward zero
  EXPECT_EQ(*ParseQuantity("-1.55555555555555555546666666666", "q"), -1);
  EXPECT_EQ(*ParseQuantityMilli("-1.55555555555555555546666666666", "q"), -1555);
  EXPECT_EQ(*ParseQuantity("99999999999999999999999999999.9e-28", "q"), 10);
}

}  // namespace
}  // namespace seedance::k8s
