// The NCCL advisor on fake /sys trees and topology files, and the log reader
// on a log written in NCCL's formats.
#include <gtest/gtest.h>

#include <random>

#include "seedance/base/civil_time.h"
#include "seedance/base/testing/text_mutator.h"
#include "seedance/comm/nccl_advisor.h"
#include "seedance/comm/nccl_log.h"

namespace seedance::comm {
namespace {

std::map<std::string, std::string> ByVariable(const std::vector<NcclAdvice>& a) {
  std::map<std::string, std::string> m;
  for (const auto& x : a) m[x.variable] = x.value;
  return m;
}

// A node as topo reads it: two NVIDIA GPUs and an ASPEED VGA chip, an InfiniBand HCA behind
// the first GPU's PCIe switch (up), one that is down, an Ethernet interface and a Wi-Fi one.
topo::Topology TwoGpuNode() {
  topo::Topology t;
  t.nodes.resize(2);
  auto gpu = [](int index, std::string vendor, std::vector<std::string> path, int numa) {
    topo::Gpu g;
    g.index = index;
    g.vendor = std::move(vendor);
    g.pci_path = std::move(path);
    g.numa_node = numa;
    return g;
  };
  t.gpus = {gpu(0, "nvidia", {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0"}, 0),
            gpu(1, "nvidia", {"pci0000:00", "0000:00:02.0"}, 0),
            gpu(2, "aspeed", {"pci0000:00", "0000:00:04.0"}, 0)};
  auto nic = [](std::string name, std::string kind, double gbits_per_s, bool up,
                std::vector<std::string> path, int numa) {
    topo::Nic n;
    n.name = std::move(name);
    n.kind = std::move(kind);
    n.speed_gbits_per_s = gbits_per_s;
    n.up = up;
    n.pci_path = std::move(path);
    n.numa_node = numa;
    return n;
  };
  t.nics = {nic("mlx5_0", "infiniband", 400, true,
                {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0"}, 0),
            nic("mlx5_1", "infiniband", 400, false, {"pci0000:80", "0000:80:01.0"}, 1),
            nic("eth0", "ethernet", 25, true, {"pci0000:00", "0000:00:03.0"}, 0),
            nic("wlan0", "wireless", 1, true, {}, 0)};
  return t;
}

TEST(NcclAdvisor, FromTheNodeTopology) {
  topo::Topology node = TwoGpuNode();
  Topology t = FromNodeTopology(node);
  EXPECT_EQ(t.source, "detected");
  EXPECT_EQ(t.gpus_per_node, 2);  // the VGA chip is not counted
  EXPECT_FALSE(t.nvlink);
  ASSERT_EQ(t.nics.size(), 3u);  // wireless left out
  EXPECT_EQ(t.nics[0].name, "mlx5_0");
  EXPECT_EQ(t.nics[0].speed_gbits_per_s, 400);
  EXPECT_FALSE(t.nics[1].up);
  EXPECT_EQ(t.nics[2].type, "ethernet");
  // GPU 0 reaches mlx5_0 through its switch (PXB), GPU 1 only through the host bridge (PHB): the
  // farther of the two is within the NUMA node. mlx5_1 is down and does not count.
  EXPECT_EQ(t.gpu_nic_affinity, "same-numa");
  auto a = ByVariable(AdviseNccl(t));
  EXPECT_EQ(a.at("NCCL_IB_HCA"), "mlx5_0");        // the port that is down is left out
  EXPECT_EQ(a.at("NCCL_P2P_LEVEL"), "PXB");        // no NVLink known
  EXPECT_FALSE(a.contains("NCCL_SOCKET_IFNAME"));  // single node with IB: nothing to steer
  // GPU 1 moved behind the switch too: every GPU has the HCA under its switch.
  node.gpus[1].pci_path = {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:02.0"};
  EXPECT_EQ(FromNodeTopology(node).gpu_nic_affinity, "same-pcie-switch");
  // Only the HCA on the other socket up: cross-NUMA.
  node.nics[0].up = false;
  node.nics[1].up = true;
  EXPECT_EQ(FromNodeTopology(node).gpu_nic_affinity, "cross-numa");
  // No RDMA NIC up: unknown. NVLink between the GPUs is seen.
  node.nics[1].up = false;
  node.nvlinks = {{0, 12, 0}, {12, 0, 0}, {0, 0, 0}};
  t = FromNodeTopology(node);
  EXPECT_EQ(t.gpu_nic_affinity, "unknown");
  EXPECT_TRUE(t.nvlink);
}

TEST(NcclAdvisor, SocketsOnlyClusterFromAFile) {
  const char* yaml = R"(topology:
  nodes: 4
  gpus_per_node: 8
  nvlink: true
  nics:
    - {name: ens1f0, type: ethernet, speed_gbits_per_s: 100}
    - {name: eno1, type: ethernet, speed_gbits_per_s: 1}
)";
  auto t = ParseTopologyYaml(yaml, "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const auto a = ByVariable(AdviseNccl(*t));
  EXPECT_EQ(a.at("NCCL_IB_DISABLE"), "1");
  EXPECT_EQ(a.at("NCCL_SOCKET_IFNAME"), "=ens1f0");
  EXPECT_EQ(a.at("NCCL_SOCKET_NTHREADS"), "4");
  EXPECT_EQ(a.at("NCCL_NSOCKS_PERTHREAD"), "4");
  EXPECT_EQ(a.at("NCCL_P2P_LEVEL"), "NVL");
}

TEST(NcclAdvisor, RoceAndGpuDirect) {
  const char* yaml = R"(topology:
  nodes: 2
  gpu_nic_affinity: same-pcie-switch
  nics: [{name: mlx5_2, type: roce, speed_gbits_per_s: 200}]
)";
  auto t = ParseTopologyYaml(yaml, "t.yaml");
  ASSERT_TRUE(t.ok());
  const auto a = ByVariable(AdviseNccl(*t));
  EXPECT_EQ(a.at("NCCL_IB_HCA"), "mlx5_2");
  EXPECT_EQ(a.at("NCCL_IB_GID_INDEX"), "3");
  EXPECT_EQ(a.at("NCCL_NET_GDR_LEVEL"), "PXB");
}

TEST(NcclAdvisor, TopologyFileErrorsNameTheField) {
  auto t = ParseTopologyYaml("topology:\n  nics:\n    - {name: x, type: fibre}\n", "t.yaml");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().where(), "t.yaml:3: topology.nics[0].type");
  t = ParseTopologyYaml("topology:\n  nodes: 0\n", "t.yaml");
  EXPECT_EQ(t.status().where(), "t.yaml:2: topology.nodes");
  std::mt19937 rng(1);
  const std::string good = "topology:\n  nodes: 2\n  nics:\n    - {name: a, type: roce}\n";
  for (int i = 0; i < 2000; ++i) {
    auto f = ParseTopologyYaml(base::testing::MutateText(good, rng), "f.yaml");
    if (!f.ok()) {
      EXPECT_TRUE(std::string(f.status().where()).starts_with("f.yaml"));
    }
  }
}

constexpr const char* kLog = R"(starting training
node1:100:100 [0] NCCL INFO NCCL version 2.18.3+cuda12.2
node1:100:120 [0] NCCL INFO Channel 00/02 :    0   1   2   3
node1:100:120 [0] NCCL INFO Channel 01/02 :    0   3   2   1
node1:100:120 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1
node1:100:120 [0] NCCL INFO Channel 00/0 : 0[18000] -> 1[3b000] via P2P/IPC/read
node1:100:120 [0] NCCL INFO Channel 01/0 : 0[18000] -> 1[3b000] via P2P/IPC/read
node1:101:121 [1] NCCL INFO Channel 00/0 : 1[3b000] -> 2[18000] [send] via NET/IB/0/GDRDMA
node1:100:120 [0] NCCL INFO comm 0x55aa rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 - Init COMPLETE
node1:101:121 [1] NCCL INFO comm 0x66bb rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 3b000 - Init COMPLETE
[2024-05-01 10:00:00.000] node1:100:100 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count 1048576 datatype 7 op 0 root 0 comm 0x55aa [nranks=4] stream 0x1
[2024-05-01 10:00:00.250] node1:100:100 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x7f00 recvbuff 0x7f00 count 4096 datatype 6 op 0 root 0 comm 0x55aa [nranks=4] stream 0x1
[2024-05-01 10:00:00.260] node1:100:100 [0] NCCL INFO Broadcast: opCount 2 sendbuff 0x7f00 recvbuff 0x7f00 count 10 datatype 0 op 0 root 0 comm 0x55aa [nranks=4] stream 0x1
[2024-05-01 10:00:01.260] node1:100:100 [0] NCCL INFO AllReduce: opCount 3 sendbuff 0x7f00 recvbuff 0x7f00 count 8 datatype 9 op 0 root 0 comm 0x55aa [nranks=4] stream 0x1
loss 0.5
)";

TEST(NcclLog, RingsTransportsAndCollectives) {
  auto r = AnalyzeNcclLog(kLog, "train.log");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["nccl_version"], "2.18.3+cuda12.2");
  EXPECT_EQ((*r)["channels"], 2);
  EXPECT_EQ((*r)["rings"][1]["ranks"], "0 3 2 1");
  EXPECT_EQ((*r)["trees"], 1);
  EXPECT_EQ((*r)["transports"]["P2P/IPC/read"], 2);
  EXPECT_EQ((*r)["transports"]["NET/IB/0/GDRDMA"], 1);
  EXPECT_EQ((*r)["communicators"].size(), 2u);
  // AllReduce: 1048576 float32 + 4096 half + 8 bf16.
  const auto& colls = (*r)["collectives"];
  ASSERT_EQ(colls.size(), 2u);
  EXPECT_EQ(colls[0]["op"], "AllReduce");
  EXPECT_EQ(colls[0]["calls"], 3);
  EXPECT_EQ(colls[0]["bytes"], 4194304 + 8192 + 16);
  // Timestamps: the Broadcast waited 1 s for the next collective, the first AllReduce 250 ms.
  const auto& slow = (*r)["slowest"];
  ASSERT_EQ(slow.size(), 3u);
  EXPECT_EQ(slow[0]["op"], "Broadcast");
  EXPECT_NEAR(slow[0]["gap_to_next_ms"].get<double>(), 1000, 1e-6);
  EXPECT_NEAR(slow[1]["gap_to_next_ms"].get<double>(), 250, 1e-6);
  EXPECT_EQ(slow[1]["line"], 11);  // the first AllReduce
}

TEST(NcclLog, WithoutTimestampsRanksByBytesAndRejectsNonNcclText) {
  std::string untimed = kLog;
  size_t at;
  while ((at = untimed.find("[2024-05-01")) != std::string::npos) {
    untimed.erase(at, untimed.find(']', at) - at + 2);
  }
  auto r = AnalyzeNcclLog(untimed, "u.log");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["ranked_by"], "bytes");
  EXPECT_EQ((*r)["largest"][0]["bytes"], 4194304);
  EXPECT_FALSE(AnalyzeNcclLog("hello\nworld\n", "x.log").ok());
  std::mt19937 rng(3);
  for (int i = 0; i < 500; ++i) {
    (void)AnalyzeNcclLog(base::testing::MutateText(kLog, rng, 8), "fuzz.log");  // never crashes
  }
}

// Found by the nccl_log fuzz target: a stamp with a huge year overflowed int64 in UnixSeconds.
// An out-of-range stamp is not a stamp now, so its line is not taken for an NCCL line (as with any
// unknown "[...]" prefix): one AllReduce fewer, no crash.
TEST(NcclLog, OutOfRangeTimestampsAreIgnored) {
  for (const char* stamp :
       {"[2147483647-05-01 10:00:00.000] ", "[1e400] ", "[2024-13-01 10:00:00] ",
        "[2024-05-01 10:00:00.x] ", "[-5] ", "[nan] "}) {
    std::string log = kLog;
    const size_t at = log.find("[2024-05-01 10:00:00.250] ");
    log.replace(at, 26, stamp);
    auto r = AnalyzeNcclLog(log, "t.log");
    ASSERT_TRUE(r.ok()) << stamp << r.status().ToString();
    EXPECT_EQ((*r)["collectives"][0]["calls"], 2) << stamp;
  }
  EXPECT_EQ(base::ParseCivilSeconds("2017-10-09 07:01:55"), 1507532515);
  EXPECT_EQ(base::ParseCivilSeconds("2017-10-09 07:01:55.5"), 1507532515);  // the rest is not read
  for (const char* bad : {"2017-10-09 07:01:5", "+017-10-09 07:01:55", "1969-12-31 23:59:59",
                          "2017-00-09 07:01:55", "2017-10-32 07:01:55", "2017-10-09 24:00:00",
                          "2017-10-09 07:60:00", "2017-10-09 07:01:61", "2017/10/09 07:01:55"}) {
    EXPECT_FALSE(base::ParseCivilSeconds(bad).has_value()) << bad;
  }
}

// Hardening finding 2: a real 8,192-rank ring line (about 40 KB) used to exhaust the stack of
// the regular-expression engine; it is read in linear time now.
TEST(NcclLog, AnEightThousandRankRingLineIsRead) {
  std::string ring = "node1:100:120 [0] NCCL INFO Channel 00/01 :";
  for (int i = 0; i < 8192; ++i) ring += "    " + std::to_string(i);
  ASSERT_GT(ring.size(), 26'000u);
  auto r = AnalyzeNcclLog(ring + "\n", "big.log");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string ranks = (*r)["rings"][0]["ranks"];
  EXPECT_TRUE(ranks.starts_with("0 1 2 "));
  EXPECT_TRUE(ranks.ends_with(" 8190 8191"));
  // A line of 1 MB of one character does not crash either.
  EXPECT_FALSE(AnalyzeNcclLog(std::string(1 << 20, 'a'), "a.log").ok());
}

// Hardening finding 2: out-of-range integers used to throw out of std::stoi; they are errors
// that name the line now.
TEST(NcclLog, OutOfRangeNumbersNameTheLine) {
  const std::string line =
      "n:1:2 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count "
      "99999999999999999999999 datatype 7 op 0 root 0 comm 0x55aa [nranks=4] stream 0x1\n";
  auto r = AnalyzeNcclLog("x\n" + line, "c.log");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().where(), "c.log:2");
  EXPECT_NE(r.status().message().find("count"), std::string_view::npos);
  auto rank = AnalyzeNcclLog(
      "n:1:2 [0] NCCL INFO comm 0x55aa rank 4294967296 nranks 4 cudaDev 0 - Init COMPLETE\n",
      "r.log");
  ASSERT_FALSE(rank.ok());
  EXPECT_EQ(rank.status().where(), "r.log:1");
}

// Hardening finding 9: a log with CRLF line ends is the same log.
TEST(NcclLog, CrlfLineEndsAreAccepted) {
  std::string crlf;
  for (char c : std::string(kLog)) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  auto a = AnalyzeNcclLog(kLog, "x.log");
  auto b = AnalyzeNcclLog(crlf, "x.log");
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().ToString();
  EXPECT_EQ(*a, *b);
}

}  // namespace
}  // namespace seedance::comm
