// RunInRounds: every unfinished job gets one slice per round, the decision
// after each round sees exactly the jobs finished so far, and none of it
// depends on the thread count.
#include "src/mem/lane_rounds.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <vector>

namespace seedance::mem::internal {
namespace {

// A job that needs `slices` slices and returns `value`; counts the slices it
// was given and whether it was told to stop.
struct CountingJob {
  int slices = 0;
  int value = 0;
  std::atomic<int> used{0};
  std::atomic<bool> stopped{false};

  int operator()(SliceGate& gate) {
    for (int k = 1; k < slices; ++k) {
      ++used;
      if (!gate.NextSlice()) {
        stopped = true;
        return -1;
      }
    }
    ++used;
    return value;
  }
};

TEST(LaneRounds, FirstFinisherDecidesWhateverTheThreads) {
  for (int threads : {1, 2, 3, 8}) {
    // Jobs finish after 7, 3, 3 and 12 slices: rounds 1..3 see nothing,
    // round 3 sees jobs 1 and 2 at once.
    std::vector<CountingJob> state(4);
    const int slices[] = {7, 3, 3, 12};
    for (size_t i = 0; i < state.size(); ++i) {
      state[i].slices = slices[i];
      state[i].value = 100 + static_cast<int>(i);
    }
    std::vector<LaneJob> jobs;
    for (auto& s : state) jobs.emplace_back([&s](SliceGate& g) { return s(g); });
    int rounds = 0;
    const auto results = RunInRounds(
        jobs, threads,
        [&](std::span<const std::optional<int>> r) {
          ++rounds;
          for (const auto& x : r) {
            if (x) return true;
          }
          return false;
        },
        [] { return false; });
    EXPECT_EQ(rounds, 3) << threads;
    EXPECT_EQ(results[0], std::nullopt) << threads;
    EXPECT_EQ(results[1], 101) << threads;
    EXPECT_EQ(results[2], 102) << threads;
    EXPECT_EQ(results[3], std::nullopt) << threads;
    // The unfinished jobs had exactly three slices, then were stopped.
    EXPECT_EQ(state[0].used.load(), 3) << threads;
    EXPECT_EQ(state[3].used.load(), 3) << threads;
    EXPECT_TRUE(state[0].stopped) << threads;
    EXPECT_TRUE(state[3].stopped) << threads;
    EXPECT_FALSE(state[1].stopped) << threads;
  }
}

TEST(LaneRounds, RunsUntilAllFinishWhenNothingDecides) {
  std::vector<CountingJob> state(3);
  for (size_t i = 0; i < state.size(); ++i) {
    state[i].slices = 1 + 2 * static_cast<int>(i);
    state[i].value = static_cast<int>(i);
  }
  std::vector<LaneJob> jobs;
  for (auto& s : state) jobs.emplace_back([&s](SliceGate& g) { return s(g); });
  int rounds = 0;
  const auto results = RunInRounds(
      jobs, 2,
      [&](std::span<const std::optional<int>>) {
        ++rounds;
        return false;
      },
      [] { return false; });
  EXPECT_EQ(rounds, 5);  // the longest job needs five slices
  for (size_t i = 0; i < state.size(); ++i) {
    EXPECT_EQ(results[i], static_cast<int>(i));
    EXPECT_EQ(state[i].used.load(), state[i].slices);
  }
}

TEST(LaneRounds, OutOfTimeStopsBetweenRounds) {
  std::vector<CountingJob> state(2);
  for (auto& s : state) s.slices = 1000;
  std::vector<LaneJob> jobs;
  for (auto& s : state) jobs.emplace_back([&s](SliceGate& g) { return s(g); });
  int asked = 0;
  const auto results = RunInRounds(
      jobs, 2, [](std::span<const std::optional<int>>) { return false; },
      [&] { return ++asked > 4; });  // four rounds, then time is up
  EXPECT_EQ(results[0], std::nullopt);
  EXPECT_EQ(results[1], std::nullopt);
  for (const auto& s : state) {
    EXPECT_EQ(s.used.load(), 4);
    EXPECT_TRUE(s.stopped);
  }
}

TEST(LaneRounds, NoTimeAtAllRunsNothing) {
  CountingJob one;
  one.slices = 1;
  std::vector<LaneJob> jobs = {[&one](SliceGate& g) { return one(g); }};
  const auto results = RunInRounds(
      jobs, 1, [](std::span<const std::optional<int>>) { return true; }, [] { return true; });
  EXPECT_EQ(results[0], std::nullopt);
  EXPECT_EQ(one.used.load(), 0);
}

}  // namespace
}  // namespace seedance::mem::internal
