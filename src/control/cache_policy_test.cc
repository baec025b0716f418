#include "seedance/control/cache_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "seedance/control/cache_traces.h"

namespace seedance::control {
namespace {

std::vector<CacheKey> RandomTrace(size_t n, CacheKey keys, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<CacheKey> d(0, keys - 1);
  std::vector<CacheKey> t(n);
  for (auto& k : t) k = d(rng);
  return t;
}

std::vector<CacheKey> ShuffledEpochs(CacheKey n, int epochs, uint32_t seed) {
  std::mt19937_64 rng(seed);
  return ShuffledEpochsTrace(n, epochs, rng);
}

std::vector<CacheKey> Zipf(size_t len, CacheKey n, double s, uint32_t seed) {
  std::mt19937_64 rng(seed);
  return ZipfTrace(len, n, s, rng);
}

// LRU written the obvious way: a vector, most recent last.
int64_t ReferenceLruHits(const std::vector<CacheKey>& trace, size_t capacity) {
  std::vector<CacheKey> held;
  int64_t hits = 0;
  for (CacheKey k : trace) {
    if (capacity == 0) continue;
    auto it = std::find(held.begin(), held.end(), k);
    if (it != held.end()) {
      ++hits;
      held.erase(it);
    } else if (held.size() == capacity) {
      held.erase(held.begin());
    }
    held.push_back(k);
  }
  return hits;
}

// The true optimum by exhaustive search over every admission and eviction choice.
int64_t BruteForceOptimum(const std::vector<CacheKey>& trace, size_t i, std::set<CacheKey> held,
                          size_t capacity) {
  if (i == trace.size()) return 0;
  const CacheKey k = trace[i];
  if (held.count(k) != 0) return 1 + BruteForceOptimum(trace, i + 1, held, capacity);
  int64_t best = BruteForceOptimum(trace, i + 1, held, capacity);  // bypass
  if (held.size() < capacity) {
    auto with = held;
    with.insert(k);
    return std::max(best, BruteForceOptimum(trace, i + 1, with, capacity));
  }
  for (CacheKey victim : held) {
    auto with = held;
    with.erase(victim);
    with.insert(k);
    best = std::max(best, BruteForceOptimum(trace, i + 1, with, capacity));
  }
  return best;
}

TEST(CachePolicyTest, LruMatchesTheObviousImplementation) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const auto trace = RandomTrace(2000, 40, seed);
    for (size_t cap : {0, 1, 5, 17, 40}) {
      auto lru = NewLruPolicy(cap);
      EXPECT_EQ(CountHits(*lru, trace), ReferenceLruHits(trace, cap)) << seed << " " << cap;
    }
  }
}

TEST(CachePolicyTest, BeladyIsTheOptimumOnSmallTraces) {
  for (uint32_t seed = 0; seed < 60; ++seed) {
    const auto trace = RandomTrace(11, 5, seed);
    for (size_t cap : {1, 2, 3}) {
      EXPECT_EQ(BeladyHits(trace, cap), BruteForceOptimum(trace, 0, {}, cap)) << seed << " " << cap;
    }
  }
}

TEST(CachePolicyTest, NoPolicyBeatsBeladyAndNoneOverfills) {
  for (uint32_t seed = 0; seed < 5; ++seed) {
    const auto trace = Zipf(20000, 2000, 0.9, seed);
    for (size_t cap : {10, 100, 500}) {
      const int64_t optimum = BeladyHits(trace, cap);
      std::vector<std::unique_ptr<CachePolicy>> policies;
      policies.push_back(NewLruPolicy(cap));
      policies.push_back(NewArcPolicy(cap));
      policies.push_back(NewWTinyLfuPolicy(cap));
      policies.push_back(std::make_unique<ScanAwarePolicy>(cap));
      for (auto& p : policies) {
        int64_t hits = 0;
        for (CacheKey k : trace) {
          const bool held = p->Contains(k);
          const bool hit = p->Access(k);
          EXPECT_EQ(hit, held) << p->name();  // a hit is exactly a key held before
          hits += hit ? 1 : 0;
          ASSERT_LE(p->size(), cap) << p->name();
        }
        EXPECT_LE(hits, optimum) << p->name() << " " << cap;
      }
    }
  }
}

// A frequent set and a one-time scan of many keys: the frequency-aware policies keep the
// frequent keys through the scan, LRU does not.
TEST(CachePolicyTest, ArcAndTinyLfuResistAScan) {
  std::vector<CacheKey> trace;
  for (int round = 0; round < 50; ++round) {
    for (CacheKey k = 0; k < 50; ++k) trace.push_back(k);  // hot: 50 keys, 50 times
  }
  for (CacheKey k = 1000; k < 1400; ++k) trace.push_back(k);  // scan
  const size_t tail_start = trace.size();
  for (CacheKey k = 0; k < 50; ++k) trace.push_back(k);
  auto tail_hits = [&](CachePolicy& p) {
    int64_t h = 0;
    for (size_t i = 0; i < trace.size(); ++i) {
      const bool hit = p.Access(trace[i]);
      if (i >= tail_start) h += hit ? 1 : 0;
    }
    return h;
  };
  EXPECT_EQ(tail_hits(*NewLruPolicy(100)), 0);
  EXPECT_GE(tail_hits(*NewArcPolicy(100)), 45);
  EXPECT_GE(tail_hits(*NewWTinyLfuPolicy(100)), 45);
}

// Shuffled epochs over four times the capacity: the expected online best is capacity/dataset
// (25%); the scan-aware policy stops evicting and gets it, LRU and ARC lose to churn.
TEST(CachePolicyTest, ScanAwareStopsEvictingOnShuffledEpochs) {
  const size_t cap = 250;
  const auto trace = ShuffledEpochs(1000, 12, 7);
  ScanAwarePolicy scan(cap);
  const int64_t scan_hits = CountHits(scan, trace);
  EXPECT_TRUE(scan.scanning());
  const double epochs_after_first = 11;
  EXPECT_GT(static_cast<double>(scan_hits) / (epochs_after_first * 1000), 0.23);
  EXPECT_GT(scan_hits, CountHits(*NewLruPolicy(cap), trace));
  // On a skewed workload it stays a W-TinyLFU: not scanning, the same hits.
  const auto zipf = Zipf(30000, 5000, 1.0, 3);
  ScanAwarePolicy skewed(cap);
  EXPECT_EQ(CountHits(skewed, zipf), CountHits(*NewWTinyLfuPolicy(cap), zipf));
  EXPECT_FALSE(skewed.scanning());
}

TEST(CachePolicyTest, PinnedKeysStayAndPrewarmedKeysHit) {
  ScanAwarePolicy p(10);
  EXPECT_TRUE(p.Pin(42));
  p.Prewarm({1, 2, 3});
  EXPECT_TRUE(p.Contains(1) && p.Contains(42));
  EXPECT_TRUE(p.Access(2));
  for (CacheKey k = 100; k < 1100; ++k) p.Access(k);  // a thousand other keys
  EXPECT_TRUE(p.Contains(42));
  EXPECT_TRUE(p.Access(42));
  EXPECT_LE(p.size(), 10U);
  for (CacheKey k = 200; k < 208; ++k) p.Pin(k);
  EXPECT_FALSE(p.Pin(999));  // capacity - 1 pinned at most
  p.Unpin(42);
  EXPECT_TRUE(p.Contains(42));  // still cached, now evictable
}

}  // namespace
}  // namespace seedance::control
