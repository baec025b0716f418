// Private to src/mem: a static index over buffer lifetimes that answers "which
// already placed buffers overlap [lower, upper)?" in O(log n + k log n). Buffers
// are sorted by `lower`; a segment tree over that order keeps the largest
// `upper` among placed buffers, so whole subtrees that cannot reach the query
// are skipped.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace seedance::mem::internal {

class IntervalIndex {
 public:
  // lowers[i], uppers[i]: the lifetime of item i.
  IntervalIndex(std::span<const int64_t> lowers, std::span<const int64_t> uppers);

  void MarkPlaced(size_t item);
  void Reset();  // nothing placed

  // Appends to `out` every placed item whose lifetime intersects [lower, upper).
  void PlacedOverlapping(int64_t lower, int64_t upper, std::vector<size_t>& out) const;

 private:
  void Collect(size_t node, size_t node_lo, size_t node_hi, size_t limit, int64_t lower,
               std::vector<size_t>& out) const;

  std::vector<size_t> order_;  // items sorted by lower
  std::vector<int64_t> sorted_lower_;
  std::vector<size_t> position_;  // item -> index in order_
  std::vector<int64_t> uppers_;
  std::vector<int64_t> tree_;  // max upper of placed items per node (INT64_MIN: none)
  size_t leaves_ = 1;
};

}  // namespace seedance::mem::internal
