// EnumName, EnumNames and ParseEnum on small tables: every name round-trips, the error lists the
// accepted names in table order, matching is exact.
#include "seedance/base/enum_names.h"

#include <gtest/gtest.h>

namespace seedance::base {
namespace {

enum class Color { kRed, kGreen, kBlue, kUnnamed };

constexpr EnumTable<Color, 3> kColors = {
    {{Color::kRed, "red"}, {Color::kGreen, "green"}, {Color::kBlue, "blue"}}};

static_assert(EnumName(kColors, Color::kGreen) == "green");

TEST(EnumNames, RoundTripAndErrors) {
  for (const auto& e : kColors) {
    const auto parsed = ParseEnum(kColors, e.name, "--color");
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, e.value);
    EXPECT_EQ(EnumName(kColors, e.value), e.name);
  }
  EXPECT_EQ(EnumName(kColors, Color::kUnnamed), "?");
  for (const char* bad : {"Red", " red", "red ", "", "purple"}) {
    const auto parsed = ParseEnum(kColors, bad, "--color");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().message(),
              "expected red, green or blue, got '" + std::string(bad) + "'");
    EXPECT_EQ(parsed.status().where(), "--color");
  }
  constexpr EnumTable<Color, 1> one = {{{Color::kRed, "red"}}};
  constexpr EnumTable<Color, 2> two = {{{Color::kRed, "red"}, {Color::kBlue, "blue"}}};
  EXPECT_EQ(EnumNames(one), "red");
  EXPECT_EQ(EnumNames(two), "red or blue");
}

}  // namespace
}  // namespace seedance::base
