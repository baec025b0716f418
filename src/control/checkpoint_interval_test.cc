#include "seedance/control/checkpoint_interval.h"

#include <gtest/gtest.h>

#include <cmath>

namespace seedance::control {
namespace {

TEST(CheckpointIntervalTest, DoublesWhileTheStorageIsBusy) {
  CheckpointInterval c({});
  EXPECT_EQ(c.steps(), 50);
  EXPECT_EQ(c.AfterSave(0.9, 10, 1).steps, 100);
  EXPECT_EQ(c.AfterSave(0.66, 10, 1).steps, 200);
  const IntervalDecision kept = c.AfterSave(0.5, 10, 1);  // between 0.325 and 0.65: kept
  EXPECT_EQ(kept.steps, 200);
  EXPECT_EQ(kept.reason, "kept");
  EXPECT_EQ(c.AfterSave(0.65, 10, 1).steps, 200);  // exceeds, not equals
  EXPECT_EQ(c.AfterSave(0.1, 10, 1).steps, 100);   // idle: steps back
  EXPECT_EQ(c.AfterSave(0.0, 10, 1).steps, 50);
  EXPECT_EQ(c.AfterSave(0.0, 10, 1).steps, 50);  // the floor
}

// Young (1974): sqrt(2 x 30 s x 3600 s) = 464.8 s, 465 one-second steps; the interval never
// exceeds twice that however busy the storage.
TEST(CheckpointIntervalTest, NeverExceedsTwiceYoung) {
  EXPECT_NEAR(YoungOptimumSeconds(30, 3600), std::sqrt(2.0 * 30 * 3600), 1e-9);
  CheckpointInterval c({.mtbf_s = 3600});
  std::vector<int64_t> seen;
  for (int i = 0; i < 6; ++i) seen.push_back(c.AfterSave(1.0, 30, 1).steps);
  EXPECT_EQ(seen, (std::vector<int64_t>{100, 200, 400, 800, 930, 930}));
  const IntervalDecision d = c.AfterSave(1.0, 30, 1);
  EXPECT_EQ(d.young_steps, 465);
  EXPECT_EQ(d.reason, "storage busy: doubled; capped at 2 x Young");
  // A short MTBF puts twice Young below the floor: the cap wins.
  CheckpointInterval fragile({.mtbf_s = 10});
  const IntervalDecision f = fragile.AfterSave(0.0, 0.1, 1);
  EXPECT_EQ(f.steps, 2);
  EXPECT_NE(f.reason.find("below the floor"), std::string::npos);
}

}  // namespace
}  // namespace seedance::control
