#include "seedance/precision/inspect.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <random>

#include "seedance/base/testing/text_mutator.h"

namespace seedance::precision {
namespace {

// Property: printing any float with %a (exact) and parsing it back gives the same bits.
TEST(Inspect, ParseValueIsExactOnHexFloats) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 100000; ++i) {
    const float x = std::bit_cast<float>(bits(rng));
    if (std::isnan(x)) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", static_cast<double>(x));
    auto v = ParseValue(buf);
    ASSERT_TRUE(v.ok()) << buf;
    ASSERT_EQ(std::bit_cast<uint32_t>(*v), std::bit_cast<uint32_t>(x)) << buf;
  }
  EXPECT_TRUE(std::isnan(*ParseValue("nan")));
  EXPECT_EQ(*ParseValue("-inf"), -INFINITY);
  EXPECT_EQ(*ParseValue("1e50"), INFINITY);  // out of float range: shown, not refused
}

TEST(Inspect, FuzzedValuesParseOrFailCleanly) {
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    const std::string text = base::testing::MutateText("-1.25e-3", rng, 4);
    auto v = ParseValue(text);
    if (v.ok()) {
      const base::Report r = DescribeValue(text, *v);
      EXPECT_EQ(r["formats"].size(), 4u);
    } else {
      EXPECT_NE(v.status().message().find("number"), std::string_view::npos) << text;
    }
  }
  EXPECT_FALSE(ParseValue("").ok());
  EXPECT_FALSE(ParseValue("1.5x").ok());
}

}  // namespace
}  // namespace seedance::precision
