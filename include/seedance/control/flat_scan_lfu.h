// Seedance's cache policy — W-TinyLFU with a scan detector, the rules in cache_policy.h — with
// its whole state in one caller-provided block of memory of a size fixed at Init: no pointers
// and no allocation after it. Two things follow. An access touches a few flat arrays instead of
// chasing list nodes and hash buckets through the heap (the host tier's P99). And the block can
// live in a shared mapping, so the DataLoader's worker processes share one cache
// (tiered_cache.h): every link is a node number, valid in any process that maps the block.
//
// Layout (offsets kept in the header; each array starts on a 64-byte boundary):
//   nodes[c + 1]     key, prev, next, where (free / window / probation / protected / pinned);
//                    one spare so a miss can be placed before its victim leaves
//   index[T]         node numbers by key, open addressing with linear probing, T = bit_ceil(2(c+1))
//   sketch           frequency_sketch.h's blocks (4 counters a key in one cache line)
//   ring[R]          the scan detector's last R = max(2c, 16) accesses (key, repeat flag)
//   window[U]        key -> its occurrences in the ring, open addressing, U = bit_ceil(2R)
//
// A node's number is stable while its key is held; the tiered cache uses it as the key's data
// slot. Invariants (Check() walks them and names the first that fails):
//   held = |window| + |probation| + |protected| + |pinned| <= c,   free nodes = c + 1 - held;
//   each held key is in the index exactly once and points at its node;
//   each list's links are mutual and its length is its size field;
//   |window| <= window_cap,  |protected| <= protected_cap,
//   |probation| + |protected| <= c - |pinned| - window_cap;
//   the ring's repeat flags number `repeats`, and the window counts sum to the filled slots.
//
// Thread safety: none; the owner's lock (tiered_cache.h's, or the single caller's) guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "seedance/control/cache_policy.h"

namespace seedance::control {

inline constexpr uint32_t kNoSlot = UINT32_MAX;

struct LfuEviction {
  CacheKey key = 0;
  uint32_t slot = kNoSlot;
};

struct LfuAccess {
  bool hit = false;
  uint32_t slot = kNoSlot;  // the key's node after the access; kNoSlot when not admitted
  bool evicted = false;     // a held key left to make room (never the accessed key)
  LfuEviction victim;
};

class FlatScanLfu {
 public:
  // Bytes of state for `capacity` entries (the block must be 64-byte aligned).
  static size_t BytesFor(size_t capacity);
  // Lays out an empty cache in `mem`. detect_scans = false gives plain W-TinyLFU.
  static FlatScanLfu Init(void* mem, size_t capacity, bool detect_scans = true);
  // Views a block laid out by Init, in this process or another; throws std::invalid_argument
  // when the block is not one (magic, version, size).
  static FlatScanLfu Attach(void* mem, size_t bytes);

  // One access (a get): a hit updates recency, a miss is admitted unless scanning with a full
  // cache. The sketch and the scan detector count it.
  LfuAccess Access(CacheKey key);
  // Places `key` without counting it (a pre-warm, or a demotion from the tier above); kNoSlot
  // when scanning with a full cache. Evictions are appended to `evicted`.
  uint32_t Insert(CacheKey key, std::vector<LfuEviction>* evicted);
  // The key's node, or kNoSlot; no state changes.
  uint32_t Find(CacheKey key) const;
  // Drops a held key (its data went bad); false if not held.
  bool Erase(CacheKey key);
  // Never evicted while pinned (inserted if not held); false beyond capacity - 1 pinned keys.
  bool Pin(CacheKey key, std::vector<LfuEviction>* evicted);
  void Unpin(CacheKey key, std::vector<LfuEviction>* evicted);

  size_t size() const;
  size_t capacity() const;
  bool scanning() const;
  // Empty when every invariant above holds, else the first that does not.
  std::string Check() const;

  struct Header;  // the block's first bytes (defined in the .cc)

 private:
  explicit FlatScanLfu(unsigned char* base) : base_(base) {}
  Header& h() const;
  unsigned char* base_;
};

}  // namespace seedance::control
