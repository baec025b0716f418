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
  position_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    sorted_lower_[i] = lowers[order_[i]];
    position_[order_[i]] = i;
  }
  while (leaves_ < std::max<size_t>(n, 1)) leaves_ *= 2;
  tree_.assign(2 * leaves_, kNone);
}

void IntervalIndex::Reset() { std::fill(tree_.begin(), tree_.end(), kNone); }

void IntervalIndex::MarkPlaced(size_t item) {
  size_t node = leaves_ + position_[item];
  tree_[node] = uppers_[item];
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

void IntervalIndex::Collect(size_t node, size_t node_lo, size_t node_hi, size_t limit,
                            int64_t lower, std::vector<size_t>& out) const {
  if (node_lo >= limit || tree_[node] <= lower) return;  // nothing here reaches past `lower`
  if (node >= leaves_) {
    out.push_back(order_[node - leaves_]);
    return;
  }
  const size_t mid = (node_lo + node_hi) / 2;
  Collect(2 * node, node_lo, mid, limit, lower, out);
  Collect(2 * node + 1, mid, node_hi, limit, lower, out);
}

}  // namespace seedance::mem::internal
