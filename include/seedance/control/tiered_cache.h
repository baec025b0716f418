// The tiered sample cache (feature CTRL-7): host memory first, then local disk, then a slower
// disk, each tier deciding what it keeps with Seedance's policy (flat_scan_lfu.h: W-TinyLFU
// that stops evicting on epoch-shuffled scans), pins and pre-warming.
//
// One copy shared by processes. All state — a process-shared robust mutex, each tier's policy,
// slot table and counters, and the host tier's records — lives in one file mapped MAP_SHARED
// (put it on /dev/shm). The process that Creates it and every DataLoader worker (forked, or
// spawned and calling Open with the path) see the same entries, so a sample one worker loaded is
// a hit for the others. The disk tiers are one slot file each, `<dir>/<state file name>.tier<i>`.
//
// Entries: a key (the sample index) and a value of at most `record_bytes` (the serialized
// sample); a policy's node number is the record's slot. Values are immutable per key (a
// sample's bytes do not change), which makes the tiers inclusive: a key promoted to host memory
// stays in the disk tier that served it, and demoting it back writes nothing.
//
//   Get(k)   the host tier's policy counts the access (recency, frequency, scan evidence) and,
//            on a miss, reserves a slot for k (its victim is demoted to the next tier); the
//            lower tiers are searched in order, a hit there is read and copied up into the
//            reserved slot. Returns the tier that served it, or -1: none held it, and the caller
//            loads the sample and Puts it.
//   Put(k,v) into the host tier's slot reserved for k, else the highest tier that admits it
//            (a scanning, full tier admits nothing).
//   Eviction from tier i demotes the record to tier i + 1 (the last tier's victims are dropped).
//
// Concurrency. Host-tier gets and every policy update run under the one lock; a disk tier's
// record is read outside it and validated afterwards by the slot's generation (bumped by every
// write, which runs under the lock), so workers reading from disk do not wait for each other. A
// process that dies holding the lock leaves the state suspect: the next locker sees EOWNERDEAD
// and empties the cache (counted in `resets`), which costs hits, never wrong data.
//
// Thread safety: every public method may be called from any thread of any process that has
// the cache open.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/control/cache_policy.h"

namespace seedance::control {

inline constexpr int kMaxCacheTiers = 4;
inline constexpr uint32_t kTieredCacheVersion = 1;

struct CacheTierSpec {
  std::string name;       // [A-Za-z0-9_-]{1,31}; the `tier` label of the metrics
  std::string dir;        // empty: host memory (tier 0 only); else an existing directory
  uint64_t capacity = 0;  // records
};

struct TieredCacheOptions {
  std::string path;  // the shared state file, created (must not exist)
  uint64_t record_bytes = 0;
  bool detect_scans = true;
  std::vector<CacheTierSpec> tiers;  // tiers[0] in host memory, then directories, fastest first
  base::Env* env = nullptr;          // the clock for the get latencies; null: Env::Default()
};

base::Status ValidateTieredCacheOptions(const TieredCacheOptions& options);

// Upper bounds (seconds) of the get-latency histogram's buckets, +Inf implied.
const std::vector<double>& CacheLatencyBuckets();

struct CacheTierStats {
  std::string name;
  uint64_t capacity = 0;
  uint64_t entries = 0;
  uint64_t hits = 0;      // gets this tier served
  uint64_t admitted = 0;  // records written into it (puts, promotions, demotions)
  uint64_t evictions = 0;
  std::vector<uint64_t> latency_buckets;  // cumulative counts per CacheLatencyBuckets(), +Inf last
  double latency_sum_s = 0;
  bool scanning = false;
};

struct TieredCacheStats {
  std::vector<CacheTierStats> tiers;
  uint64_t misses = 0;  // gets no tier served
  std::vector<uint64_t> miss_latency_buckets;
  double miss_latency_sum_s = 0;
  uint64_t resets = 0;  // times a dead lock holder made the cache empty itself
};

class TieredCache {
 public:
  static base::StatusOr<std::unique_ptr<TieredCache>> Create(const TieredCacheOptions& options);
  // Attaches to a cache another process (or this one) created.
  static base::StatusOr<std::unique_ptr<TieredCache>> Open(const std::string& path,
                                                           base::Env* env = nullptr);
  ~TieredCache();
  TieredCache(const TieredCache&) = delete;
  TieredCache& operator=(const TieredCache&) = delete;

  // The value of `key` into `out`; the serving tier, or -1 (then `out` is empty).
  base::StatusOr<int> Get(CacheKey key, std::string* out);
  // Stores a value (at most record_bytes); the tier it went to, or -1 if none admitted it.
  base::StatusOr<int> Put(CacheKey key, std::string_view value);
  // Keeps `key` in host memory whatever the policy says (it must be held there, e.g. after a
  // Put); false when not held or capacity - 1 keys are pinned.
  bool Pin(CacheKey key);
  void Unpin(CacheKey key);

  TieredCacheStats Stats() const;
  // The families seedance_cache_* in Prometheus text format (hit counts and get-latency
  // histograms per tier, entries, capacity, evictions, scanning).
  std::string RenderPrometheus() const;
  // Walks every tier's policy invariants and slot table; empty when all hold.
  std::string Check() const;

  const std::string& path() const;
  uint64_t record_bytes() const;
  // Deletes the state file and the tier files (the mappings stay valid until destruction).
  base::Status Remove();

  struct Impl;

 private:
  explicit TieredCache(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::control
