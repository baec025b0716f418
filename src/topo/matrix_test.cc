#include "seedance/topo/matrix.h"

#include <gtest/gtest.h>

#include <random>

#include "seedance/base/fake_env.h"
#include "src/topo/fake_node_for_test.h"

namespace seedance::topo {
namespace {

using Path = std::vector<std::string>;

TEST(PciRelationTest, LegendCases) {
  const Path sw_a = {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"};
  const Path sw_b = {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0"};
  const Path port2 = {"pci0000:00", "0000:00:02.0", "0000:05:00.0"};
  const Path other_bridge_same_node = {"pci0000:40", "0000:40:01.0", "0000:41:00.0"};
  const Path other_node = {"pci0000:80", "0000:80:01.0", "0000:81:00.0"};
  // Two levels of switches below one root port.
  const Path deep_a = {"pci0000:00",   "0000:00:01.0", "0000:01:00.0", "0000:02:00.0",
                       "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"};
  const Path deep_b = {"pci0000:00",   "0000:00:01.0", "0000:01:00.0", "0000:02:01.0",
                       "0000:09:00.0", "0000:0a:00.0", "0000:0b:00.0"};
  struct Case {
    Path a;
    int node_a;
    Path b;
    int node_b;
    Link want;
  } cases[] = {
      // Shared ancestors {00:01.0, 01:00.0}; below: {02:0x.0, device} = 2 on each side -> one
      // switch.
      {sw_a, 0, sw_b, 0, Link::kPix},
      // Shared {00:01.0, 01:00.0}; below: 4 functions -> several bridges.
      {deep_a, 0, deep_b, 0, Link::kPxb},
      // Same host bridge pci0000:00, no shared function -> through the host bridge.
      {sw_a, 0, port2, 0, Link::kPhb},
      // Different host bridges of node 0 -> NODE; of nodes 0 and 1 -> SYS.
      {sw_a, 0, other_bridge_same_node, 0, Link::kNode},
      {sw_a, 0, other_node, 1, Link::kSys},
      // Unknown nodes on a multi-node machine are not assumed local.
      {sw_a, -1, other_bridge_same_node, -1, Link::kSys},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(PciRelation(c.a, c.node_a, c.b, c.node_b, false), c.want)
        << c.a.back() << " vs " << c.b.back();
    EXPECT_EQ(PciRelation(c.b, c.node_b, c.a, c.node_a, false), c.want) << "symmetric";
  }
  // On a single-node machine an unknown node (-1) is that node.
  EXPECT_EQ(PciRelation(sw_a, -1, other_bridge_same_node, -1, true), Link::kNode);
}

TEST(MatrixTest, ServerMatrixWithNvlinks) {
  base::FakeEnv env;
  testing::BuildServer(env);
  Topology t = DiscoverTopology(env);
  ASSERT_TRUE(SetNvlinks(t, {{0, 12, 0}, {12, 0, 0}, {0, 0, 0}}, "test").ok());
  const auto names = MatrixDeviceNames(t);
  EXPECT_EQ(names, (std::vector<std::string>{"GPU0", "GPU1", "GPU2", "NIC0", "NIC1"}));
  const auto m = ConnectionMatrix(t);
  std::vector<std::vector<std::string>> labels;
  for (const auto& row : m) {
    labels.emplace_back();
    for (const auto& c : row) labels.back().push_back(LinkLabel(c));
  }
  // GPU0 03:00.0 and NIC0 04:00.0 share the switch; GPU1 05:00.0 hangs off
  // another root port; GPU2 is on the other socket; eth0 sits on a root port.
  const std::vector<std::vector<std::string>> want = {
      {"X", "NV12", "SYS", "PIX", "PHB"}, {"NV12", "X", "SYS", "PHB", "PHB"},
      {"SYS", "SYS", "X", "SYS", "SYS"},  {"PIX", "PHB", "SYS", "X", "PHB"},
      {"PHB", "PHB", "SYS", "PHB", "X"},
  };
  EXPECT_EQ(labels, want);
}

constexpr char kDgxLike[] =
    "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV12\tNV12\tSYS\tPXB\t0-31\t0\t\tN/A\n"
    "GPU1\tNV12\t X \tNV12\tSYS\tPXB\t0-31\t0\t\tN/A\n"
    "GPU2\tNV12\tNV12\t X \tNV4\tSYS\t32-63\t1\t\tN/A\n"
    "GPU3\tSYS\tSYS\tNV4\t X \tSYS\t32-63\t1\t\tN/A\n"
    "NIC0\tPXB\tPXB\tSYS\tSYS\t X \n"
    "\n"
    "Legend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n\n"
    "NIC Legend:\n\n  NIC0: mlx5_0\n";

TEST(NvidiaSmiTopoTest, ReadsTheNvCells) {
  auto m = ParseNvidiaSmiTopo(kDgxLike, "topo.txt");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const std::vector<std::vector<int>> want = {
      {0, 12, 12, 0}, {12, 0, 12, 0}, {12, 12, 0, 4}, {0, 0, 4, 0}};
  EXPECT_EQ(*m, want);
}

TEST(NvidiaSmiTopoTest, ErrorsNameTheLine) {
  std::string bad = kDgxLike;
  bad.replace(bad.find("NV4\tSYS\t32"), 3, "NVx");
  auto m = ParseNvidiaSmiTopo(bad, "topo.txt");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().where(), "topo.txt:4");
  EXPECT_FALSE(ParseNvidiaSmiTopo("hello\n", "t").ok());
  std::string missing_row = kDgxLike;
  missing_row.erase(missing_row.find("GPU3\tSYS"),
                    missing_row.find("NIC0\tPXB") - missing_row.find("GPU3\tSYS"));
  EXPECT_FALSE(ParseNvidiaSmiTopo(missing_row, "t").ok());
}

// Hardening finding 8: an empty cell used to shift the row left, and a one-sided link was
// accepted.
TEST(NvidiaSmiTopoTest, EmptyCellsAndAsymmetricLinksAreErrors) {
  std::string empty = kDgxLike;
  empty.replace(empty.find("GPU1\tNV12"), 9, "GPU1\t");
  auto e = ParseNvidiaSmiTopo(empty, "topo.txt");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().where(), "topo.txt:3");
  std::string one_sided = kDgxLike;
  one_sided.replace(one_sided.find("NV4\t X"), 3, "SYS");  // GPU3 -> GPU2 no longer NV4
  auto a = ParseNvidiaSmiTopo(one_sided, "topo.txt");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("symmetric"), std::string_view::npos);
  EXPECT_EQ(a.status().where(), "topo.txt:5");
  std::string off_diagonal = kDgxLike;
  off_diagonal.replace(off_diagonal.find("GPU0\t X \tNV12"), 14, "GPU0\tNV12\t X ");
  EXPECT_FALSE(ParseNvidiaSmiTopo(off_diagonal, "topo.txt").ok());
}

TEST(NvidiaSmiTopoTest, MutatedInputNeverCrashes) {
  std::mt19937 rng(3);
  const std::string base = kDgxLike;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string s = base;
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s[pos] = static_cast<char>(rng() % 128);
          break;
        case 1:
          s.erase(pos, 1 + rng() % 5);
          break;
        default:
          s.insert(pos, 1, "\tNVX 0\n"[rng() % 7]);
          break;
      }
      if (s.empty()) s = "x";
    }
    auto m = ParseNvidiaSmiTopo(s, "fuzz");
    if (m.ok()) {
      for (const auto& row : *m) EXPECT_EQ(row.size(), m->size());
    }
  }
}

}  // namespace
}  // namespace seedance::topo
