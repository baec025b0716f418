#include "seedance/control/batch_scaler.h"

#include <gtest/gtest.h>

#include <vector>

namespace seedance::control {
namespace {

// Feeds (memory share, samples/s) readings and returns the size after each.
std::vector<int64_t> SizesAfter(BatchScaler& s, const std::vector<std::pair<double, double>>& in) {
  std::vector<int64_t> out;
  for (const auto& [share, rate] : in) out.push_back(s.Observe(share, rate).size);
  return out;
}

TEST(BatchScalerTest, GrowsBySixteenAfterThreeLowReadings) {
  BatchScaler s({});
  // Two low readings, one in the band (resets the count), then three low readings.
  EXPECT_EQ(SizesAfter(s, {{0.5, 100}, {0.5, 100}, {0.7, 100}, {0.5, 100}, {0.5, 100}}),
            (std::vector<int64_t>{16, 16, 16, 16, 16}));
  const BatchDecision d = s.Observe(0.5, 100);
  EXPECT_EQ(d.action, BatchAction::kGrow);
  EXPECT_EQ(d.size, 32);
  EXPECT_EQ(d.reason, "memory 0.50 < 0.65 for 3 steps: 16 -> 32");
  // 0.65 itself is not under the threshold.
  EXPECT_EQ(SizesAfter(s, {{0.65, 200}, {0.65, 200}, {0.65, 200}}),
            (std::vector<int64_t>{32, 32, 32}));
}

TEST(BatchScalerTest, HighMemoryReturnsToThePreviousSizeAndCapsGrowthThere) {
  BatchScaler s({});
  SizesAfter(s, {{0.1, 100}, {0.1, 100}, {0.1, 100}});  // 32
  SizesAfter(s, {{0.1, 150}, {0.1, 150}, {0.1, 150}});  // 48
  EXPECT_EQ(s.size(), 48);
  const BatchDecision d = s.Observe(0.86, 170);
  EXPECT_EQ(d.action, BatchAction::kShrink);
  EXPECT_EQ(d.size, 32);
  EXPECT_EQ(s.ceiling(), 48);
  // Memory idle again: growing to 48 would hit the ceiling, so the size stays.
  EXPECT_EQ(SizesAfter(s, {{0.1, 160}, {0.1, 160}, {0.1, 160}, {0.1, 160}}),
            (std::vector<int64_t>{32, 32, 32, 32}));
  // 0.85 itself is not over the threshold.
  EXPECT_EQ(s.Observe(0.85, 160).action, BatchAction::kKeep);
}

TEST(BatchScalerTest, OutOfMemoryStepsBackAndGivesUpAtTheFloor) {
  BatchScaler s({.initial_size = 20, .step = 16, .min_size = 3});
  BatchDecision d = s.OutOfMemory();  // no growth before: halved
  EXPECT_EQ(d.action, BatchAction::kShrink);
  EXPECT_EQ(d.size, 10);
  EXPECT_EQ(d.reason, "out of memory: 20 -> 10");
  EXPECT_EQ(s.OutOfMemory().size, 5);
  EXPECT_EQ(s.OutOfMemory().size, 3);  // 2 clamps to the floor
  d = s.OutOfMemory();
  EXPECT_EQ(d.action, BatchAction::kKeep);
  EXPECT_EQ(d.size, 3);
  // After a growth, out-of-memory returns to the size before it.
  BatchScaler grown({});
  SizesAfter(grown, {{0.1, 100}, {0.1, 100}, {0.1, 100}});  // 32
  EXPECT_EQ(grown.OutOfMemory().size, 16);
  EXPECT_EQ(grown.ceiling(), 32);
}

TEST(BatchScalerTest, StopsGrowingWhenThroughputStopsRising) {
  BatchScaler s({});
  SizesAfter(s, {{0.1, 100}, {0.1, 100}, {0.1, 100}});  // 16 -> 32 at 100/s
  SizesAfter(s, {{0.1, 101}, {0.1, 101}, {0.1, 101}});  // 32 gives 101/s: < 2% more
  EXPECT_TRUE(s.growth_stopped());
  EXPECT_EQ(s.size(), 32);  // not slower than 16: kept
  EXPECT_EQ(SizesAfter(s, {{0.1, 101}, {0.1, 101}, {0.1, 101}}),
            (std::vector<int64_t>{32, 32, 32}));

  BatchScaler slower({});
  SizesAfter(slower, {{0.1, 100}, {0.1, 100}, {0.1, 100}});  // 32
  SizesAfter(slower, {{0.1, 130}, {0.1, 130}, {0.1, 130}});  // 48 (30% faster at 32)
  const std::vector<int64_t> sizes = SizesAfter(slower, {{0.1, 90}, {0.1, 90}, {0.1, 90}});
  EXPECT_EQ(sizes.back(), 32);  // 48 is slower than 32: back to the best
  EXPECT_TRUE(slower.growth_stopped());
}

TEST(BatchScalerTest, ANegativeMinimumGainGrowsRegardlessOfThroughput) {
  BatchScaler s({.min_gain = -1});
  SizesAfter(s, {{0.1, 100}, {0.1, 100}, {0.1, 100}});  // 32
  SizesAfter(s, {{0.1, 50}, {0.1, 50}, {0.1, 50}});     // slower, grows anyway
  EXPECT_EQ(s.size(), 48);
  EXPECT_FALSE(s.growth_stopped());
}

TEST(BatchScalerTest, NeverExceedsTheMaximum) {
  BatchScaler s({.initial_size = 60, .max_size = 70});
  EXPECT_EQ(SizesAfter(s, {{0.1, 1}, {0.1, 1}, {0.1, 1}}), (std::vector<int64_t>{60, 60, 60}));
}

TEST(BatchScalerTest, SettingsAreValidated) {
  EXPECT_TRUE(ValidateBatchScalerSettings({}).ok());
  EXPECT_FALSE(ValidateBatchScalerSettings({.min_size = 0}).ok());
  EXPECT_FALSE(ValidateBatchScalerSettings({.initial_size = 8, .max_size = 4}).ok());
  EXPECT_FALSE(ValidateBatchScalerSettings({.low = 0.9, .high = 0.85}).ok());
  EXPECT_FALSE(ValidateBatchScalerSettings({.readings = 0}).ok());
}

}  // namespace
}  // namespace seedance::control
