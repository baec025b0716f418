// Private to src/mem: greedy placement in a fixed order with best-fit gaps.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace seedance::mem::internal {

// The orders tried by the greedy planner, in this order: size (TFLite's
// choice); the peak load over the item's lifetime, ties by size ("load") or by
// lifetime length ("load-length") — items live at the busiest times first, in
// the spirit of TFLite's "greedy by breadth"; start time (a sweep in
// O(n log n)); lifetime length; area. All but the start order cost
// O(n log n + Σ k log k) for k conflicting placed items per item.
enum class GreedyOrder { kSize, kLoad, kLoadLength, kStart, kLength, kArea };
inline constexpr GreedyOrder kAllGreedyOrders[] = {GreedyOrder::kSize,       GreedyOrder::kLoad,
                                                   GreedyOrder::kLoadLength, GreedyOrder::kStart,
                                                   GreedyOrder::kLength,     GreedyOrder::kArea};
std::string_view GreedyOrderName(GreedyOrder order);

struct GreedyPlan {
  std::vector<int64_t> offsets;
  int64_t peak = 0;  // max offset + size (sizes as given, i.e. padded)
};

// Places every item in `order`: at the offset of the smallest gap between the
// already placed items it conflicts with that fits it (lowest such offset on
// ties), or on top of them all. `sizes` must be multiples of `alignment`.
// `expired`, when given, is polled now and then; nullopt when it said yes.
std::optional<GreedyPlan> PlaceGreedy(std::span<const int64_t> lowers,
                                      std::span<const int64_t> uppers,
                                      std::span<const int64_t> sizes, GreedyOrder order,
                                      int64_t alignment,
                                      const std::function<bool()>& expired = nullptr);

// The start-time order as a sweep over time: the items an item conflicts with
// when it is placed are exactly those live at its start, kept in offset order
// with their gaps in a size-ordered set. Same result as PlaceGreedy(kStart),
// in O(n log n).
GreedyPlan PlaceByStartSweep(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
                             std::span<const int64_t> sizes, int64_t alignment);

}  // namespace seedance::mem::internal
