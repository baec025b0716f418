#include "src/mem/greedy_planner.h"

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <set>

#include "seedance/base/enum_names.h"
#include "src/mem/interval_index.h"

namespace seedance::mem::internal {

inline constexpr base::EnumTable<GreedyOrder, 6> kGreedyOrderNames = {{
    {GreedyOrder::kSize, "size"},
    {GreedyOrder::kLoad, "load"},
    {GreedyOrder::kLoadLength, "load-length"},
    {GreedyOrder::kStart, "start"},
    {GreedyOrder::kLength, "length"},
    {GreedyOrder::kArea, "area"},
}};

std::string_view GreedyOrderName(GreedyOrder order) {
  return base::EnumName(kGreedyOrderNames, order);
}

namespace {

int64_t AlignUp(int64_t value, int64_t alignment) {
  return alignment <= 1 ? value : (value + alignment - 1) / alignment * alignment;
}

// For each item, the largest total size live at any time of its lifetime:
// loads per elementary time section, then range maxima from a sparse table.
std::vector<int64_t> PeakLoads(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
                               std::span<const int64_t> sizes) {
  const size_t n = sizes.size();
  std::vector<int64_t> times(lowers.begin(), lowers.end());
  times.insert(times.end(), uppers.begin(), uppers.end());
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  auto at = [&](int64_t t) {
    return static_cast<size_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  std::vector<int64_t> load(times.size() + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    load[at(lowers[i])] += sizes[i];
    load[at(uppers[i])] -= sizes[i];
  }
  for (size_t k = 1; k < load.size(); ++k) load[k] += load[k - 1];
  std::vector<std::vector<int64_t>> table{load};
  for (size_t width = 1; 2 * width <= load.size(); width *= 2) {
    const auto& prev = table.back();
    std::vector<int64_t> next(load.size() - 2 * width + 1);
    for (size_t k = 0; k < next.size(); ++k) next[k] = std::max(prev[k], prev[k + width]);
    table.push_back(std::move(next));
  }
  std::vector<int64_t> peak(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t lo = at(lowers[i]);
    const size_t hi = at(uppers[i]);  // sections lo .. hi-1
    // hi > lo (lifetimes are non-empty), so bit_width >= 1; the analyzer cannot tell.
    const size_t level = static_cast<size_t>(std::bit_width(hi - lo) - 1);
    peak[i] = std::max(table[level][lo],
                       table[level][hi - (size_t{1} << level)]);  // NOLINT(clang-analyzer-core.*)
  }
  return peak;
}

std::vector<size_t> Order(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
                          std::span<const int64_t> sizes, GreedyOrder order) {
  std::vector<int64_t> peak;
  if (order == GreedyOrder::kLoad || order == GreedyOrder::kLoadLength) {
    peak = PeakLoads(lowers, uppers, sizes);
  }
  std::vector<size_t> idx(sizes.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  auto length = [&](size_t i) { return uppers[i] - lowers[i]; };
  auto area = [&](size_t i) {
    return static_cast<double>(sizes[i]) * static_cast<double>(length(i));
  };
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    switch (order) {
      case GreedyOrder::kSize:
        if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
        if (length(a) != length(b)) return length(a) > length(b);
        return lowers[a] < lowers[b];
      case GreedyOrder::kLength:
        if (length(a) != length(b)) return length(a) > length(b);
        return sizes[a] > sizes[b];
      case GreedyOrder::kArea:
        if (area(a) != area(b)) return area(a) > area(b);
        return sizes[a] > sizes[b];
      case GreedyOrder::kStart:
        if (lowers[a] != lowers[b]) return lowers[a] < lowers[b];
        return sizes[a] > sizes[b];
      case GreedyOrder::kLoad:
        if (peak[a] != peak[b]) return peak[a] > peak[b];
        if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
        return lowers[a] < lowers[b];
      case GreedyOrder::kLoadLength:
        if (peak[a] != peak[b]) return peak[a] > peak[b];
        if (length(a) != length(b)) return length(a) > length(b);
        if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
        return lowers[a] < lowers[b];
    }
    return false;
  });
  return idx;
}

// Sorts (offset, end) pairs by offset. Large inputs (the overlap lists of the
// idealloc traces reach thousands of items per query) take an LSD radix sort
// over the offsets' range, 11 bits a pass; small ones std::sort. Ties keep no
// particular order, which the gap scan does not need.
void SortByOffset(std::vector<std::pair<int64_t, int64_t>>& ranges,
                  std::vector<std::pair<int64_t, int64_t>>& scratch) {
  const size_t k = ranges.size();
  if (k < 256) {
    std::sort(ranges.begin(), ranges.end());
    return;
  }
  int64_t lo = ranges[0].first, hi = lo;
  for (const auto& r : ranges) {
    lo = std::min(lo, r.first);
    hi = std::max(hi, r.first);
  }
  const uint64_t span = static_cast<uint64_t>(hi - lo);
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  scratch.resize(k);
  size_t counts[kBuckets];
  const int bits = static_cast<int>(std::bit_width(span));
  for (int shift = 0; shift < bits; shift += kBits) {
    std::fill(std::begin(counts), std::end(counts), size_t{0});
    auto digit = [&](const std::pair<int64_t, int64_t>& r) {
      return (static_cast<uint64_t>(r.first - lo) >> shift) & (kBuckets - 1);
    };
    for (const auto& r : ranges) ++counts[digit(r)];
    size_t sum = 0;
    for (size_t& c : counts) {
      const size_t here = c;
      c = sum;
      sum += here;
    }
    for (const auto& r : ranges) scratch[counts[digit(r)]++] = r;
    ranges.swap(scratch);
  }
}

}  // namespace

std::optional<GreedyPlan> PlaceGreedy(std::span<const int64_t> lowers,
                                      std::span<const int64_t> uppers,
                                      std::span<const int64_t> sizes, GreedyOrder order,
                                      int64_t alignment, const std::function<bool()>& expired) {
  const size_t n = sizes.size();
  GreedyPlan plan;
  plan.offsets.assign(n, 0);
  IntervalIndex index(lowers, uppers);
  std::vector<size_t> overlapping;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // (offset, end) of conflicting placed items
  std::vector<std::pair<int64_t, int64_t>> scratch;
  size_t placed = 0;
  for (size_t i : Order(lowers, uppers, sizes, order)) {
    if (expired && (++placed & 31) == 0 && expired()) return std::nullopt;
    overlapping.clear();
    index.PlacedOverlapping(lowers[i], uppers[i], overlapping);
    ranges.clear();
    for (size_t j : overlapping) ranges.emplace_back(plan.offsets[j], plan.offsets[j] + sizes[j]);
    SortByOffset(ranges, scratch);
    int64_t cursor = 0;  // end of the occupied space scanned so far
    int64_t best_offset = -1;
    int64_t best_gap = 0;
    for (const auto& [offset, end] : ranges) {
      const int64_t start = AlignUp(cursor, alignment);
      const int64_t gap = offset - start;
      if (gap >= sizes[i] && (best_offset < 0 || gap < best_gap)) {
        best_offset = start;
        best_gap = gap;
      }
      cursor = std::max(cursor, end);
    }
    if (best_offset < 0) best_offset = AlignUp(cursor, alignment);
    plan.offsets[i] = best_offset;
    plan.peak = std::max(plan.peak, best_offset + sizes[i]);
    index.MarkPlaced(i);
  }
  return plan;
}

GreedyPlan PlaceByStartSweep(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
                             std::span<const int64_t> sizes, int64_t alignment) {
  const size_t n = sizes.size();
  GreedyPlan plan;
  plan.offsets.assign(n, 0);
  // Events: frees first at equal times; allocations at equal times in the
  // start order's tie-break (larger first, then index).
  struct Event {
    int64_t time;
    bool alloc;
    size_t index;
  };
  std::vector<Event> events;
  events.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    events.push_back({lowers[i], true, i});
    events.push_back({uppers[i], false, i});
  }
  std::sort(events.begin(), events.end(), [&](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.alloc != b.alloc) return !a.alloc;
    if (a.alloc && sizes[a.index] != sizes[b.index]) return sizes[a.index] > sizes[b.index];
    return a.index < b.index;
  });
  std::map<int64_t, int64_t> live;             // offset -> end of each live item
  std::set<std::pair<int64_t, int64_t>> gaps;  // (size, start) between live items
  auto gap_before = [&](std::map<int64_t, int64_t>::iterator it) {
    const int64_t start = it == live.begin() ? 0 : std::prev(it)->second;
    return std::make_pair(AlignUp(start, alignment), it->first);
  };
  auto add_gap = [&](int64_t start, int64_t end) {
    if (end > start) gaps.emplace(end - start, start);
  };
  auto drop_gap = [&](int64_t start, int64_t end) {
    if (end > start) gaps.erase({end - start, start});
  };
  for (const Event& e : events) {
    const size_t i = e.index;
    if (!e.alloc) {
      auto it = live.find(plan.offsets[i]);
      const auto [before_start, before_end] = gap_before(it);
      drop_gap(before_start, before_end);
      auto next = std::next(it);
      if (next != live.end()) {
        const auto [after_start, after_end] = gap_before(next);
        drop_gap(after_start, after_end);
      }
      live.erase(it);
      if (next != live.end()) {
        const auto [start, end] = gap_before(next);
        add_gap(start, end);
      }
      continue;
    }
    // The smallest gap that fits, lowest offset among equal sizes (the set is
    // ordered by (size, start)); else on top of every live item.
    int64_t offset;
    auto fit = gaps.lower_bound({sizes[i], INT64_MIN});
    if (fit != gaps.end()) {
      offset = fit->second;
      gaps.erase(fit);
    } else {
      offset = live.empty() ? 0 : AlignUp(std::prev(live.end())->second, alignment);
    }
    auto it = live.emplace(offset, offset + sizes[i]).first;
    // The item starts its gap, so only the space after it, up to the next
    // live item, is a gap again.
    auto next = std::next(it);
    if (next != live.end()) {
      const auto [start, end] = gap_before(next);
      add_gap(start, end);
    }
    plan.offsets[i] = offset;
    plan.peak = std::max(plan.peak, offset + sizes[i]);
  }
  return plan;
}

}  // namespace seedance::mem::internal
