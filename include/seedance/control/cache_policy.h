// Replacement policies for the tiered sample and checkpoint cache (feature CTRL-7's decision):
// which entries a tier of `capacity` entries keeps. Each policy sees a stream of keys; Access()
// says whether the key was held (a hit) and updates the state (on a miss the key is admitted
// or not, and at most one entry is evicted). Entries have unit size: the trainer's samples are
// fixed-size records, and a tier's byte capacity divided by the record size is the count.
//
//   LRU         the least recently used entry goes.
//   ARC         Megiddo & Modha 2003: recency list T1 and frequency list T2 with ghost lists
//               B1, B2; the target size p of T1 adapts to ghost hits. Invariants:
//               |T1| + |T2| <= c,  |T1| + |B1| <= c,  |T1| + |T2| + |B1| + |B2| <= 2c.
//   W-TinyLFU   Einziger, Friedman & Manes 2017 (Caffeine's policy): a window LRU of 1% of the
//               capacity in front of a segmented LRU (20% probation, 80% protected); an entry
//               leaving the window enters the main space only if a count-min sketch (4 rows of
//               4-bit counters, all halved every 10 x capacity accesses) estimates it more
//               frequent than the probation victim it would replace.
//   ScanAware   Seedance's: W-TinyLFU, plus a scan detector. Epoch-shuffled training reads every
//               sample once per epoch in a new order; an online policy then hits at most
//               capacity / dataset of each epoch in expectation, which a cache that stops
//               evicting attains, and churning the cache only lowers it. The detector counts,
//               over a sliding window of 2 x capacity accesses, the accesses to a key already in
//               the window; under 1% (and a full cache) it switches to never-evict — misses are
//               not admitted — and back above 30% (a window straddling two epochs repeats up
//               to a quarter of its keys, which must not end the scan). It sees scans over more
//               than twice the capacity (a dataset between 1 and 2 capacities repeats keys
//               inside the window).
//               Pinned keys are never evicted; Prewarm() loads keys without counting them.
//               It runs on flat_scan_lfu.h (the state in one flat block), which the tiered
//               cache (tiered_cache.h) uses directly; the node-based W-TinyLFU here is its
//               reference.
//   Belady      the offline optimum, for the benchmark (needs the whole trace): on a miss with
//               the cache full, the entry used furthest in the future goes — or the new key is
//               not admitted when it is that entry (the online policies may bypass too).
//
// Thread safety: not synchronised; one per tier (the tier's lock guards it).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace seedance::control {

using CacheKey = uint64_t;

class CachePolicy {
 public:
  virtual ~CachePolicy() = default;
  virtual std::string_view name() const = 0;
  // One access; true on a hit.
  virtual bool Access(CacheKey key) = 0;
  virtual bool Contains(CacheKey key) const = 0;
  virtual size_t size() const = 0;  // entries held, <= capacity
};

std::unique_ptr<CachePolicy> NewLruPolicy(size_t capacity);
std::unique_ptr<CachePolicy> NewArcPolicy(size_t capacity);
std::unique_ptr<CachePolicy> NewWTinyLfuPolicy(size_t capacity);

class ScanAwarePolicy : public CachePolicy {
 public:
  explicit ScanAwarePolicy(size_t capacity);
  ~ScanAwarePolicy() override;
  std::string_view name() const override { return "scan-aware"; }
  bool Access(CacheKey key) override;
  bool Contains(CacheKey key) const override;
  size_t size() const override;
  // Never evicted while pinned (at most capacity - 1 pinned keys; false beyond).
  bool Pin(CacheKey key);
  void Unpin(CacheKey key);
  // Loads keys as if accessed, but without counting them as scan evidence or hits.
  void Prewarm(const std::vector<CacheKey>& keys);
  bool scanning() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Hits of `policy` over `trace`, and the offline optimum's.
int64_t CountHits(CachePolicy& policy, const std::vector<CacheKey>& trace);
int64_t BeladyHits(const std::vector<CacheKey>& trace, size_t capacity);

}  // namespace seedance::control
