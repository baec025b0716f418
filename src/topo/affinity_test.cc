#include "seedance/topo/affinity.h"

#include <gtest/gtest.h>

#include "seedance/base/fake_env.h"
#include "src/topo/fake_node_for_test.h"

namespace seedance::topo {
namespace {

// A process 42 with threads 42 and 43 on the fake server.
void AddProcess(base::FakeEnv& env, const std::string& cpus, const std::string& numa_maps,
                const std::string& thread43_cpus = "") {
  const std::string status =
      "Name:\ttrain\nState:\tS\nCpus_allowed_list:\t" + cpus + "\nMems_allowed_list:\t0-1\n";
  env.SetFile("/proc/42/status", status);
  env.SetFile("/proc/42/numa_maps", numa_maps);
  env.SetFile("/proc/42/task/42/status", status);
  env.SetFile("/proc/42/task/42/stat",
              "42 (train (main)) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 2 0 100 0 0 "
              "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 2 0 0 0 0 0");
  env.SetFile("/proc/42/task/43/status", "Name:\tpt_worker\nCpus_allowed_list:\t" +
                                             (thread43_cpus.empty() ? cpus : thread43_cpus) + "\n");
}

constexpr char kMapsLocal[] =
    "00400000 default file=/usr/bin/sleep mapped=100 N0=100 kernelpagesize_kB=4\n"
    "7f0000000000 default anon=1000 dirty=1000 N0=1000 kernelpagesize_kB=4\n";
// 512 huge pages (2 MiB) on node 1 = 1 GiB remote vs 4.4 MB local.
constexpr char kMapsRemote[] =
    "00400000 default file=/usr/bin/sleep mapped=100 N0=100 kernelpagesize_kB=4\n"
    "7f0000000000 bind:1 anon=512 N1=512 kernelpagesize_kB=2048\n";

TEST(AffinityTest, BoundAndLocalIsConsistent) {
  base::FakeEnv env;
  testing::BuildServer(env);
  AddProcess(env, "0-3", kMapsLocal);
  const Topology t = DiscoverTopology(env);
  auto p = ReadProcessPlacement(env, 42, t);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->command, "train");
  ASSERT_EQ(p->threads.size(), 2u);
  EXPECT_EQ(p->threads[0].last_cpu, 2);  // field 39, counted past "(train (main))"
  EXPECT_EQ(p->resident_bytes_per_node.at(0), 1100 * 4096);
  const auto r = CheckAffinity(t, *p);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.verdict, "consistent");
  EXPECT_EQ(r.cpu_nodes, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(r.mismatch_score, 0);
}

TEST(AffinityTest, UnboundProcessExitsTwo) {
  base::FakeEnv env;
  testing::BuildServer(env);
  AddProcess(env, "0-7", kMapsLocal);
  const Topology t = DiscoverTopology(env);
  const auto r = CheckAffinity(t, *ReadProcessPlacement(env, 42, t));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.verdict, "unbound");
  // Two nodes allowed: half the CPU choices are on the wrong node.
  EXPECT_DOUBLE_EQ(r.mismatch_score, 0.5);
}

TEST(AffinityTest, RemoteMemoryExitsThree) {
  base::FakeEnv env;
  testing::BuildServer(env);
  AddProcess(env, "0-3", kMapsRemote);
  const Topology t = DiscoverTopology(env);
  auto p = ReadProcessPlacement(env, 42, t);
  EXPECT_EQ(p->resident_bytes_per_node.at(1), 512LL * 2048 * 1024);
  const auto r = CheckAffinity(t, *p);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.verdict, "memory_not_local");
  // remote / all = 1 GiB / (1 GiB + 409600 B).
  const double want = 1073741824.0 / (1073741824.0 + 409600.0);
  EXPECT_DOUBLE_EQ(r.remote_memory_share, want);
  EXPECT_DOUBLE_EQ(r.mismatch_score, want);
}

