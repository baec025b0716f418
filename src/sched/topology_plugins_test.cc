#include "seedance/sched/topology_plugins.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace seedance::sched {
namespace {

Node EightGpus(int numa, int nics = 0) {
  Node n;
  n.name = "n";
  n.cpu_milli = 64000;
  n.memory_mib = 1 << 20;
  n.gpu_count = 8;
  n.gpu_model = "A100";
  n.numa_nodes = numa;
  n.nics = nics;
  return n;
}

Pod Gpus(const std::string& name, int k) {
  Pod p;
  p.name = name;
  p.cpu_milli = 100;
  p.memory_mib = 100;
  p.num_gpu = k;
  p.gpu_milli = 1000;
  return p;
}

TEST(TopologyPluginsTest, DomainsSplitTheGpusEvenlyInIndexOrder) {
  const Node two = EightGpus(2), four = EightGpus(4), one = EightGpus(1);
  const std::vector<int> want2 = {0, 0, 0, 0, 1, 1, 1, 1}, want4 = {0, 0, 1, 1, 2, 2, 3, 3};
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(NumaDomainOf(two, g), want2[static_cast<size_t>(g)]);
    EXPECT_EQ(NumaDomainOf(four, g), want4[static_cast<size_t>(g)]);
    EXPECT_EQ(NumaDomainOf(one, g), 0);
  }
  Node odd = EightGpus(16);  // more domains than GPUs: one GPU each
  EXPECT_EQ(NumaDomainOf(odd, 7), 7);
}

// Against brute force on random occupancies: when some domain has room, the pod ends in the one
// with the fewest free whole GPUs (lowest on ties), on its lowest free GPUs; otherwise the
// policy's GPUs stay; the cluster holds exactly the pod's final GPUs.
TEST(TopologyPluginsTest, NumaReserveAgreesWithBruteForce) {
  std::mt19937_64 rng(7);
  NumaAwareReserve numa;
  numa.set_enabled(true);
  int moved = 0, kept = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const int domains = trial % 2 == 0 ? 2 : 4;
    Cluster c({EightGpus(domains)});
    std::vector<int> busy;
    for (int g = 0; g < 8; ++g) {
      if (rng() % 2 == 0) busy.push_back(g);
    }
    if (!busy.empty()) c.Bind(Gpus("busy", static_cast<int>(busy.size())), 0, busy);
    const int k = 2 + static_cast<int>(rng() % 3);
    const Pod pod = Gpus("p", k);
    auto gpus = c.Place(pod, 0);
    if (!gpus) continue;
    Candidate at{0, 0, *gpus};
    c.Bind(pod, 0, at.gpus);
    ASSERT_TRUE(numa.Reserve(c, pod, at).ok());
    // The reference.
    std::vector<std::vector<int>> free(static_cast<size_t>(domains));
    const std::set<int> taken(busy.begin(), busy.end());
    for (int g = 0; g < 8; ++g) {
      if (taken.count(g) == 0) free[static_cast<size_t>(g * domains / 8)].push_back(g);
    }
    std::vector<int> want = *gpus;
    std::set<int> doms;
    for (int g : *gpus) doms.insert(g * domains / 8);
    if (doms.size() > 1) {
      int best = -1;
      for (int d = 0; d < domains; ++d) {
        const auto& f = free[static_cast<size_t>(d)];
        if (static_cast<int>(f.size()) >= k &&
            (best < 0 || f.size() < free[static_cast<size_t>(best)].size())) {
          best = d;
        }
      }
      if (best >= 0) {
        const auto& f = free[static_cast<size_t>(best)];
        want.assign(f.begin(), f.begin() + k);
      }
    }
    EXPECT_EQ(at.gpus, want) << "trial " << trial;
    (want == *gpus ? kept : moved) += 1;
    // The cluster holds the busy GPUs and the pod's, nothing else.
    for (int g = 0; g < 8; ++g) {
      const bool used = taken.count(g) != 0 || std::count(want.begin(), want.end(), g) != 0;
      EXPECT_EQ(c.state(0).gpu_left[static_cast<size_t>(g)], used ? 0 : 1000) << trial;
    }
    EXPECT_TRUE(c.Check().ok());
  }
  EXPECT_GT(moved, 100);  // both branches are exercised
  EXPECT_GT(kept, 100);
}

TEST(TopologyPluginsTest, NumaReserveLeavesSharesSingleGpusAndDisabledAlone) {
  NumaAwareReserve numa;
  Cluster c({EightGpus(2)});
  c.Bind(Gpus("busy", 2), 0, std::vector<int>{0, 1});
  const Pod pod = Gpus("p", 4);
  Candidate at{0, 0, {2, 3, 4, 5}};
  c.Bind(pod, 0, at.gpus);
  ASSERT_TRUE(numa.Reserve(c, pod, at).ok());  // off: unchanged
  EXPECT_EQ(at.gpus, (std::vector<int>{2, 3, 4, 5}));
  numa.set_enabled(true);
  ASSERT_TRUE(numa.Reserve(c, pod, at).ok());
  EXPECT_EQ(at.gpus, (std::vector<int>{4, 5, 6, 7}));  // domain 1 has all four free
  Pod share = Gpus("s", 1);
  share.gpu_milli = 500;
  Candidate one{0, 0, {2}};
  c.Bind(share, 0, one.gpus);
  ASSERT_TRUE(numa.Reserve(c, share, one).ok());
  EXPECT_EQ(one.gpus, std::vector<int>{2});
  EXPECT_TRUE(c.Check().ok());
}

TEST(TopologyPluginsTest, RdmaFilterExhaustively) {
  Cluster c({EightGpus(1, 0), EightGpus(1, 2)});
  RdmaFilter rdma;
  for (int enabled = 0; enabled < 2; ++enabled) {
    rdma.set_enabled(enabled != 0);
    for (int asks = 0; asks < 2; ++asks) {
      for (int gang : {1, 4}) {
        Pod p = Gpus("p", 1);
        p.rdma = asks != 0;
        p.gang = gang;
        const bool needs = enabled != 0 && (asks != 0 || gang > 1);
        EXPECT_EQ(rdma.Filter(c, p, 0), !needs) << enabled << asks << gang;
        EXPECT_TRUE(rdma.Filter(c, p, 1));
      }
    }
  }
}

}  // namespace
}  // namespace seedance::sched
