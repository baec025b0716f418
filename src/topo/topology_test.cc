#include "seedance/topo/topology.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "seedance/base/fake_env.h"
#include "src/topo/fake_node_for_test.h"

namespace seedance::topo {
namespace {

TEST(CpuListTest, ParsesTheKernelsFormat) {
  struct Case {
    const char* text;
    std::vector<int> cpus;
  } cases[] = {
      {"0", {0}},
      {"0-3", {0, 1, 2, 3}},
      {"0-1,4,6-7\n", {0, 1, 4, 6, 7}},
      {"3,1,1-2", {1, 2, 3}},  // unsorted and overlapping: sorted, unique
      {"", {}},                // a memory-only node has no CPUs
      {"\n", {}},
  };
  for (const auto& c : cases) {
    auto got = ParseCpuList(c.text);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().ToString();
    EXPECT_EQ(*got, c.cpus) << c.text;
  }
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "0x3", "1 2", "9999999"}) {
    auto got = ParseCpuList(bad, "/sys/x/cpulist");
    EXPECT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().where(), "/sys/x/cpulist");
  }
}

TEST(CpuListTest, FormatThenParseIsIdentityOnRandomSets) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    std::set<int> s;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) s.insert(static_cast<int>(rng() % 64));
    std::vector<int> cpus(s.begin(), s.end());
    auto back = ParseCpuList(FormatCpuList(cpus));
    ASSERT_TRUE(back.ok()) << FormatCpuList(cpus);
    EXPECT_EQ(*back, cpus);
  }
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
}

TEST(DiscoverTest, ReadsNodesCachesGpusAndNics) {
  base::FakeEnv env;
  testing::BuildServer(env);
  const Topology t = DiscoverTopology(env);
  EXPECT_TRUE(t.numa_info);
  EXPECT_TRUE(t.notes.empty()) << t.notes.front();
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.nodes[1].cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(t.nodes[0].distances, (std::vector<int>{10, 21}));
  EXPECT_EQ(t.nodes[0].memory_total_bytes, 64LL << 30);
  // Caches: 4 private L1d + one shared L3 per node.
  ASSERT_EQ(t.nodes[0].caches.size(), 5u);
  EXPECT_EQ(t.nodes[0].caches.back().level, 3);
  EXPECT_EQ(t.nodes[0].caches.back().size_bytes, 32LL << 20);
  EXPECT_EQ(t.NodeOfCpu(5), 1);
  EXPECT_EQ(t.NodeOfCpu(99), -1);
  // GPUs sorted by PCI address; the BMC's VGA chip is not one.
  ASSERT_EQ(t.gpus.size(), 3u);
  EXPECT_EQ(t.gpus[0].pci_address, "0000:03:00.0");
  EXPECT_EQ(t.gpus[2].pci_address, "0000:81:00.0");
  EXPECT_EQ(t.gpus[2].numa_node, 1);
  EXPECT_EQ(t.gpus[0].pci_path,
            (std::vector<std::string>{"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0",
                                      "0000:03:00.0"}));
  // NICs: the RDMA device first, then physical netdevs; lo is virtual.
  ASSERT_EQ(t.nics.size(), 2u);
  EXPECT_EQ(t.nics[0].name, "mlx5_0");
  EXPECT_EQ(t.nics[0].kind, "infiniband");
  EXPECT_TRUE(t.nics[0].up);
  EXPECT_EQ(t.nics[0].speed_gbits_per_s, 200);
  EXPECT_EQ(t.nics[0].pci_address, "0000:04:00.0");
  EXPECT_EQ(t.nics[1].name, "eth0");
  EXPECT_EQ(t.nics[1].pci_address, "0000:00:03.0");  // the virtio device's PCI parent
  EXPECT_EQ(t.nics[1].speed_gbits_per_s, 25);
  EXPECT_EQ(t.nics[1].numa_node, 0);
}