TEST(AffinityTest, RemoteShareAtTheLimitIsStillLocal) {
  // remote = 0.30 x local exactly: not above the limit.
  base::FakeEnv env;
  testing::BuildServer(env);
  AddProcess(env, "0-3", "1000 default anon=1000 N0=1000 N1=300 kernelpagesize_kB=4\n");
  const Topology t = DiscoverTopology(env);
  EXPECT_EQ(CheckAffinity(t, *ReadProcessPlacement(env, 42, t)).exit_code, 0);
  env.SetFile("/proc/42/numa_maps", "1000 default anon=1000 N0=1000 N1=301 kernelpagesize_kB=4\n");
  EXPECT_EQ(CheckAffinity(t, *ReadProcessPlacement(env, 42, t)).exit_code, 3);
}

TEST(AffinityTest, GpuOnTheOtherSocketIsAWarning) {
  base::FakeEnv env;
  testing::BuildServer(env);
  AddProcess(env, "0-3", kMapsLocal);
  env.SetLink("/proc/42/fd/7", "/dev/nvidia2");
  env.SetLink("/proc/42/fd/8", "/dev/nvidiactl");
  env.SetLink("/proc/42/fd/9", "/dev/infiniband/uverbs0");
  env.SetFile("/proc/driver/nvidia/gpus/0000:81:00.0/information",
              "Model: \t\t NVIDIA H100\nDevice Minor: \t 2\n");
  env.SetFile("/sys/class/infiniband_verbs/uverbs0/ibdev", "mlx5_0\n");
  const Topology t = DiscoverTopology(env);
  auto p = ReadProcessPlacement(env, 42, t);
  EXPECT_EQ(p->gpus, std::vector<int>{2});
  EXPECT_EQ(p->nics, std::vector<std::string>{"mlx5_0"});
  const auto r = CheckAffinity(t, *p);
  EXPECT_EQ(r.exit_code, 0);  // a warning, not a failed check
  bool found = false;
  for (const auto& f : r.findings) {
    if (f.code == "device_remote" && f.message.find("GPU2") != std::string::npos) {
      found = true;
      EXPECT_DOUBLE_EQ(f.score, 1.0);  // both threads are bound to node 0
    }
  }
  EXPECT_TRUE(found);
}

TEST(AffinityTest, ThreadOnAnotherNodeIsAWarning) {
  base::FakeEnv env;
  testing::BuildServer(env);
  AddProcess(env, "0-3", kMapsLocal, "4-7");
  const Topology t = DiscoverTopology(env);
  const auto r = CheckAffinity(t, *ReadProcessPlacement(env, 42, t));
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings.back().code, "thread_split");
  EXPECT_DOUBLE_EQ(r.findings.back().score, 0.5);
}

TEST(AffinityTest, NoNumaInformationExitsOne) {
  base::FakeEnv env;
  AddProcess(env, "0-3", kMapsLocal);
  const Topology t = DiscoverTopology(env);
  const auto r = CheckAffinity(t, *ReadProcessPlacement(env, 42, t));
  EXPECT_EQ(r.exit_code, 1);
}

TEST(AffinityTest, SingleNodeIsConsistent) {
  base::FakeEnv env;
  env.SetFile("/sys/devices/system/node/online", "0\n");
  env.SetFile("/sys/devices/system/node/node0/cpulist", "0-3\n");
  AddProcess(env, "0-3", kMapsLocal);
  const Topology t = DiscoverTopology(env);
  EXPECT_EQ(CheckAffinity(t, *ReadProcessPlacement(env, 42, t)).exit_code, 0);
}

TEST(AffinityTest, UnreadableNodesOrMaskAreNotConsistent) {
  base::FakeEnv env;
  testing::BuildServer(env);
  AddProcess(env, "0-x", kMapsLocal);  // garbled mask
  Topology t = DiscoverTopology(env);
  EXPECT_EQ(CheckAffinity(t, *ReadProcessPlacement(env, 42, t)).exit_code, 2);
  env.SetFile("/sys/devices/system/node/node0/cpulist", "garbage\n");
  env.SetFile("/sys/devices/system/node/node1/cpulist", "garbage\n");
  t = DiscoverTopology(env);
  EXPECT_EQ(CheckAffinity(t, *ReadProcessPlacement(env, 42, t)).exit_code, 1);
}

TEST(AffinityTest, MissingProcessIsNotFound) {
  base::FakeEnv env;
  const Topology t = DiscoverTopology(env);
  EXPECT_EQ(ReadProcessPlacement(env, 7, t).status().code(), base::StatusCode::kNotFound);
}

}  // namespace
}  // namespace seedance::topo
