#include "seedance/mem/caching_allocator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace seedance::mem {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr AllocatorPolicy kAllPolicies[] = {
    AllocatorPolicy::kSeedance, AllocatorPolicy::kSeedanceStitch, AllocatorPolicy::kBestFit,
    AllocatorPolicy::kFirstFit, AllocatorPolicy::kCaching2MiB};

TEST(CachingAllocatorTest, PolicyNamesRoundTrip) {
  for (AllocatorPolicy p : kAllPolicies) {
    EXPECT_EQ(*ParseAllocatorPolicy(AllocatorPolicyName(p)), p);
  }
  EXPECT_FALSE(ParseAllocatorPolicy("jemalloc").ok());
}

// Random allocations and frees on real host memory: every live block is
// filled with its own byte and must still hold it when freed (no two live
// blocks overlap, stitching never moves live data); the validity walker runs
// after every operation.
TEST(CachingAllocatorTest, RandomWorkloadKeepsDataAndInvariants) {
  for (AllocatorPolicy policy : kAllPolicies) {
    SCOPED_TRACE(std::string(AllocatorPolicyName(policy)));
    CachingAllocator a(policy, NewHostBackend());
    std::mt19937 rng(static_cast<unsigned>(policy) + 1);
    struct Live {
      unsigned char* p;
      size_t size;
      unsigned char tag;
    };
    std::vector<Live> live;
    for (int op = 0; op < 1500; ++op) {
      if (live.empty() || rng() % 100 < 55) {
        // Mostly small, some medium, a few multi-MiB requests.
        const unsigned r = rng() % 100;
        const size_t size = r < 60   ? 1 + rng() % 4096
                            : r < 90 ? 1 + rng() % (3 * kMiB)
                                     : 1 + rng() % (12 * kMiB);
        auto p = a.Allocate(size, rng() % 2);
        ASSERT_TRUE(p.ok()) << p.status().ToString();
        auto* bytes = static_cast<unsigned char*>(*p);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes) % 512, 0u);
        const auto tag = static_cast<unsigned char>(op);
        std::memset(bytes, tag, size);
        live.push_back({bytes, size, tag});
      } else {
        const size_t i = rng() % live.size();
        const Live l = live[i];
        for (size_t k = 0; k < l.size; k += 509) ASSERT_EQ(l.p[k], l.tag);
        ASSERT_EQ(l.p[l.size - 1], l.tag);
        ASSERT_TRUE(a.Free(l.p).ok());
        live[i] = live.back();
        live.pop_back();
      }
      ASSERT_TRUE(a.IsValid().ok()) << a.IsValid().ToString() << " at op " << op;
    }
    const AllocatorStats s = a.stats();
    EXPECT_GE(s.reserved_peak_bytes, s.allocated_peak_bytes);
    EXPECT_GE(s.allocated_peak_bytes, s.requested_peak_bytes);
    for (const Live& l : live) ASSERT_TRUE(a.Free(l.p).ok());
    EXPECT_EQ(a.stats().allocated_bytes, 0);
    EXPECT_TRUE(a.IsValid().ok());
    a.EmptyCache();
    EXPECT_TRUE(a.IsValid().ok());
  }
}

// PyTorch's documented rules, one row per rule (expected reserved bytes).
TEST(CachingAllocatorTest, Caching2MiBFollowsPyTorchRules) {
  auto reserved_after = [](std::vector<size_t> sizes) {
    CachingAllocator a(AllocatorPolicy::kCaching2MiB, NewVirtualBackend());
    for (size_t s : sizes) EXPECT_TRUE(a.Allocate(s).ok());
    return a.stats().reserved_bytes;
  };
  EXPECT_EQ(reserved_after({100}), int64_t{2} << 20);           // small: a 2 MiB segment
  EXPECT_EQ(reserved_after({100, 1 << 20}), int64_t{2} << 20);  // 512 + 1 MiB share it
  EXPECT_EQ(reserved_after({kMiB + 1}), int64_t{20} << 20);     // 1-10 MiB: 20 MiB segment
  EXPECT_EQ(reserved_after({11 * kMiB}), int64_t{12} << 20);    // > 10 MiB: rounded to 2 MiB
  // A large block keeps its remainder when at most 1 MiB would be left.
  CachingAllocator a(AllocatorPolicy::kCaching2MiB, NewVirtualBackend());
  auto p = a.Allocate(19 * kMiB + 512);  // 20 MiB segment, 1 MiB - 512 left: not split
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(a.stats().allocated_bytes, int64_t{20} << 20);
  EXPECT_EQ(a.stats().requested_bytes, int64_t{19 * kMiB + 512});
}

