// The exact search's decisions with its transposition table against the
// same search without it. The table can only change an answer by ending a
// node wrongly, and an answer is "no" as soon as one lane runs out of nodes:
// so the instances are exact fits, where the search backtracks a lot and a
// wrong end would show as a "no" (or as a plan that does not check). They
// are rectangles cut mostly across, into pieces that share lifetimes, so
// that many orders of placement reach the same state.
#include "src/mem/exact_search.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/mem/plan_checker.h"
#include "src/mem/cut_rectangle_for_test.h"

namespace seedance::mem::internal {
namespace {

TEST(ExactSearch, TranspositionsChangeNoAnswer) {
  std::mt19937 rng(17);
  base::Env* env = base::Env::Default();
  const int64_t no_deadline = std::numeric_limits<int64_t>::max();
  int64_t hits = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int64_t height = 256;
    // Three cuts in four across: many pieces share a lifetime.
    const auto buffers = testing::CutRectangle(rng, 8 + trial % 9, height, 30 + trial % 25,
                                               /*time_one_in=*/4, /*tries_per_piece=*/8);
    std::vector<int64_t> lo, up, sz;
    for (const Buffer& b : buffers) {
      lo.push_back(b.lower);
      up.push_back(b.upper);
      sz.push_back(b.size);
    }
    for (bool transpositions : {true, false}) {
      const DecisionResult r = DecideCapacity(lo, up, sz, height, env, no_deadline,
                                              {.threads = 2, .transpositions = transpositions});
      ASSERT_EQ(r.decision, Decision::kFound) << "trial " << trial << ", table " << transpositions;
      EXPECT_TRUE(CheckPlan(buffers, r.offsets).ok()) << "trial " << trial;
      EXPECT_LE(r.peak, height);
      if (transpositions) {
        hits += r.transposition_hits;
      } else {
        EXPECT_EQ(r.transposition_hits, 0);
      }
    }
  }
  EXPECT_GT(hits, 100);  // the table did end nodes, and no answer changed
}

}  // namespace
}  // namespace seedance::mem::internal
