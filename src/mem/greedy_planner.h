// Private to src/mem: greedy placement in a fixed order with best-fit gaps.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace seedance::mem::internal {

// The orders tried by the greedy planner.
enum class GreedyOrder { kSize, kLength, kArea, kStart };
inline constexpr GreedyOrder kAllGreedyOrders[] = {GreedyOrder::kSize, GreedyOrder::kLength,
                                                   GreedyOrder::kArea, GreedyOrder::kStart};
std::string_view GreedyOrderName(GreedyOrder order);

struct GreedyPlan {
  std::vector<int64_t> offsets;
  int64_t peak = 0;  // max offset + size (sizes as given, i.e. padded)
};

// Places every item in `order`: at the offset of the smallest gap between the
// already placed items it conflicts with that fits it (lowest such offset on
// ties), or on top of them all. `sizes` must be multiples of `alignment`.
GreedyPlan PlaceGreedy(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
                       std::span<const int64_t> sizes, GreedyOrder order, int64_t alignment);

}  // namespace seedance::mem::internal