TEST(CachingAllocatorTest, StreamsDoNotShareBlocks) {
  CachingAllocator a(AllocatorPolicy::kBestFit, NewVirtualBackend());
  void* p = *a.Allocate(kMiB, 0);
  ASSERT_TRUE(a.Free(p).ok());
  void* q = *a.Allocate(kMiB, 1);  // the cached block belongs to stream 0
  EXPECT_NE(p, q);
  EXPECT_EQ(a.stats().segments, 2);
  void* r = *a.Allocate(kMiB, 0);
  EXPECT_EQ(p, r);
}

TEST(CachingAllocatorTest, StitchingReusesStrandedPages) {
  // Two 4 MiB blocks with a live 512 B block between them; free both: 8 MiB
  // free, but in two pieces. A 6 MiB request cannot fit either piece.
  for (auto policy : {AllocatorPolicy::kSeedance, AllocatorPolicy::kSeedanceStitch}) {
    CachingAllocator a(policy, NewHostBackend());
    void* x = *a.Allocate(4 * kMiB);
    void* pin = *a.Allocate(4 * kMiB);
    void* y = *a.Allocate(4 * kMiB);
    ASSERT_TRUE(a.Free(x).ok());
    ASSERT_TRUE(a.Free(y).ok());
    const int64_t before = a.stats().reserved_bytes;
    auto z = a.Allocate(6 * kMiB);
    ASSERT_TRUE(z.ok());
    std::memset(*z, 7, 6 * kMiB);  // the stitched range is real, writable memory
    ASSERT_TRUE(a.IsValid().ok()) << a.IsValid().ToString();
    const int64_t grown = a.stats().reserved_bytes - before;
    if (policy == AllocatorPolicy::kSeedanceStitch) {
      EXPECT_GT(a.stats().stitches, 0);
      EXPECT_LT(grown, int64_t{2} << 20);  // at most the pages of the partial tail
    } else {
      EXPECT_EQ(a.stats().stitches, 0);
      EXPECT_GE(grown, int64_t{2} << 20);
    }
    ASSERT_TRUE(a.Free(pin).ok());
    ASSERT_TRUE(a.Free(*z).ok());
  }
}

TEST(CachingAllocatorTest, BadFreeIsAnError) {
  CachingAllocator a(AllocatorPolicy::kSeedance, NewVirtualBackend());
  int local = 0;
  EXPECT_EQ(a.Free(&local).code(), base::StatusCode::kInvalidArgument);
  void* p = *a.Allocate(64);
  ASSERT_TRUE(a.Free(p).ok());
  EXPECT_FALSE(a.Free(p).ok());  // double free
}

TEST(CachingAllocatorTest, ConcurrentUse) {
  CachingAllocator a(AllocatorPolicy::kSeedanceStitch, NewHostBackend());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&a, t] {
      std::mt19937 rng(t);
      std::vector<void*> mine;
      for (int i = 0; i < 2000; ++i) {
        if (mine.empty() || rng() % 2) {
          auto p = a.Allocate(1 + rng() % (256 * 1024), t);
          if (p.ok()) mine.push_back(*p);
        } else {
          EXPECT_TRUE(a.Free(mine.back()).ok());
          mine.pop_back();
        }
      }
      for (void* p : mine) EXPECT_TRUE(a.Free(p).ok());
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(a.IsValid().ok());
  EXPECT_EQ(a.stats().allocated_bytes, 0);
}

}  // namespace
}  // namespace seedance::mem
