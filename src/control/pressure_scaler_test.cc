#include "seedance/control/pressure_scaler.h"

#include <gtest/gtest.h>

namespace seedance::control {
namespace {

TEST(PressureScalerTest, ScoreIsTheWeightedSum) {
  const PressureSettings s;
  // Every factor at full pressure: 1.
  EXPECT_DOUBLE_EQ(
      PressureScore({.gpu_utilization = 0.95, .memory_free_fraction = 0, .queue_depth = 8}, s),
      1.0);
  // Utilization saturates at 95%, the queue at its capacity.
  EXPECT_DOUBLE_EQ(
      PressureScore({.gpu_utilization = 1.0, .memory_free_fraction = 0, .queue_depth = 100}, s),
      1.0);
  // 0.4 x 0.5 / 0.95 + 0.35 x 0.4 + 0.25 x 2 / 8
  EXPECT_DOUBLE_EQ(
      PressureScore({.gpu_utilization = 0.5, .memory_free_fraction = 0.6, .queue_depth = 2}, s),
      0.4 * 0.5 / 0.95 + 0.35 * 0.4 + 0.25 * 0.25);
  EXPECT_DOUBLE_EQ(PressureScore({}, s), 0.0);
}

TEST(PressureScalerTest, UpAtOnceDownAfterTheCooldown) {
  PressureSettings s;
  s.max_replicas = 4;
  PressureScaler scaler(s);
  const PressureReading hot{.gpu_utilization = 0.95, .memory_free_fraction = 0.1, .queue_depth = 8};
  const PressureReading idle{
      .gpu_utilization = 0.05, .memory_free_fraction = 0.9, .queue_depth = 0};
  const PressureReading mid{.gpu_utilization = 0.6, .memory_free_fraction = 0.5, .queue_depth = 2};
  EXPECT_EQ(scaler.Decide(0, 2, hot).desired, 3);
  EXPECT_EQ(scaler.Decide(15, 3, hot).desired, 4);  // no cool-down upwards
  EXPECT_EQ(scaler.Decide(30, 4, hot).reason, "at bound");
  EXPECT_EQ(scaler.Decide(45, 4, mid).reason, "within band");
  EXPECT_EQ(scaler.Decide(60, 4, idle).reason, "cooling down");  // 45 s after the last action
  EXPECT_EQ(scaler.Decide(314, 4, idle).desired, 4);
  const PressureDecision d = scaler.Decide(315, 4, idle);  // 300 s after the last action
  EXPECT_EQ(d.desired, 3);
  EXPECT_EQ(d.reason, "scale down");
  EXPECT_EQ(scaler.Decide(330, 3, idle).reason, "cooling down");
  PressureScaler floor(s);
  EXPECT_EQ(floor.Decide(0, 1, idle).reason, "at bound");
}

}  // namespace
}  // namespace seedance::control
