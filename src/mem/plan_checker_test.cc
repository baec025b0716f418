#include "seedance/mem/plan_checker.h"

#include <gtest/gtest.h>

#include <random>

namespace seedance::mem {
namespace {

// Reference: compare every pair (O(n^2)).
bool BruteValid(const std::vector<Buffer>& b, const std::vector<int64_t>& off) {
  for (size_t i = 0; i < b.size(); ++i) {
    for (size_t j = i + 1; j < b.size(); ++j) {
      const bool time = b[i].lower < b[j].upper && b[j].lower < b[i].upper;
      const bool space = off[i] < off[j] + b[j].size && off[j] < off[i] + b[i].size;
      if (time && space) return false;
    }
  }
  return true;
}

TEST(PlanCheckerTest, AgreesWithPairwiseCheckOnRandomPlans) {
  std::mt19937 rng(11);
  int invalid = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<Buffer> b;
    std::vector<int64_t> off;
    const int n = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) {
      const int64_t lower = rng() % 10;
      b.push_back({std::to_string(i), lower, lower + 1 + static_cast<int64_t>(rng() % 5),
                   1 + static_cast<int64_t>(rng() % 6)});
      off.push_back(rng() % 12);
    }
    const PlanCheck c = CheckPlan(b, off);
    EXPECT_EQ(c.ok(), BruteValid(b, off));
    invalid += !c.ok();
  }
  EXPECT_GT(invalid, 100);  // the random plans exercise both answers
}

// Hardening finding 1: two live buffers at an offset near 2^63 used to wrap offset + size and
// pass as valid with peak 0.
TEST(PlanCheckerTest, OffsetsWhoseEndWouldOverflowAreViolations) {
  const std::vector<Buffer> b = {{"a", 0, 2, 1000}, {"b", 0, 2, 1000}};
  const std::vector<int64_t> off = {9'223'372'036'854'775'000, 9'223'372'036'854'775'000};
  const PlanCheck c = CheckPlan(b, off);
  EXPECT_FALSE(c.ok());
  ASSERT_FALSE(c.violations.empty());
  EXPECT_NE(c.violations[0].find("ends past the supported arena"), std::string::npos);
  // The largest accepted end is 2^62 exactly.
  EXPECT_TRUE(
      CheckPlan(std::vector<Buffer>{{"a", 0, 1, 1000}}, std::vector<int64_t>{kMaxArenaBytes - 1000})
          .ok());
  EXPECT_FALSE(
      CheckPlan(std::vector<Buffer>{{"a", 0, 1, 1000}}, std::vector<int64_t>{kMaxArenaBytes - 999})
          .ok());
}

TEST(PlanCheckerTest, HalfOpenLifetimesMayShareSpace) {
  std::vector<Buffer> b = {{"a", 0, 5, 10}, {"b", 5, 9, 10}};
  EXPECT_TRUE(CheckPlan(b, std::vector<int64_t>{0, 0}).ok());
  EXPECT_EQ(CheckPlan(b, std::vector<int64_t>{0, 0}).peak_bytes, 10);
}

TEST(PlanCheckerTest, ReportsOverlapAlignmentAndShape) {
  std::vector<Buffer> b = {{"a", 0, 5, 10}, {"b", 4, 9, 10}};
  PlanCheck c = CheckPlan(b, std::vector<int64_t>{0, 8});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.violations[0].find("'a' [0, 10) and 'b' [8, 18) overlap at time 4"),
            std::string::npos)
      << c.violations[0];
  EXPECT_FALSE(CheckPlan(b, std::vector<int64_t>{0, 12}, 8).ok());  // 12 is not 8-aligned
  EXPECT_TRUE(CheckPlan(b, std::vector<int64_t>{0, 16}, 8).ok());
  EXPECT_FALSE(CheckPlan(b, std::vector<int64_t>{0}).ok());
  EXPECT_FALSE(CheckPlan(b, std::vector<int64_t>{-10, 16}).ok());
}

// Hardening finding 9: a plan that does not match its input is named by file and line.
TEST(PlanMatchTest, MismatchesNameTheLine) {
  auto input = ParseLifetimeCsv("id,lower,upper,size\na,0,2,8\nb,1,3,8\n", "in.csv");
  ASSERT_TRUE(input.ok());
  auto parse = [](const char* csv) { return *ParseLifetimeCsv(csv, "plan.csv"); };
  auto ok = PlanOffsetsForInput(
      *input, "in.csv", parse("id,lower,upper,size,offset\nb,1,3,8,8\na,0,2,8,0\n"), "plan.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok, (std::vector<int64_t>{0, 8}));  // in the input's order

  auto upper = PlanOffsetsForInput(
      *input, "in.csv", parse("id,lower,upper,size,offset\na,0,2,8,0\n\nb,1,4,8,8\n"), "plan.csv");
  EXPECT_EQ(upper.status().where(), "plan.csv:4");
  EXPECT_EQ(upper.status().message(), "buffer 'b' has upper 4 here but 3 in in.csv:3");

  auto missing = PlanOffsetsForInput(*input, "in.csv",
                                     parse("id,lower,upper,size,offset\na,0,2,8,0\n"), "plan.csv");
  EXPECT_EQ(missing.status().message(), "the plan has no row for buffer 'b' of in.csv:3");

  auto extra = PlanOffsetsForInput(
      *input, "in.csv", parse("id,lower,upper,size,offset\na,0,2,8,0\nb,1,3,8,8\nc,0,1,8,16\n"),
      "plan.csv");
  EXPECT_EQ(extra.status().where(), "plan.csv:4");

  auto no_offsets = PlanOffsetsForInput(*input, "in.csv", *input, "in.csv");
  EXPECT_EQ(no_offsets.status().message(), "the plan has no 'offset' column");
}

}  // namespace
}  // namespace seedance::mem
