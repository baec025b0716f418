// Incremental scoring must choose exactly what the full scan chooses: the same node and GPUs for
// every pod, under every tie rule (the random one from the same generator state), on random
// clusters with repeating pod shapes, placements and removals.
#include "src/sched/score_cache.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "seedance/sched/framework.h"

namespace seedance::sched {
namespace {

std::vector<Node> RandomNodes(std::mt19937_64& rng, int n) {
  std::vector<Node> nodes;
  const int gpus[] = {0, 1, 2, 4, 8};
  for (int i = 0; i < n; ++i) {
    Node x;
    x.name = "node-" + std::to_string(i);
    x.cpu_milli = 16000 * static_cast<int64_t>(1 + rng() % 8);
    x.memory_mib = 65536 * static_cast<int64_t>(1 + rng() % 4);
    x.gpu_count = gpus[rng() % 5];
    x.gpu_model = rng() % 2 ? "A" : "B";
    nodes.push_back(x);
  }
  return nodes;
}

std::vector<Pod> RandomPods(std::mt19937_64& rng, int n) {
  // A few shapes, repeated: the cache's case.
  std::vector<Pod> shapes;
  for (int s = 0; s < 12; ++s) {
    Pod p;
    p.cpu_milli = 1000 * static_cast<int64_t>(1 + rng() % 16);
    p.memory_mib = 1024 * static_cast<int64_t>(1 + rng() % 32);
    switch (rng() % 4) {
      case 0:
        p.num_gpu = 0;
        break;
      case 1:
        p.num_gpu = 1;
        p.gpu_milli = 100 * static_cast<int>(1 + rng() % 9);
        break;
      default:
        p.num_gpu = 1 + static_cast<int>(rng() % 4);
        p.gpu_milli = 1000;
        break;
    }
    if (rng() % 4 == 0) p.gpu_models = {"A"};
    shapes.push_back(p);
  }
  std::vector<Pod> pods;
  for (int i = 0; i < n; ++i) {
    Pod p = shapes[rng() % shapes.size()];
    p.name = "pod-" + std::to_string(i);
    pods.push_back(p);
  }
  return pods;
}

void ExpectSameChoices(const std::string& policy, TieBreak ties, uint64_t seed) {
  std::mt19937_64 gen(seed);
  const std::vector<Node> nodes = RandomNodes(gen, 60);
  const std::vector<Pod> pods = RandomPods(gen, 600);
  auto a = MakePolicy(policy, pods);
  auto b = MakePolicy(policy, pods);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->scores_each_node_alone()) << policy;
  const bool normalises = policy == "bestfit" || policy == "dotprod";
  Framework scan(std::move(*a)), cached(std::move(*b));
  scan.SetTieBreak(ties);
  cached.SetTieBreak(ties);
  cached.EnableScoreCache(true);
  Cluster c1(nodes), c2(nodes);
  PrepareTieOrder(c1, ties, seed);
  PrepareTieOrder(c2, ties, seed);
  std::mt19937_64 r1(seed), r2(seed), pick(seed + 1);
  std::vector<std::pair<const Pod*, Candidate>> placed;
  for (const Pod& p : pods) {
    const auto x = scan.Schedule(c1, p, r1).value();
    const auto y = cached.Schedule(c2, p, r2).value();
    ASSERT_EQ(x.has_value(), y.has_value()) << policy << " " << p.name;
    if (x) {
      ASSERT_EQ(x->node, y->node) << policy << " " << p.name;
      ASSERT_EQ(x->gpus, y->gpus) << policy << " " << p.name;
      // A cached choice carries the score before normalisation.
      if (!normalises) {
        ASSERT_EQ(x->score, y->score) << policy << " " << p.name;
      }
      placed.emplace_back(&p, *x);
    }
    // Now and then a pod leaves, so that nodes also gain capacity.
    if (!placed.empty() && pick() % 5 == 0) {
      const size_t i = pick() % placed.size();
      scan.Unschedule(c1, *placed[i].first, placed[i].second);
      cached.Unschedule(c2, *placed[i].first, placed[i].second);
      placed.erase(placed.begin() + static_cast<int64_t>(i));
    }
  }
  EXPECT_GT(placed.size(), 50u);
}

TEST(ScoreCacheTest, ChoosesWhatTheFullScanChooses) {
  for (const char* policy : {"fgd", "gpupacking", "gpuclustering", "bestfit", "dotprod"}) {
    for (TieBreak ties : {TieBreak::kNodeName, TieBreak::kShuffledNodeNames, TieBreak::kRandom}) {
      for (uint64_t seed : {1u, 2u, 3u}) ExpectSameChoices(policy, ties, seed);
    }
  }
}

// A copy of a cluster is a new history: an empty change log (a trial copy of a long run must not
// copy the whole log) and its own id, so a cache that followed the old object starts again.
TEST(ScoreCacheTest, ACopyIsANewHistoryAndTheCacheStartsAgain) {
  std::mt19937_64 gen(9);
  const std::vector<Node> nodes = RandomNodes(gen, 30);
  const std::vector<Pod> pods = RandomPods(gen, 200);
  auto policy = MakePolicy("bestfit", pods);
  ASSERT_TRUE(policy.ok());
  Framework cached(std::move(*policy));
  cached.SetTieBreak(TieBreak::kNodeName);
  cached.EnableScoreCache(true);
  Cluster c(nodes);
  std::mt19937_64 rng(1);
  for (size_t i = 0; i < 100; ++i) cached.Schedule(c, pods[i], rng).value();
  ASSERT_FALSE(c.change_log().empty());
  const Cluster copy(c);
  EXPECT_TRUE(copy.change_log().empty());
  EXPECT_NE(copy.history_id(), c.history_id());
  EXPECT_EQ(copy.used_gpu_milli(), c.used_gpu_milli());
  // The same object, assigned an empty cluster: the cache must not keep the full nodes' entries.
  c = Cluster(nodes);
  auto again = MakePolicy("bestfit", pods);
  ASSERT_TRUE(again.ok());
  Framework scan(std::move(*again));
  scan.SetTieBreak(TieBreak::kNodeName);
  Cluster fresh(nodes);
  for (size_t i = 100; i < pods.size(); ++i) {
    const auto x = scan.Schedule(fresh, pods[i], rng).value();
    const auto y = cached.Schedule(c, pods[i], rng).value();
    ASSERT_EQ(x.has_value(), y.has_value()) << pods[i].name;
    if (x) {
      ASSERT_EQ(x->node, y->node) << pods[i].name;
    }
  }
}

TEST(ScoreCacheTest, PoliciesThatDrawOrCompareNodesAreNotCached) {
  const std::vector<Pod> pods = {Pod{}};
  for (const char* policy : {"random", "seedance"}) {
    auto p = MakePolicy(policy, pods);
    ASSERT_TRUE(p.ok());
    EXPECT_FALSE((*p)->scores_each_node_alone()) << policy;
  }
}

}  // namespace
}  // namespace seedance::sched
