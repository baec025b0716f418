// A request batcher with the semantics of NVIDIA Triton's dynamic batcher
// (SPEC KV-5): requests queue up; a batch leaves as soon as
//   - max_batch_size requests are waiting (it takes that many), or
//   - the queue holds a preferred batch size (it takes the largest one that fits), or
//   - the oldest request has waited max_queue_delay (it takes what is there, up to the maximum);
// on Stop() whatever is left leaves in batches. FIFO order throughout.
//
// Thread safety: Enqueue, NextBatch and Stop may be called from any threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace seedance::kv {

struct BatcherConfig {
  int max_batch_size = 8;
  std::vector<int> preferred_batch_sizes;  // each in 1..max_batch_size
  std::chrono::microseconds max_queue_delay{10000};
};

// The pure decision, for tests: how many of `queued` requests (the oldest
// enqueued at `oldest`) leave at `now`; 0 = wait.
int BatchSizeNow(const BatcherConfig& config, int queued,
                 std::chrono::steady_clock::time_point oldest,
                 std::chrono::steady_clock::time_point now, bool stopping);

template <typename Request>
class DynamicBatcher {
 public:
  explicit DynamicBatcher(BatcherConfig config) : config_(std::move(config)) {}

  void Enqueue(Request r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back({std::move(r), std::chrono::steady_clock::now()});
    }
    cv_.notify_all();
  }

  // Blocks until a batch is ready; an empty vector once stopped and drained.
  std::vector<Request> NextBatch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      const auto now = std::chrono::steady_clock::now();
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
        cv_.wait_until(lock, queue_.front().enqueued + config_.max_queue_delay);
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
    std::chrono::steady_clock::time_point enqueued;
  };
  BatcherConfig config_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> queue_;
  bool stopping_ = false;
};

}  // namespace seedance::kv
