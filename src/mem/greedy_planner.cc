#include "src/mem/greedy_planner.h"

#include <algorithm>
#include <numeric>

#include "src/mem/interval_index.h"

namespace seedance::mem::internal {

std::string_view GreedyOrderName(GreedyOrder order) {
  switch (order) {
    case GreedyOrder::kSize:
      return "size";
    case GreedyOrder::kLength:
      return "length";
    case GreedyOrder::kArea:
      return "area";
    case GreedyOrder::kStart:
      return "start";
  }
  return "?";
}

namespace {

int64_t AlignUp(int64_t value, int64_t alignment) {
  return alignment <= 1 ? value : (value + alignment - 1) / alignment * alignment;
}

std::vector<size_t> Order(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
                          std::span<const int64_t> sizes, GreedyOrder order) {
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
    }
    return false;
  });
  return idx;
}

}  // namespace

GreedyPlan PlaceGreedy(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
                       std::span<const int64_t> sizes, GreedyOrder order, int64_t alignment) {
  const size_t n = sizes.size();
  GreedyPlan plan;
  plan.offsets.assign(n, 0);
  IntervalIndex index(lowers, uppers);
  std::vector<size_t> overlapping;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // (offset, end) of conflicting placed items
  for (size_t i : Order(lowers, uppers, sizes, order)) {
    overlapping.clear();
    index.PlacedOverlapping(lowers[i], uppers[i], overlapping);
    ranges.clear();
    for (size_t j : overlapping) ranges.emplace_back(plan.offsets[j], plan.offsets[j] + sizes[j]);
    std::sort(ranges.begin(), ranges.end());
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

}  // namespace seedance::mem::internal
