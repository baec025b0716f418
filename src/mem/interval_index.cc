#include "src/mem/interval_index.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace seedance::mem::internal {

namespace {
constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
}

IntervalIndex::IntervalIndex(std::span<const int64_t> lowers, std::span<const int64_t> uppers)
    : uppers_(uppers.begin(), uppers.end()) {
  const size_t n = lowers.size();
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), size_t{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return lowers[a] < lowers[b]; });
  sorted_lower_.resize(n);
  sorted_upper_.assign(n, kNone);
  position_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    sorted_lower_[i] = lowers[order_[i]];
    position_[order_[i]] = i;
  }
  const size_t buckets = std::max<size_t>((n + kBucket - 1) / kBucket, 1);
  while (leaves_ < buckets) leaves_ *= 2;
  tree_.assign(2 * leaves_, kNone);
}

void IntervalIndex::MarkPlaced(size_t item) {
  const size_t pos = position_[item];
  sorted_upper_[pos] = uppers_[item];
  size_t node = leaves_ + pos / kBucket;
  tree_[node] = std::max(tree_[node], uppers_[item]);
  for (node /= 2; node >= 1; node /= 2) {
    tree_[node] = std::max(tree_[2 * node], tree_[2 * node + 1]);
  }
}

void IntervalIndex::PlacedOverlapping(int64_t lower, int64_t upper,
                                      std::vector<size_t>& out) const {
  // Items with lower < upper form a prefix of the sorted order.
  const size_t limit = static_cast<size_t>(
      std::lower_bound(sorted_lower_.begin(), sorted_lower_.end(), upper) - sorted_lower_.begin());
  if (limit == 0) return;
  Collect(1, 0, leaves_, limit, lower, out);
}

void IntervalIndex::Collect(size_t node, size_t bucket_lo, size_t bucket_hi, size_t limit,
                            int64_t lower, std::vector<size_t>& out) const {
  if (bucket_lo * kBucket >= limit || tree_[node] <= lower) return;
  if (node >= leaves_) {
    const size_t end = std::min(limit, (bucket_lo + 1) * kBucket);
    for (size_t i = bucket_lo * kBucket; i < end; ++i) {
      if (sorted_upper_[i] > lower) out.push_back(order_[i]);  // unplaced ones hold kNone
    }
    return;
  }
  const size_t mid = (bucket_lo + bucket_hi) / 2;
  Collect(2 * node, bucket_lo, mid, limit, lower, out);
  Collect(2 * node + 1, mid, bucket_hi, limit, lower, out);
}

}  // namespace seedance::mem::internal
