#include "seedance/mem/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

#include "seedance/base/env.h"
#include "seedance/base/fake_env.h"
#include "seedance/base/testing/data.h"
#include "seedance/mem/plan_checker.h"
#include "src/mem/cut_rectangle_for_test.h"
#include "src/mem/greedy_planner.h"

namespace seedance::mem {
namespace {

#ifdef SEEDANCE_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// Reference optimum: every order of placement, each buffer dropped onto the
// highest conflicting buffer placed before it. Every plan can be lowered to
// one of these, so the minimum over all orders is the optimal peak.
int64_t BruteOptimum(const std::vector<Buffer>& b) {
  std::vector<size_t> order(b.size());
  std::iota(order.begin(), order.end(), size_t{0});
  int64_t best = INT64_MAX;
  do {
    std::vector<int64_t> off(b.size(), -1);
    int64_t peak = 0;
    for (size_t i : order) {
      int64_t y = 0;
      for (size_t j = 0; j < b.size(); ++j) {
        if (off[j] >= 0 && b[i].lower < b[j].upper && b[j].lower < b[i].upper) {
          y = std::max(y, off[j] + b[j].size);
        }
      }
      off[i] = y;
      peak = std::max(peak, y + b[i].size);
    }
    best = std::min(best, peak);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

std::vector<Buffer> RandomBuffers(std::mt19937& rng, int n, int64_t max_size = 6) {
  std::vector<Buffer> b;
  for (int i = 0; i < n; ++i) {
    const int64_t lower = rng() % 8;
    b.push_back({std::to_string(i), lower, lower + 1 + static_cast<int64_t>(rng() % 5),
                 1 + static_cast<int64_t>(rng() % max_size)});
  }
  return b;
}

TEST(PlannerTest, ExactMatchesBruteForceOnSmallInstances) {
  std::mt19937 rng(42);
  int greedy_suboptimal = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto buffers = RandomBuffers(rng, 4 + static_cast<int>(rng() % 4), 20);
    const int64_t optimum = BruteOptimum(buffers);
    auto plan = PlanOffsets(buffers, {.algo = PlanAlgo::kExact, .time_limit_s = 5});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_TRUE(CheckPlan(buffers, plan->offsets).ok());
    EXPECT_EQ(plan->peak_bytes, optimum) << "trial " << trial;
    EXPECT_TRUE(plan->optimal);  // small spaces are always exhausted
    EXPECT_LE(plan->lower_bound_bytes, optimum);
    greedy_suboptimal += plan->greedy_peak_bytes > optimum;
  }
  EXPECT_GT(greedy_suboptimal, 0);  // the search has work to do on some of them
}

// With an arena size the planner answers "does a plan fit?": at the brute-force
// optimum it finds one, one byte below it proves that none exists.
TEST(PlannerTest, CapacityQuestionMatchesBruteForce) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const auto buffers = RandomBuffers(rng, 4 + static_cast<int>(rng() % 4), 20);
    const int64_t optimum = BruteOptimum(buffers);
    auto fits = PlanOffsets(buffers, {.time_limit_s = 5, .capacity_bytes = optimum});
    ASSERT_TRUE(fits.ok());
    EXPECT_TRUE(fits->fits) << "trial " << trial;
    EXPECT_LE(fits->peak_bytes, optimum);
    EXPECT_TRUE(CheckPlan(buffers, fits->offsets).ok());
    auto tight = PlanOffsets(buffers, {.time_limit_s = 5, .capacity_bytes = optimum - 1});
    ASSERT_TRUE(tight.ok());
    EXPECT_FALSE(tight->fits) << "trial " << trial;
    EXPECT_TRUE(tight->proven_impossible) << "trial " << trial;
  }
  // Below the max-live bound nothing is searched.
  const std::vector<Buffer> two = {{"a", 0, 2, 5}, {"b", 1, 3, 5}};
  auto below = PlanOffsets(two, {.capacity_bytes = 9});
  ASSERT_TRUE(below.ok());
  EXPECT_TRUE(below->proven_impossible);
  EXPECT_EQ(below->search_nodes, 0);
  EXPECT_EQ(PlanOffsets(two, {.capacity_bytes = -1}).status().where(), "capacity");
}

// A rectangle [0, T) x [0, H) cut at random, time or space, into pieces: every
// piece is a buffer, and the pieces pack into exactly H bytes with no waste.
// Larger than brute force can check, and large enough for the search to split
// into independent parts as it places buffers.
std::vector<Buffer> PerfectPacking(std::mt19937& rng, int64_t horizon, int64_t height, int pieces) {
  return testing::CutRectangle(rng, horizon, height, pieces, /*time_one_in=*/2,
                               /*tries_per_piece=*/4);
}

TEST(PlannerTest, ExactFindsPerfectPackings) {
  std::mt19937 rng(5);
  int searched = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const auto buffers = PerfectPacking(rng, 12 + trial % 20, 256, 20 + trial % 24);
    auto plan =
        PlanOffsets(buffers, {.algo = PlanAlgo::kExact, .time_limit_s = 20, .capacity_bytes = 256});
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(plan->fits) << "trial " << trial << ": peak " << plan->peak_bytes;
    EXPECT_EQ(plan->lower_bound_bytes, 256);
    EXPECT_TRUE(CheckPlan(buffers, plan->offsets).ok());
    searched += plan->algo == "exact";
  }
  EXPECT_GT(searched, 40);  // many of them are beyond the greedy orders
}

