#include "seedance/control/autofreeze.h"

#include <gtest/gtest.h>

namespace seedance::control {
namespace {

// Four layers; per interval the accumulated norms change by 1%, 50%, 2% and 40%. The median of
// the changes is between 2% and 40%: layers 0 and 2 are under it, but freezing goes front to
// back only, so layer 0 freezes and layer 1 (still changing) blocks layer 2.
TEST(AutoFreezeTest, FreezesTheFrontRunUnderTheMedianChange) {
  AutoFreeze a(4, {.interval = 2, .percentile = 0.5, .keep_trainable = 1});
  auto interval = [&](std::vector<double> norms) {
    a.Step(norms);
    return a.Step(norms);
  };
  EXPECT_TRUE(interval({1.0, 1.0, 1.0, 1.0}).empty());  // the first interval only records
  const std::vector<int> frozen = interval({1.01, 1.5, 1.02, 1.4});
  EXPECT_EQ(frozen, std::vector<int>{0});
  EXPECT_EQ(a.frozen(), (std::vector<bool>{true, false, false, false}));
  // Layer 1 settles (change 0, layer 2's 1%, layer 3's 100%): the median is layer 2's own
  // change, so only layer 1 is under it; next interval layer 2 is the front and freezes under a
  // median set by the last layer, which itself never freezes.
  EXPECT_EQ(interval({0, 1.5, 1.03, 2.8}), std::vector<int>{1});
  EXPECT_EQ(interval({0, 0, 1.03, 1.0}), std::vector<int>{2});
  EXPECT_EQ(a.frozen(), (std::vector<bool>{true, true, true, false}));
}

TEST(AutoFreezeTest, NothingBetweenIntervalEnds) {
  AutoFreeze a(2, {.interval = 3});
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(a.Step({1, 1}).empty());
}

}  // namespace
}  // namespace seedance::control
