#include "seedance/control/freeze.h"

#include <gtest/gtest.h>

#include <cmath>

namespace seedance::control {
namespace {

std::vector<LayerReading> Readings(const std::vector<double>& relative) {
  std::vector<LayerReading> out;
  for (double r : relative) out.push_back({.grad_norm = r * 10, .weight_norm = 10});
  return out;
}

// Layers 0 and 2 settle, layer 1 does not: with prefix_only only layer 0 freezes (layer 1 blocks
// layer 2), after exactly `patience` steps under the threshold; the last layer never freezes.
TEST(FreezeTest, FreezesAFrontPrefixAfterPatienceSteps) {
  FreezeController c(4, {});
  const auto settled = Readings({1e-4, 5e-3, 1e-4, 1e-4});
  EXPECT_TRUE(c.Step(settled, 1.0).frozen_now.empty());
  EXPECT_TRUE(c.Step(settled, 1.0).frozen_now.empty());
  const FreezeDecision d = c.Step(settled, 1.0);  // the third step under the threshold
  EXPECT_EQ(d.frozen_now, std::vector<int>{0});
  EXPECT_NE(d.reason.find("froze layer 0"), std::string::npos);
  for (int i = 0; i < 10; ++i) c.Step(settled, 1.0);
  EXPECT_EQ(c.frozen(), (std::vector<bool>{true, false, false, false}));
  // Once layer 1 settles the prefix grows one layer a step; the last layer stays trainable.
  const auto all = Readings({1e-4, 1e-4, 1e-4, 1e-4});
  for (int i = 0; i < 10; ++i) c.Step(all, 1.0);
  EXPECT_EQ(c.frozen(), (std::vector<bool>{true, true, true, false}));
}

TEST(FreezeTest, WithoutPrefixAnySettledLayerFreezes) {
  FreezeController c(4, {.prefix_only = false});
  const auto settled = Readings({5e-3, 1e-4, 5e-3, 1e-4});
  for (int i = 0; i < 5; ++i) c.Step(settled, 1.0);
  EXPECT_EQ(c.frozen(), (std::vector<bool>{false, true, false, false}));
}

// A reading over the threshold resets the count: the steps must be consecutive.
TEST(FreezeTest, TheStepsMustBeConsecutive) {
  FreezeController c(2, {});
  c.Step(Readings({1e-4, 1}), 1.0);
  c.Step(Readings({1e-4, 1}), 1.0);
  c.Step(Readings({2e-3, 1}), 1.0);
  c.Step(Readings({1e-4, 1}), 1.0);
  c.Step(Readings({1e-4, 1}), 1.0);
  EXPECT_EQ(c.frozen_count(), 0);
  EXPECT_EQ(c.Step(Readings({1e-4, 1}), 1.0).frozen_now, std::vector<int>{0});
}

// The data changes: the loss jumps far above its recent spread, and everything frozen trains
// again in that very step.
TEST(FreezeTest, DriftUnfreezesEverything) {
  FreezeController c(3, {});
  const auto settled = Readings({1e-4, 1e-4, 1e-4});
  for (int i = 0; i < 30; ++i) c.Step(settled, 2.0 + 0.01 * (i % 3));
  ASSERT_EQ(c.frozen_count(), 2);
  const FreezeDecision d = c.Step(settled, 3.5);
  EXPECT_EQ(d.unfrozen_now, (std::vector<int>{0, 1}));
  EXPECT_EQ(c.frozen_count(), 0);
  EXPECT_NE(d.reason.find("drift"), std::string::npos);
  // The counts start again: no layer refreezes for `patience` steps.
  EXPECT_TRUE(c.Step(settled, 3.4).frozen_now.empty());
  EXPECT_TRUE(c.Step(settled, 3.4).frozen_now.empty());
}

// Without a loss (NaN) layers still freeze, and drift is not watched.
TEST(FreezeTest, AnUnknownLossFreezesButWatchesNoDrift) {
  FreezeController c(3, {});
  const auto settled = Readings({1e-4, 1e-4, 1e-4});
  for (int i = 0; i < 30; ++i) c.Step(settled, std::nan(""));
  EXPECT_EQ(c.frozen_count(), 2);
  EXPECT_TRUE(c.Step(settled, std::nan("")).unfrozen_now.empty());
}

}  // namespace
}  // namespace seedance::control