TEST(DiscoverTest, GarbageAndMissingFilesBecomeNotes) {
  base::FakeEnv env;
  testing::BuildServer(env);
  env.SetFile("/sys/devices/system/node/node1/cpulist", "four-seven\n");
  env.SetFile("/sys/devices/system/node/node0/distance", "10 x\n");
  env.SetFile("/sys/devices/system/node/node0/meminfo", "\x01\x02garbage");
  env.SetFile("/sys/bus/pci/devices/0000:81:00.0/numa_node", "minus one\n");
  env.FailPath("/sys/devices/system/cpu/cpu0/cache/index1/size", base::IoError("EIO"));
  env.SetFile("/sys/class/infiniband/mlx5_0/ports/1/rate", "fast\n");
  const Topology t = DiscoverTopology(env);
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_TRUE(t.nodes[1].cpus.empty());
  EXPECT_TRUE(t.nodes[0].distances.empty());
  EXPECT_EQ(t.nodes[0].memory_total_bytes, -1);
  EXPECT_EQ(t.gpus[2].numa_node, -1);
  EXPECT_EQ(t.nics[0].speed_gbits_per_s, 0);
  auto has = [&t](const std::string& needle) {
    for (const auto& n : t.notes) {
      if (n.find(needle) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("node1/cpulist"));
  EXPECT_TRUE(has("node0/distance"));
  EXPECT_TRUE(has("node0/meminfo"));
  EXPECT_TRUE(has("0000:81:00.0/numa_node: expected an integer"));
  EXPECT_TRUE(has("index1/size: cannot read"));
  EXPECT_TRUE(has("ports/1/rate"));
}

TEST(DiscoverTest, NoSysfsAtAllGivesAnEmptyTopologyWithNotes) {
  base::FakeEnv env;
  const Topology t = DiscoverTopology(env);
  EXPECT_FALSE(t.numa_info);
  EXPECT_TRUE(t.nodes.empty());
  EXPECT_TRUE(t.gpus.empty());
  EXPECT_FALSE(t.notes.empty());
}

TEST(DiscoverTest, RandomGarbageNeverCrashes) {
  // Property: whatever bytes sit in the files, discovery returns.
  std::mt19937 rng(11);
  const char* files[] = {"/sys/devices/system/node/online",
                         "/sys/devices/system/node/node0/cpulist",
                         "/sys/devices/system/node/node0/distance",
                         "/sys/devices/system/node/node0/meminfo",
                         "/sys/devices/system/cpu/online",
                         "/sys/bus/pci/devices/0000:03:00.0/class",
                         "/sys/bus/pci/devices/0000:03:00.0/numa_node",
                         "/sys/bus/pci/devices/0000:03:00.0/local_cpulist",
                         "/sys/devices/system/cpu/cpu0/cache/index1/size"};
  const std::string alphabet = "0123456789-,x \n:kBMK";
  for (int trial = 0; trial < 300; ++trial) {
    base::FakeEnv env;
    testing::BuildServer(env);
    for (const char* f : files) {
      if (rng() % 2) continue;
      std::string junk;
      const int len = static_cast<int>(rng() % 12);
      for (int i = 0; i < len; ++i) junk += alphabet[rng() % alphabet.size()];
      env.SetFile(f, junk);
    }
    const Topology t = DiscoverTopology(env);
    for (const auto& n : t.nodes) EXPECT_LE(n.distances.size(), t.nodes.size());
  }
}

TEST(NvlinkMatrixTest, ShapeIsChecked) {
  base::FakeEnv env;
  testing::BuildServer(env);
  Topology t = DiscoverTopology(env);
  EXPECT_FALSE(SetNvlinks(t, {{0, 1}, {1, 0}}, "f").ok());                   // 2 rows for 3 GPUs
  EXPECT_FALSE(SetNvlinks(t, {{1, 0, 0}, {0, 0, 0}, {0, 0, 0}}, "f").ok());  // diagonal
  EXPECT_TRUE(SetNvlinks(t, {{0, 4, 0}, {4, 0, 0}, {0, 0, 0}}, "f").ok());
  EXPECT_EQ(t.nvlink_source, "f");
}

}  // namespace
}  // namespace seedance::topo
