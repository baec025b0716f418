#include "seedance/node/gpu_shares.h"

#include <gtest/gtest.h>

#include <set>

#include "seedance/base/hash.h"

namespace seedance::node {
namespace {

std::vector<AgentGpu> EightGpus() {
  std::vector<AgentGpu> gpus;
  for (int i = 0; i < 8; ++i) {
    AgentGpu g;
    g.index = i;
    g.uuid = "GPU-5eedc0de-0000-4000-8000-00000000000" + std::to_string(i);
    gpus.push_back(g);
  }
  gpus[7].uuid.clear();  // a GPU NVML gave no UUID for is named by its index
  return gpus;
}

TEST(GpuShares, EveryDeviceIdIsShortUniqueAndMapsBackToItsGpu) {
  const auto gpus = EightGpus();
  const auto devices = ShareDevices(gpus);
  ASSERT_EQ(devices.size(), 8000u);
  std::set<std::string> seen;
  for (size_t k = 0; k < devices.size(); ++k) {
    const std::string& id = devices[k].id;
    EXPECT_LE(id.size(), 63u) << id;  // the device-plugin API's limit
    EXPECT_TRUE(seen.insert(id).second) << id;
    auto g = GpuOfDevice(gpus, id);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(*g, k / 1000);
  }
  EXPECT_EQ(devices[7000].id, "gpu7::000");
  EXPECT_EQ(devices[999].id, gpus[0].uuid + "::999");
}

TEST(GpuShares, MalformedAndForeignIdsAreRefused) {
  const auto gpus = EightGpus();
  for (const char* bad :
       {"", "::", "gpu7", "gpu7::", "gpu7::12", "gpu7::1234", "gpu7::12a", "gpu7:000"}) {
    auto g = GpuOfDevice(gpus, bad);
    EXPECT_EQ(g.status().code(), base::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(GpuOfDevice(gpus, "gpu8::000").status().code(), base::StatusCode::kNotFound);
  EXPECT_EQ(GpuOfDevice(gpus, "GPU-other::000").status().code(), base::StatusCode::kNotFound);
}

TEST(GpuShares, SpreadCountsIdsPerGpu) {
  const auto gpus = EightGpus();
  auto s = SpreadOf(
      gpus, {ShareDeviceId(gpus[3], 1), ShareDeviceId(gpus[1], 5), ShareDeviceId(gpus[3], 2)});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpus, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(s->counts, (std::vector<int64_t>{1, 2}));
}

// The fingerprint is a function of the set: equal for every order, and different for the
// different subsets of a random sample (no collision among 20,000).
TEST(GpuShares, FingerprintIsOfTheSet) {
  const auto gpus = EightGpus();
  base::SplitMix64 rng(7);
  std::set<std::string> fingerprints;
  std::set<std::set<std::string>> sets;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<std::string> ids;
    const int n = 1 + static_cast<int>(rng.Next() % 40);
    std::set<std::string> as_set;
    for (int k = 0; k < n; ++k) {
      const auto& g = gpus[rng.Next() % gpus.size()];
      ids.push_back(ShareDeviceId(g, static_cast<int>(rng.Next() % 1000)));
      as_set.insert(ids.back());
    }
    if (ids.size() != as_set.size()) continue;  // duplicates are refused before this
    std::vector<std::string> reversed(ids.rbegin(), ids.rend());
    const std::string f = DeviceFingerprint(ids);
    EXPECT_EQ(f, DeviceFingerprint(reversed));
    EXPECT_EQ(f.size(), 16u);
    if (sets.insert(as_set).second) {
      EXPECT_TRUE(fingerprints.insert(f).second);
    }
  }
  // Where IDs split differs, so does the fingerprint.
  EXPECT_NE(DeviceFingerprint({"ab", "c"}), DeviceFingerprint({"a", "bc"}));
}

}  // namespace
}  // namespace seedance::node
