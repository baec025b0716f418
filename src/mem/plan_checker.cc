#include "seedance/mem/plan_checker.h"

#include <algorithm>
#include <set>

namespace seedance::mem {

PlanCheck CheckPlan(std::span<const Buffer> buffers, std::span<const int64_t> offsets,
                    int64_t alignment) {
  PlanCheck result;
  auto report = [&result](std::string text) {
    if (result.violations.size() < kMaxViolations) result.violations.push_back(std::move(text));
    ++result.violation_count;
  };
  if (offsets.size() != buffers.size()) {
    report("the plan has " + std::to_string(offsets.size()) + " offsets for " +
           std::to_string(buffers.size()) + " buffers");
    return result;
  }
  // Every end must be representable before any is compared: an offset near 2^63 would wrap
  // offset + size around to a small number and hide an overlap.
  bool in_range = true;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size < 0 || buffers[i].size > kMaxArenaBytes ||
        offsets[i] > kMaxArenaBytes - buffers[i].size) {
      report("buffer '" + buffers[i].id + "' at offset " + std::to_string(offsets[i]) +
             " ends past the supported arena (2^62 bytes)");
      in_range = false;
    }
  }
  if (!in_range) return result;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (offsets[i] < 0) report("buffer '" + buffers[i].id + "' has a negative offset");
    if (alignment > 1 && offsets[i] % alignment != 0) {
      report("buffer '" + buffers[i].id + "' at offset " + std::to_string(offsets[i]) +
             " is not aligned to " + std::to_string(alignment));
    }
    result.peak_bytes = std::max(result.peak_bytes, offsets[i] + buffers[i].size);
  }

  // Sweep: at each time, frees happen before allocations (half-open lives).
  const std::vector<LifetimeEvent> events = OrderedEvents(buffers);
  // Live buffers keyed by (offset, index). Live ranges never overlap each
  // other, except where a violation was already reported; the neighbours of
  // a new range are enough to find any overlap with it.
  std::set<std::pair<int64_t, size_t>> live;
  for (const LifetimeEvent& e : events) {
    const size_t i = e.index;
    const int64_t lo = offsets[i];
    const int64_t hi = offsets[i] + buffers[i].size;
    if (!e.is_alloc) {
      live.erase({lo, i});
      continue;
    }
    auto describe = [&](size_t j) {
      return "'" + buffers[j].id + "' [" + std::to_string(offsets[j]) + ", " +
             std::to_string(offsets[j] + buffers[j].size) + ")";
    };
    auto it = live.lower_bound({lo, 0});
    // Every live range starting in [lo, hi) overlaps the new one.
    for (auto j = it; j != live.end() && j->first < hi; ++j) {
      report("buffers " + describe(j->second) + " and " + describe(i) + " overlap at time " +
             std::to_string(e.time));
    }
    // The live range starting just below lo overlaps when it reaches past lo.
    if (it != live.begin()) {
      auto prev = std::prev(it);
      const size_t j = prev->second;
      if (offsets[j] + buffers[j].size > lo) {
        report("buffers " + describe(j) + " and " + describe(i) + " overlap at time " +
               std::to_string(e.time));
      }
    }
    live.insert({lo, i});
  }
  return result;
}

}  // namespace seedance::mem
