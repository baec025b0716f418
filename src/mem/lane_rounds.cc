#include "src/mem/lane_rounds.h"

#include <algorithm>
#include <thread>

namespace seedance::mem::internal {

class LaneRounds {
 public:
  LaneRounds(size_t lanes, int threads)
      : granted_(lanes, 0),
        reached_(lanes, 0),
        finished_(lanes, false),
        results_(lanes),
        free_threads_(std::max(threads, 1)) {}

  // On the lane's thread: wait until the round lets it run and a thread is
  // free. false when the run is over instead.
  bool Begin(size_t lane) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stop_ || (granted_[lane] > reached_[lane] && free_threads_ > 0); });
    if (stop_) return false;
    --free_threads_;
    return true;
  }

  // On the lane's thread: its slice is done (or the job finished, with
  // `result`); gives its thread back.
  void End(size_t lane, std::optional<int> result, bool finished) {
    std::lock_guard lock(mu_);
    ++free_threads_;
    reached_[lane] = granted_[lane];
    if (finished) {
      finished_[lane] = true;
      results_[lane] = result;
    }
    cv_.notify_all();
  }

  bool NextSlice(size_t lane) {
    End(lane, std::nullopt, false);
    return Begin(lane);
  }

  // The calling thread: one round, then the results so far.
  std::vector<std::optional<int>> Round() {
    std::unique_lock lock(mu_);
    ++round_;
    for (size_t i = 0; i < granted_.size(); ++i) {
      if (!finished_[i]) granted_[i] = round_;
    }
    cv_.notify_all();
    cv_.wait(lock, [&] {
      for (size_t i = 0; i < granted_.size(); ++i) {
        if (!finished_[i] && reached_[i] < round_) return false;
      }
      return true;
    });
    return results_;
  }

  bool AllFinished() {
    std::lock_guard lock(mu_);
    return std::all_of(finished_.begin(), finished_.end(), [](bool f) { return f; });
  }

  void Stop() {
    std::lock_guard lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t round_ = 0;
  std::vector<int64_t> granted_;  // the last round each lane may run in
  std::vector<int64_t> reached_;  // the last round each lane has finished its slice of
  std::vector<bool> finished_;
  std::vector<std::optional<int>> results_;
  int free_threads_;
  bool stop_ = false;
};

bool SliceGate::NextSlice() { return rounds_->NextSlice(lane_); }

std::vector<std::optional<int>> RunInRounds(
    std::span<const LaneJob> jobs, int threads,
    const std::function<bool(std::span<const std::optional<int>>)>& decide,
    const std::function<bool()>& out_of_time) {
  LaneRounds rounds(jobs.size(), threads);
  std::vector<std::thread> workers;
  workers.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    workers.emplace_back([&rounds, &jobs, i] {
      if (!rounds.Begin(i)) return;
      SliceGate gate(&rounds, i);
      const int result = jobs[i](gate);
      // A job that was told to stop unwinds with whatever it returns; the
      // run is over by then and no longer reads the results.
      rounds.End(i, result, true);
    });
  }
  std::vector<std::optional<int>> results(jobs.size());
  while (!jobs.empty() && !out_of_time()) {
    results = rounds.Round();
    if (decide(results) || rounds.AllFinished()) break;
  }
  rounds.Stop();
  for (auto& w : workers) w.join();
  return results;
}

}  // namespace seedance::mem::internal