// The search's lanes run in lockstep rounds, so the plan is the same with one
// thread or several (only the time differs).
TEST(PlannerTest, SamePlanWhateverTheThreadCount) {
  std::mt19937 rng(11);
  int searched = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const auto buffers = PerfectPacking(rng, 12 + trial % 20, 256, 24 + trial % 20);
    std::vector<int64_t> first;
    for (int threads : {1, 2, 5}) {
      auto plan = PlanOffsets(buffers, {.algo = PlanAlgo::kExact,
                                        .time_limit_s = 20,
                                        .capacity_bytes = 256,
                                        .threads = threads});
      ASSERT_TRUE(plan.ok());
      ASSERT_TRUE(plan->fits) << trial;
      if (threads == 1) {
        first = plan->offsets;
        searched += plan->algo == "exact";
      } else {
        EXPECT_EQ(plan->offsets, first) << "trial " << trial << ", " << threads << " threads";
      }
    }
  }
  EXPECT_GT(searched, 5);
}

TEST(PlannerTest, GreedyPlansAreValidAndNeverClaimOptimalityWrongly) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const auto buffers = RandomBuffers(rng, 1 + static_cast<int>(rng() % 7));
    auto plan = PlanOffsets(buffers, {.algo = PlanAlgo::kGreedy});
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(CheckPlan(buffers, plan->offsets).ok());
    if (plan->optimal) {
      EXPECT_EQ(plan->peak_bytes, BruteOptimum(buffers));
    }
  }
}

// The O(n log n) sweep must place exactly as the general greedy does in
// start-time order.
TEST(PlannerTest, StartSweepEqualsGreedyInStartOrder) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 500; ++trial) {
    const auto buffers = RandomBuffers(rng, 1 + static_cast<int>(rng() % 40), 12);
    const int64_t alignment = trial % 2 ? 4 : 1;
    std::vector<int64_t> lo, up, sz;
    for (const Buffer& b : buffers) {
      lo.push_back(b.lower);
      up.push_back(b.upper);
      sz.push_back((b.size + alignment - 1) / alignment * alignment);
    }
    const auto general =
        internal::PlaceGreedy(lo, up, sz, internal::GreedyOrder::kStart, alignment);
    const auto sweep = internal::PlaceByStartSweep(lo, up, sz, alignment);
    ASSERT_TRUE(general.has_value());
    EXPECT_EQ(sweep.offsets, general->offsets) << "trial " << trial;
    EXPECT_EQ(sweep.peak, general->peak);
  }
}

TEST(PlannerTest, AlignmentIsRespected) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 100; ++trial) {
    const auto buffers = RandomBuffers(rng, 6);
    for (PlanAlgo algo : {PlanAlgo::kGreedy, PlanAlgo::kExact}) {
      auto plan = PlanOffsets(buffers, {.algo = algo, .time_limit_s = 1, .alignment = 8});
      ASSERT_TRUE(plan.ok());
      EXPECT_TRUE(CheckPlan(buffers, plan->offsets, 8).ok());
    }
  }
}

