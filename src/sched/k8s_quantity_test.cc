#include "seedance/sched/k8s_quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace seedance::sched {
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

}  // namespace
}  // namespace seedance::sched
