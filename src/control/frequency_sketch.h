// The frequency sketch of W-TinyLFU (cache_policy.h, flat_scan_lfu.h): a count-min sketch of
// four saturating 4-bit counters per key (a byte each here), all four in one 64-byte block so
// an estimate costs one cache line, as Caffeine lays it out. The counters are halved when the
// increments reach `reset_at` (10 x the cache's capacity), which ages old popularity.
//
// It is a view: the counters and the increment count live in memory its owner provides (a
// vector, or a shared mapping), so one implementation serves both policies.
//
// Thread safety: none; the owner's lock guards it.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "seedance/base/hash.h"
#include "seedance/control/cache_policy.h"

namespace seedance::control::internal {

inline constexpr size_t kSketchBlockBytes = 64;

// Blocks for a cache of `capacity` entries: about four counters per entry, at least one block.
inline size_t SketchBlocks(size_t capacity) {
  return std::max<size_t>(1, std::bit_ceil(std::max<size_t>(capacity, 1)) / 16);
}

inline uint64_t MixKey(CacheKey k) { return base::Mix64(k); }

class SketchView {
 public:
  // counters: blocks x 64 bytes; samples: the increments since the last halving.
  SketchView(uint8_t* counters, size_t blocks, uint64_t* samples, uint64_t reset_at)
      : counters_(counters), mask_(blocks - 1), samples_(samples), reset_at_(reset_at) {}

  void Increment(CacheKey k) {
    const uint64_t h = MixKey(k);
    uint8_t* block = counters_ + (h & mask_) * kSketchBlockBytes;
    for (int r = 0; r < 4; ++r) {
      uint8_t& c = block[Slot(h, r)];
      if (c < 15) ++c;
    }
    if (++*samples_ >= reset_at_) {
      for (size_t i = 0; i < (mask_ + 1) * kSketchBlockBytes; ++i) {
        counters_[i] = static_cast<uint8_t>(counters_[i] / 2);
      }
      *samples_ /= 2;
    }
  }

  int Estimate(CacheKey k) const {
    const uint64_t h = MixKey(k);
    const uint8_t* block = counters_ + (h & mask_) * kSketchBlockBytes;
    int m = 15;
    for (int r = 0; r < 4; ++r) m = std::min<int>(m, block[Slot(h, r)]);
    return m;
  }

 private:
  // Row r owns bytes 16r..16r+15 of the block; the key's byte in it comes from the hash's high
  // bits (the low bits chose the block).
  static size_t Slot(uint64_t h, int r) {
    return static_cast<size_t>(16 * r) + static_cast<size_t>((h >> (40 + 4 * r)) & 15);
  }

  uint8_t* counters_;
  size_t mask_;
  uint64_t* samples_;
  uint64_t reset_at_;
};

inline uint64_t SketchResetAt(size_t capacity) { return std::max<uint64_t>(10 * capacity, 16); }

}  // namespace seedance::control::internal
