// A request batcher with the semantics of NVIDIA Triton's dynamic batcher
// (feature KV-5): requests queue up; a batch leaves as soon as
//   - max_batch_size requests are waiting (it takes that many), or
//   - the queue holds a preferred batch size (it takes the largest one that fits), or
//   - the oldest request has waited max_queue_delay (it takes what is there, up to the maximum);
// on Stop() whatever is left leaves in batches. FIFO order throughout.
//
// Time comes from the Env it is given (monotonic nanoseconds), so a test can drive BatchSizeNow
// with its own clock.
//
// Thread safety: Enqueue, NextBatch and Stop may be called from any threads.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "seedance/base/env.h"

namespace seedance::kv {

struct BatcherConfig {
  int max_batch_size = 8;
  std::vector<int> preferred_batch_sizes;  // each in 1..max_batch_size
  std::chrono::microseconds max_queue_delay{10000};
};

// The pure decision, for tests: how many of `queued` requests (the oldest
// enqueued at `oldest_ns`) leave at `now_ns` (monotonic nanoseconds); 0 = wait.
int BatchSizeNow(const BatcherConfig& config, int queued, int64_t oldest_ns, int64_t now_ns,
                 bool stopping);

template <typename Request>
class DynamicBatcher {
 public:
  explicit DynamicBatcher(BatcherConfig config, base::Env& env = *base::Env::Default())
      : config_(std::move(config)), env_(env) {}

  void Enqueue(Request r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back({std::move(r), env_.NowMonotonicNanos()});
    }
    cv_.notify_all();
  }

  // Blocks until a batch is ready; an empty vector once stopped and drained.
  std::vector<Request> NextBatch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      const int64_t now = env_.NowMonotonicNanos();
      const int n = static_cast<int>(queue_.size());
      if (n == 0 && stopping_) return {};
      const int take =
          n == 0 ? 0 : BatchSizeNow(config_, n, queue_.front().enqueued, now, stopping_);
      if (take > 0) {
        std::vector<Request> batch;
        batch.reserve(static_cast<size_t>(take));
        for (int i = 0; i < take; ++i) {
          batch.push_back(std::move(queue_.front().request));
          queue_.pop_front();
        }
        return batch;
      }
      if (n == 0) {
        cv_.wait(lock);
      } else {
        const int64_t deadline =
            queue_.front().enqueued +
            std::chrono::duration_cast<std::chrono::nanoseconds>(config_.max_queue_delay).count();
        cv_.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(0, deadline - now)));
      }
    }
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
  }

 private:
  struct Entry {
    Request request;
    int64_t enqueued;  // monotonic nanoseconds
  };
  BatcherConfig config_;
  base::Env& env_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> queue_;
  bool stopping_ = false;
};

}  // namespace seedance::kv
