// Private to src/mem: runs several resumable jobs in lockstep rounds on a few
// threads, so that which job "wins" does not depend on timing.
//
// Each job runs on its own thread and does its work in slices: when a slice
// is used up it calls SliceGate::NextSlice(), which blocks until the next
// round. A round gives every unfinished job one slice; at most `threads`
// jobs run at once. After each round `decide` sees the results of the jobs
// finished so far (by job index) and says whether the run is over; so does
// `out_of_time`, which the calling thread alone evaluates, between rounds.
// When the run is over, NextSlice returns false in every job still running
// and the job unwinds. Since a slice is a fixed amount of a job's own work,
// the set of jobs finished after round r, and so the decision, is the same
// for any thread count and any scheduling.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace seedance::mem::internal {

class LaneRounds;

class SliceGate {
 public:
  SliceGate(LaneRounds* rounds, size_t lane) : rounds_(rounds), lane_(lane) {}  // RunInRounds's
  // The job's slice is used up: waits for the next round. false: stop now.
  bool NextSlice();

 private:
  LaneRounds* rounds_;
  size_t lane_;
};

using LaneJob = std::function<int(SliceGate&)>;

// Per job: what it returned when it finished, or nullopt when the run ended
// first (or the job was stopped and unwound).
std::vector<std::optional<int>> RunInRounds(
    std::span<const LaneJob> jobs, int threads,
    const std::function<bool(std::span<const std::optional<int>>)>& decide,
    const std::function<bool()>& out_of_time);

}  // namespace seedance::mem::internal
