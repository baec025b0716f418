// Quotas and tiers: the guarantee rule as a table, and the order in which victims are chosen.
#include "src/sched/quota_preemption.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace seedance::sched {
namespace {

Node PoolNode(std::string name, std::string pool, int gpus) {
  Node n;
  n.name = std::move(name);
  n.cpu_milli = 1000;
  n.memory_mib = 1024;
  n.gpu_count = gpus;
  n.gpu_model = "G";
  n.pool = std::move(pool);
  return n;
}

TEST(QuotaPreemption, GuaranteeRule) {
  // Pools A (4 GPUs) and B (4 GPUs): quotas of 4000 milli-GPU each. Group A already holds 3000.
  const std::vector<Node> nodes = {PoolNode("a", "A", 4), PoolNode("b", "B", 4)};
  Cluster cluster(nodes);
  Pod three;
  three.num_gpu = 3;
  three.gpu_milli = 1000;
  cluster.Bind(three, 0, std::vector<int>{0, 1, 2});  // load 3000 / 8000 = 0.375
  struct Row {
    bool quotas, tiers;
    Tier tier;
    int64_t demand;
    bool guaranteed;
    const char* why;
  };
  // Silver with tiers: SilverQuotaScale(0.375) = 1.2 - 0.5 x 0.375 = 1.0125 of the quota
  // (4,050 with quotas; of the whole cluster's 8,000 = 8,100 without).
  const Row rows[] = {
      {false, false, Tier::kSilver, 1000, false, "no quotas, no tiers: nothing is guaranteed"},
      {true, false, Tier::kSilver, 1000, true, "3000 + 1000 <= 4000"},
      {true, false, Tier::kSilver, 2000, false, "3000 + 2000 > 4000"},
      {true, true, Tier::kGold, 5000, true, "Gold always"},
      {true, true, Tier::kBronze, 0, false, "Bronze never"},
      {true, true, Tier::kSilver, 1050, true, "4050 <= 1.0125 x 4000"},
      {true, true, Tier::kSilver, 1051, false, "4051 > 4050"},
      {false, true, Tier::kSilver, 5100, true, "8100 <= 1.0125 x 8000"},
      {false, true, Tier::kSilver, 5101, false, "8101 > 8100"},
  };
  for (const Row& r : rows) {
    QuotaPreemption q(nodes, QuotaOptions{r.quotas, r.tiers, -1});
    q.Start("A", 3000);
    EXPECT_EQ(q.Guaranteed("A", r.tier, r.demand, cluster), r.guaranteed) << r.why;
  }
}

TEST(QuotaPreemption, VictimsLowestTierFirstThenNewestAndNoneInVain) {
  const std::vector<Node> nodes = {PoolNode("a", "A", 8)};
  QuotaPreemption q(nodes, QuotaOptions{true, true, 2});
  const std::string a = "A", b = "B";
  // Newest first: 5 (B silver), 4 (B bronze), 3 (A bronze), 2 (B bronze, preempted twice: the
  // retry limit), 1 (A silver, not borrowing), 0 (A gold).
  const std::vector<RunningJob> running = {
      {5, &b, Tier::kSilver, true, 0},  {4, &b, Tier::kBronze, true, 0},
      {3, &a, Tier::kBronze, true, 0},  {2, &b, Tier::kBronze, true, 2},
      {1, &a, Tier::kSilver, false, 0}, {0, &a, Tier::kGold, true, 0}};
  // A Silver job of group A: candidates are 4 and 3 (Bronze, newest first), then 5 (Silver of
  // another group); 0 is Gold of its own group (rank not above), 1 does not borrow, 2 is at its
  // limit.
  std::vector<std::vector<size_t>> tried;
  auto record = [&](size_t enough) {
    return [&tried, enough](const std::vector<size_t>& v) {
      tried.push_back(v);
      return v.size() >= enough;
    };
  };
  EXPECT_EQ(q.SelectVictims(a, Tier::kSilver, running, record(2)), (std::vector<size_t>{4, 3}));
  EXPECT_EQ(tried, (std::vector<std::vector<size_t>>{{4}, {4, 3}}));
  tried.clear();
  EXPECT_TRUE(q.SelectVictims(a, Tier::kSilver, running, record(4)).empty());  // in vain
  EXPECT_EQ(tried.back(), (std::vector<size_t>{4, 3, 5}));
}

}  // namespace
}  // namespace seedance::sched
