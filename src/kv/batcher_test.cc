// The batcher's decisions against Triton's documented rules, with the
// arithmetic in the comments; and the threaded queue end to end.
#include "seedance/kv/batcher.h"

#include <gtest/gtest.h>

#include <thread>

namespace seedance::kv {
namespace {

using std::chrono::microseconds;

constexpr int64_t kUs = 1000;             // nanoseconds
using Clock = std::chrono::steady_clock;  // the threaded test measures real waits

TEST(Batcher, TritonRules) {
  BatcherConfig c;
  c.max_batch_size = 8;
  c.preferred_batch_sizes = {4, 6};
  c.max_queue_delay = microseconds(1000);
  const int64_t t0 = 123'456'789;  // any monotonic reading
  EXPECT_EQ(BatchSizeNow(c, 0, t0, t0, false), 0);
  EXPECT_EQ(BatchSizeNow(c, 3, t0, t0, false), 0);               // below every preferred: wait
  EXPECT_EQ(BatchSizeNow(c, 3, t0, t0 + 1000 * kUs, false), 3);  // delay expired: take all
  EXPECT_EQ(BatchSizeNow(c, 4, t0, t0, false), 4);               // a preferred size: now
  EXPECT_EQ(BatchSizeNow(c, 5, t0, t0, false), 4);               // largest preferred that fits
  EXPECT_EQ(BatchSizeNow(c, 7, t0, t0, false), 6);
  EXPECT_EQ(BatchSizeNow(c, 20, t0, t0, false), 8);  // the maximum
  EXPECT_EQ(BatchSizeNow(c, 2, t0, t0, true), 2);    // stopping: drain
  c.preferred_batch_sizes.clear();
  EXPECT_EQ(BatchSizeNow(c, 7, t0, t0 + 999 * kUs, false), 0);  // no preference: wait for 8
  EXPECT_EQ(BatchSizeNow(c, 8, t0, t0, false), 8);
}

TEST(Batcher, ThreadedQueueKeepsOrderAndRespectsTheDelay) {
  BatcherConfig c;
  c.max_batch_size = 4;
  c.max_queue_delay = microseconds(20000);
  DynamicBatcher<int> b(c);
  for (int i = 0; i < 6; ++i) b.Enqueue(i);
  EXPECT_EQ(b.NextBatch(), (std::vector<int>{0, 1, 2, 3}));  // full batch at once
  const auto t = Clock::now();
  EXPECT_EQ(b.NextBatch(), (std::vector<int>{4, 5}));  // after the queue delay
  EXPECT_GE(Clock::now() - t, microseconds(15000));
  std::thread stopper([&] { b.Stop(); });
  EXPECT_TRUE(b.NextBatch().empty());
  stopper.join();
}

}  // namespace
}  // namespace seedance::kv
