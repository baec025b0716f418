#include "seedance/control/flat_scan_lfu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "seedance/control/cache_policy.h"
#include "seedance/control/cache_traces.h"

namespace seedance::control {
namespace {

struct alignas(64) Line {
  unsigned char bytes[64];
};

// A block for `capacity` entries.
std::vector<Line> Block(size_t capacity) {
  return std::vector<Line>(FlatScanLfu::BytesFor(capacity) / sizeof(Line));
}

std::vector<CacheKey> Mixed(size_t n, CacheKey keys, uint32_t seed) {
  std::mt19937_64 rng(seed);
  auto t = ZipfTrace(n / 2, keys, 0.9, rng);
  std::uniform_int_distribution<CacheKey> d(0, keys - 1);
  for (size_t i = n / 2; i < n; ++i) t.push_back(d(rng));
  std::shuffle(t.begin(), t.end(), rng);
  return t;
}

// With the scan detector off it is W-TinyLFU: the node-based policy is the reference.
TEST(FlatScanLfuTest, MatchesTheNodeBasedWTinyLfuHitForHit) {
  for (size_t cap : {0, 1, 2, 3, 10, 64, 250}) {
    const auto trace = Mixed(20000, 600, static_cast<uint32_t>(cap) + 1);
    auto block = Block(cap);
    auto flat = FlatScanLfu::Init(block.data(), cap, /*detect_scans=*/false);
    auto ref = NewWTinyLfuPolicy(cap);
    for (size_t i = 0; i < trace.size(); ++i) {
      ASSERT_EQ(flat.Access(trace[i]).hit, ref->Access(trace[i])) << "cap " << cap << " i " << i;
      if (i % 997 == 0) {
        ASSERT_EQ(flat.Check(), "") << "cap " << cap << " i " << i;
      }
    }
    EXPECT_EQ(flat.size(), ref->size());
    EXPECT_EQ(flat.Check(), "");
  }
}

// What Access reports is what happened: a shadow map of key -> slot follows the reports and
// must equal what Find says, with distinct slots, after every access.
TEST(FlatScanLfuTest, ReportedSlotsAndEvictionsAreTheTruth) {
  const size_t cap = 50;
  auto block = Block(cap);
  auto lfu = FlatScanLfu::Init(block.data(), cap);
  std::mt19937_64 rng(5);
  auto trace = ShuffledEpochsTrace(120, 6, rng);  // scans: the detector engages
  const auto more = Mixed(6000, 150, 9);
  trace.insert(trace.end(), more.begin(), more.end());
  std::map<CacheKey, uint32_t> shadow;
  bool scanned = false;
  for (CacheKey k : trace) {
    const LfuAccess a = lfu.Access(k);
    scanned = scanned || lfu.scanning();
    ASSERT_EQ(a.hit, shadow.count(k) == 1);
    if (a.hit) {
      ASSERT_EQ(a.slot, shadow[k]);
    }
    if (a.evicted) {
      ASSERT_NE(a.victim.key, k);
      ASSERT_EQ(shadow.at(a.victim.key), a.victim.slot);
      shadow.erase(a.victim.key);
    }
    if (!a.hit && a.slot != kNoSlot) shadow[k] = a.slot;
    ASSERT_EQ(lfu.size(), shadow.size());
    std::set<uint32_t> slots;
    for (const auto& [key, slot] : shadow) {
      ASSERT_EQ(lfu.Find(key), slot);
      ASSERT_LE(slot, cap);
      ASSERT_TRUE(slots.insert(slot).second);
    }
  }
  EXPECT_TRUE(scanned);
  EXPECT_EQ(lfu.Check(), "");
}

TEST(FlatScanLfuTest, PinEraseAndUnpinKeepTheInvariants) {
  const size_t cap = 20;
  auto block = Block(cap);
  auto lfu = FlatScanLfu::Init(block.data(), cap);
  for (CacheKey k = 0; k < 20; ++k) lfu.Access(k);
  std::vector<LfuEviction> out;
  for (CacheKey k = 100; k < 119; ++k) ASSERT_TRUE(lfu.Pin(k, &out));
  EXPECT_FALSE(lfu.Pin(999, &out));  // capacity - 1 pinned at most
  EXPECT_EQ(lfu.Check(), "");
  EXPECT_LE(lfu.size(), cap);
  for (const auto& e : out) EXPECT_EQ(lfu.Find(e.key), kNoSlot);
  for (CacheKey k = 1000; k < 2000; ++k) lfu.Access(k);
  for (CacheKey k = 100; k < 119; ++k) EXPECT_TRUE(lfu.Access(k).hit);
  EXPECT_TRUE(lfu.Erase(105));
  EXPECT_FALSE(lfu.Erase(105));
  lfu.Unpin(110, &out);
  EXPECT_NE(lfu.Find(110), kNoSlot);  // still cached, now evictable
  EXPECT_EQ(lfu.Check(), "");
  EXPECT_NE(lfu.Insert(5000, &out), kNoSlot);
  EXPECT_EQ(lfu.Check(), "");
}

// The state holds no pointers: a byte copy at another address (another process's mapping)
// behaves exactly as the original.
TEST(FlatScanLfuTest, ACopyAtAnotherAddressBehavesTheSame) {
  const size_t cap = 100;
  auto a = Block(cap);
  auto lfu = FlatScanLfu::Init(a.data(), cap);
  const auto trace = Mixed(8000, 400, 3);
  for (size_t i = 0; i < 4000; ++i) lfu.Access(trace[i]);
  auto b = Block(cap + 7);
  std::memcpy(b.data(), a.data(), FlatScanLfu::BytesFor(cap));
  auto copy = FlatScanLfu::Attach(b.data(), b.size() * sizeof(Line));
  for (size_t i = 4000; i < trace.size(); ++i) {
    const LfuAccess x = lfu.Access(trace[i]);
    const LfuAccess y = copy.Access(trace[i]);
    ASSERT_EQ(x.hit, y.hit);
    ASSERT_EQ(x.slot, y.slot);
    ASSERT_EQ(x.evicted, y.evicted);
  }
  EXPECT_EQ(copy.Check(), "");
}

TEST(FlatScanLfuTest, AttachRejectsWhatIsNotAState) {
  auto a = Block(10);
  EXPECT_THROW(FlatScanLfu::Attach(a.data(), a.size() * sizeof(Line)), std::invalid_argument);
  FlatScanLfu::Init(a.data(), 10);
  EXPECT_THROW(FlatScanLfu::Attach(a.data(), 100), std::invalid_argument);  // short
  EXPECT_NO_THROW(FlatScanLfu::Attach(a.data(), a.size() * sizeof(Line)));
  reinterpret_cast<uint32_t*>(a.data())[2] = 99;  // the version field
  EXPECT_THROW(FlatScanLfu::Attach(a.data(), a.size() * sizeof(Line)), std::invalid_argument);
}

}  // namespace
}  // namespace seedance::control
