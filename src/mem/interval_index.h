// Private to src/mem: a static index over buffer lifetimes that answers "which
// already placed buffers overlap [lower, upper)?". Buffers are sorted by
// `lower` and grouped in buckets of kBucket; a segment tree over the buckets
// keeps the largest `upper` among placed buffers, so buckets that cannot
// reach the query are skipped and the rest are scanned linearly (cache
// friendly). A query costs O(log(n / kBucket) + (k + kBucket) per touched
// bucket) for k reported buffers.
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

  // Appends to `out` every placed item whose lifetime intersects [lower, upper).
  void PlacedOverlapping(int64_t lower, int64_t upper, std::vector<size_t>& out) const;

 private:
  static constexpr size_t kBucket = 32;

  void Collect(size_t node, size_t bucket_lo, size_t bucket_hi, size_t limit, int64_t lower,
               std::vector<size_t>& out) const;

  std::vector<size_t> order_;  // items sorted by lower
  std::vector<int64_t> sorted_lower_;
  std::vector<int64_t> sorted_upper_;  // upper of order_[i]; INT64_MIN until placed
  std::vector<size_t> position_;       // item -> index in order_
  std::vector<int64_t> uppers_;
  std::vector<int64_t> tree_;  // max placed upper per bucket range (INT64_MIN: none)
  size_t leaves_ = 1;          // buckets, rounded up to a power of two
};

}  // namespace seedance::mem::internal