TEST(PlannerTest, BadOptionsAndInput) {
  std::vector<Buffer> buffers = {{"a", 0, 1, 4}};
  EXPECT_EQ(PlanOffsets(buffers, {.alignment = 0}).status().where(), "alignment");
  EXPECT_EQ(PlanOffsets(buffers, {.time_limit_s = -1}).status().where(), "time_limit");
  // Past a day (1e10 s overflowed the deadline and turned the exact search off), NaN, infinity.
  for (const double t : {1e10, 86400.5, std::nan(""), HUGE_VAL}) {
    EXPECT_EQ(PlanOffsets(buffers, {.time_limit_s = t}).status().where(), "time_limit") << t;
  }
  std::vector<Buffer> bad = {{"a", 3, 1, 4}};
  EXPECT_FALSE(PlanOffsets(bad, {}).ok());
  auto empty = PlanOffsets(std::vector<Buffer>{}, {});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->peak_bytes, 0);
}

TEST(PlannerTest, TimeComesFromTheEnv) {
  // A fake clock that never moves: the search only ends by finishing.
  base::FakeEnv env;
  std::mt19937 rng(9);
  const auto buffers = RandomBuffers(rng, 7);
  auto plan = PlanOffsets(buffers, {.algo = PlanAlgo::kExact, .time_limit_s = 0}, &env);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->solve_ms, 0);
}

// The MiniMalloc "challenging" suite: every plan passes the checker, and the
// two instances whose best-known peak this planner reaches at once (C at its
// bound 1,039,360; H at 1,048,576) are reached.
TEST(PlannerTest, MiniMallocInstances) {
  const auto dir = base::testing::DataDir() / "minimalloc";
  SEEDANCE_REQUIRE_DATA(dir);
  for (const char* name : {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}) {
    const auto path = dir / (std::string(name) + ".1048576.csv");
    auto text = base::Env::Default()->ReadFile(path.string());
    ASSERT_TRUE(text.ok()) << path;
    auto file = ParseLifetimeCsv(*text, path.string());
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    // C and H: the search stops as soon as it meets the bound (milliseconds
    // in a release build); the generous limit only keeps sanitizer builds,
    // which run far slower, from failing on time. Not a timing assertion.
    const bool reaches_bound = std::string(name) == "C" || std::string(name) == "H";
    auto plan = PlanOffsets(file->buffers, {.time_limit_s = reaches_bound ? 60.0 : 0.2});
    ASSERT_TRUE(plan.ok());
    const PlanCheck check = CheckPlan(file->buffers, plan->offsets);
    EXPECT_TRUE(check.ok()) << name;
    EXPECT_EQ(check.peak_bytes, plan->peak_bytes) << name;
    EXPECT_GE(plan->peak_bytes, plan->lower_bound_bytes) << name;
    EXPECT_LE(plan->peak_bytes, plan->greedy_peak_bytes) << name;
    if (std::string(name) == "C") {
      EXPECT_EQ(plan->peak_bytes, 1'039'360);
    }
    if (std::string(name) == "H") {
      EXPECT_EQ(plan->peak_bytes, 1'048'576);
    }
    // MiniMalloc's own question, "does it fit in 1,048,576 bytes?", which the
    // search answers for every instance in about a second at most here. Under
    // the sanitizers and coverage instrumentation (the clang `asan` preset)
    // the search runs tens of times slower, so there only a plan it does
    // find is checked: the answer itself is the optimised builds' to give.
    const std::string quick = "ABCDEFGHIJK";
    if (quick.find(name) != std::string::npos) {
      auto fit = PlanOffsets(
          file->buffers, {.time_limit_s = kSanitized ? 5.0 : 60.0, .capacity_bytes = 1'048'576});
      ASSERT_TRUE(fit.ok());
      if (!kSanitized) {
        EXPECT_TRUE(fit->fits) << name;
      }
      if (fit->fits) {
        EXPECT_TRUE(CheckPlan(file->buffers, fit->offsets).ok()) << name;
      }
    }
  }
}

}  // namespace
}  // namespace seedance::mem
