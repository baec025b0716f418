#include "seedance/mem/replay.h"

#include <gtest/gtest.h>

#include "seedance/base/env.h"
#include "seedance/base/testing/data.h"

namespace seedance::mem {
namespace {

constexpr int64_t kMiBytes = int64_t{1} << 20;

TEST(ReplayTest, HandComputedCaching2MiB) {
  // Two 3 MiB buffers live together, then one 5 MiB: PyTorch's rules put
  // 1-10 MiB requests in 20 MiB segments: one segment serves all three.
  std::vector<Buffer> b = {
      {"a", 0, 2, 3 * kMiBytes}, {"b", 1, 3, 3 * kMiBytes}, {"c", 3, 4, 5 * kMiBytes}};
  auto r = Replay(b, AllocatorPolicy::kCaching2MiB, {.check_every_op = true});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->reserved_peak_bytes, 20 * kMiBytes);
  EXPECT_EQ(r->lower_bound_bytes, 6 * kMiBytes);
  EXPECT_EQ(r->requested_peak_bytes, 6 * kMiBytes);
  EXPECT_EQ(r->ops, 6);
  EXPECT_DOUBLE_EQ(r->fragmentation, 1.0 - 6.0 / 20.0);
}

TEST(ReplayTest, EveryPolicyOnEveryMiniMallocInstanceKeepsItsInvariants) {
  const auto dir = base::testing::DataDir() / "minimalloc";
  SEEDANCE_REQUIRE_DATA(dir);
  for (const char* name : {"A", "F", "K"}) {
    const auto path = dir / (std::string(name) + ".1048576.csv");
    auto file = ParseLifetimeCsv(*base::Env::Default()->ReadFile(path.string()), path.string());
    ASSERT_TRUE(file.ok());
    for (auto policy :
         {AllocatorPolicy::kSeedance, AllocatorPolicy::kSeedanceStitch, AllocatorPolicy::kBestFit,
          AllocatorPolicy::kFirstFit, AllocatorPolicy::kCaching2MiB}) {
      auto r = Replay(file->buffers, policy, {.check_every_op = true});
      ASSERT_TRUE(r.ok()) << name << " " << AllocatorPolicyName(policy) << ": "
                          << r.status().ToString();
      EXPECT_EQ(r->requested_peak_bytes, r->lower_bound_bytes);
      EXPECT_GE(r->reserved_peak_bytes, r->allocated_peak_bytes);
    }
  }
}

}  // namespace
}  // namespace seedance::mem
