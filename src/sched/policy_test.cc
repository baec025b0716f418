// Cluster bookkeeping, the policies' scores with the arithmetic written out,
// and the FGD protocol's invariants on the real default trace.
#include "seedance/sched/policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "seedance/base/env.h"
#include "seedance/base/testing/data.h"
#include "seedance/sched/fgd_protocol.h"
#include "seedance/sched/readers.h"
#include "src/sched/fragmentation.h"

namespace seedance::sched {
namespace {

Node MakeNode(std::string name, int64_t cpu, int gpus, std::string model = "G2") {
  Node n;
  n.name = std::move(name);
  n.cpu_milli = cpu;
  n.memory_mib = 1 << 20;
  n.gpu_count = gpus;
  n.gpu_model = gpus ? std::move(model) : "";
  return n;
}

Pod MakePod(int64_t cpu, int num_gpu, int milli, std::vector<std::string> models = {}) {
  Pod p;
  p.name = "p";
  p.cpu_milli = cpu;
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  p.gpu_models = std::move(models);
  return p;
}

TEST(Cluster, FitChooseBindUnbind) {
  Cluster c({MakeNode("a", 8000, 2), MakeNode("b", 8000, 0)});
  const Pod share = MakePod(1000, 1, 300);
  ASSERT_TRUE(c.Fits(share, 0));
  EXPECT_FALSE(c.Fits(share, 1));  // no GPUs
  auto g = c.ChooseGpus(share, 0);
  ASSERT_TRUE(g.has_value());
  c.Bind(share, 0, *g);
  // A second share goes to the fuller GPU (best fit): GPU 0 has 700 left, GPU 1 1000.
  EXPECT_EQ(*c.ChooseGpus(MakePod(1000, 1, 600), 0), std::vector<int>{0});
  // Two whole GPUs no longer fit: GPU 0 is shared.
  EXPECT_FALSE(c.Fits(MakePod(1000, 2, 1000), 0));
  EXPECT_FALSE(c.Fits(MakePod(1000, 1, 300, {"T4"}), 0));  // wrong GPU type
  EXPECT_EQ(c.used_gpu_milli(), 300);
  EXPECT_TRUE(c.Check().ok());
  c.Unbind(share, 0, *g);
  EXPECT_EQ(c.used_gpu_milli(), 0);
  EXPECT_EQ(c.state(0).full_free_gpus(), 2);
  EXPECT_TRUE(c.Check().ok());
}

TEST(Policy, NodeFragmentationByHand) {
  NodeState s;
  s.cpu_left = 10000;
  s.gpu_left = {1000, 500, 200};  // idle: 1700 milli
  std::vector<PodClass> m(3);
  m[0] = {1000, 1, 600, {}, 0.5};    // fits GPU 0 only (Q3): fragment = 500 + 200 = 700
  m[1] = {20000, 1, 100, {}, 0.25};  // CPU lacking (Q2): all idle GPU, 1700
  m[2] = {1000, 0, 0, {}, 0.25};     // CPU-only: all idle GPU, 1700
  // 0.5 * 700 + 0.25 * 1700 + 0.25 * 1700 = 1200
  EXPECT_DOUBLE_EQ(NodeFragmentation(s, "G2", m), 1200.0);
  m[0].gpu_models = {"T4"};  // no access: 1700 for that class too -> 0.5*1700 + 850 = 1700
  EXPECT_DOUBLE_EQ(NodeFragmentation(s, "G2", m), 1700.0);
}

TEST(Policy, FragmentationCacheAgreesWithTheDirectFormula) {
  // Random node states: the memoised F (keyed by sorted milli left) equals
  // NodeFragmentation, and Increase is after - before.
  std::vector<PodClass> m(3);
  m[0] = {1000, 1, 600, {}, 0.5};
  m[1] = {4000, 2, 1000, {}, 0.3};
  m[2] = {500, 1, 250, {"G2"}, 0.2};
  Cluster c({MakeNode("a", 16000, 4), MakeNode("b", 16000, 4, "T4")});
  const FragmentationCache cache(m);
  std::mt19937_64 rng(5);
  for (int step = 0; step < 200; ++step) {
    const int node = static_cast<int>(rng() % 2);
    const Pod p =
        MakePod(static_cast<int64_t>(rng() % 3000), 1, 100 + static_cast<int>(rng() % 900));
    auto gpus = c.Place(p, node);
    if (!gpus) continue;
    const double inc = cache.Increase(c, p, node, *gpus);
    NodeState after = c.After(p, node, *gpus);
    const std::string& model = c.nodes()[static_cast<size_t>(node)].gpu_model;
    EXPECT_NEAR(
        inc, NodeFragmentation(after, model, m) - NodeFragmentation(c.state(node), model, m), 1e-9);
    c.Bind(p, node, *gpus);
    EXPECT_NEAR(cache.Current(c, node), NodeFragmentation(c.state(node), model, m), 1e-9);
  }
}

TEST(Policy, TypicalPodsCoverTheirShare) {
  std::vector<Pod> pods;
  for (int i = 0; i < 60; ++i) pods.push_back(MakePod(1000, 1, 500));
  for (int i = 0; i < 36; ++i) pods.push_back(MakePod(2000, 1, 1000));
  for (int i = 0; i < 4; ++i) pods.push_back(MakePod(3000, 0, 0));
  // 60% + 36% = 96% >= 95%: two classes, popularity 60/96 and 36/96.
  EXPECT_EQ(TypicalPods(pods).size(), 3u);  // the default keeps every class (policy.h says why)
  const auto t = TypicalPods(pods, 0.95);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].popularity, 60.0 / 96);
  EXPECT_DOUBLE_EQ(t[1].popularity, 36.0 / 96);
}

TEST(Policy, BestFitArithmetic) {
  Cluster c({MakeNode("big", 64000, 8), MakeNode("small", 16000, 2)});
  const Pod p = MakePod(8000, 1, 1000);
  auto policy = MakePolicy("bestfit", {p});
  ASSERT_TRUE(policy.ok());
  std::vector<Candidate> cs = {{0, 0, {0}}, {1, 0, {0}}};
  std::mt19937_64 rng(1);
  (*policy)->Score(c, p, cs, rng);
  // big:   (1 - 0.5 * 56000/128000 - 0.5 * 7000/8000) * 100 = 34.375 -> 34
  // small: (1 - 0.5 *  8000/128000 - 0.5 * 1000/8000) * 100 = 90.625 -> 90
  // min-max normalised: big 0, small 100.
  EXPECT_EQ(cs[0].score, 0);
  EXPECT_EQ(cs[1].score, 100);
  EXPECT_FALSE(MakePolicy("magic", {}).ok());
}

TEST(Policy, DotProductArithmetic) {
  Cluster c({MakeNode("big", 64000, 8), MakeNode("small", 16000, 2)});
  const Pod p = MakePod(8000, 1, 1000);
  auto policy = MakePolicy("dotprod", {p});
  ASSERT_TRUE(policy.ok());
  std::vector<Candidate> cs = {{0, 0, {0}}, {1, 0, {0}}};
  std::mt19937_64 rng(1);
  (*policy)->Score(c, p, cs, rng);
  // req = (8000/128000, 1000/8000) = (0.0625, 0.125)
  // big:   free (0.5, 1.0):   dot = 0.03125 + 0.125 = 0.15625 -> (1 - 0.078125) * 100 = 92
  // small: free (0.125, 0.25): dot = 0.0078125 + 0.03125 = 0.0390625 -> 98
  // max-normalised: 92 * 100 / 98 = 93, 100.
  EXPECT_EQ(cs[0].score, 93);
  EXPECT_EQ(cs[1].score, 100);
}

TEST(Policy, GpuPackingBands) {
  Cluster c({MakeNode("idle8", 64000, 8), MakeNode("idle2", 64000, 2), MakeNode("used", 64000, 4)});
  const Pod first = MakePod(1000, 1, 600);
  c.Bind(first, 2, std::vector<int>{1});  // node "used": GPU 1 has 400 left
  auto policy = MakePolicy("gpupacking", {first});
  ASSERT_TRUE(policy.ok());
  std::mt19937_64 rng(1);
  std::vector<Candidate> cs = {{0, 0, {0}}, {1, 0, {0}}, {2, 0, {0}}};
  (*policy)->Score(c, MakePod(1000, 1, 300), cs, rng);
  EXPECT_EQ(cs[0].score, 25);  // idle 8-GPU node: max(33 - 8, 8)
  EXPECT_EQ(cs[1].score, 31);  // idle 2-GPU node: max(33 - 2, 2)
  EXPECT_EQ(cs[2].score, 96);  // share on the used GPU (40% free): 100 - 40 / 10
  EXPECT_EQ(cs[2].gpus, std::vector<int>{1});
  cs = {{2, 0, {0}}};
  (*policy)->Score(c, MakePod(1000, 1, 1000), cs, rng);
  EXPECT_EQ(cs[0].score, 49);  // a whole GPU on a partly used node: 50 - 1
  (*policy)->Score(c, MakePod(1000, 0, 0), cs, rng);
  EXPECT_EQ(cs[0].score, 0);  // CPU-only pods: no preference
}

// A caller may skip building the workload for a policy that does not read it: such a policy,
// made with an empty workload, scores exactly as one made with a real one.
TEST(Policy, OnlyTheWorkloadPoliciesReadTheirWorkload) {
  Cluster c({MakeNode("a", 64000, 8), MakeNode("b", 32000, 4), MakeNode("c", 96000, 2)});
  c.Bind(MakePod(8000, 1, 500), 0, std::vector<int>{0});
  c.Bind(MakePod(4000, 2, 1000), 1, std::vector<int>{0, 1});
  const std::vector<Pod> workload = {MakePod(4000, 1, 250), MakePod(8000, 1, 1000),
                                     MakePod(16000, 4, 1000), MakePod(2000, 0, 0)};
  for (const char* name :
       {"random", "bestfit", "dotprod", "gpupacking", "gpuclustering", "fgd", "seedance"}) {
    if (PolicyUsesWorkload(name)) continue;
    auto with = MakePolicy(name, workload);
    auto without = MakePolicy(name, {});
    ASSERT_TRUE(with.ok() && without.ok()) << name;
    for (const Pod& pod : workload) {
      std::vector<Candidate> a, b;
      for (int n = 0; n < 3; ++n) {
        if (auto g = c.Place(pod, n)) a.push_back({n, 0, *g});
      }
      b = a;
      std::mt19937_64 r1(3), r2(3);
      (*with)->Score(c, pod, a, r1);
      (*without)->Score(c, pod, b, r2);
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].score, b[i].score) << name;
        EXPECT_EQ(a[i].gpus, b[i].gpus) << name;
      }
    }
  }
  EXPECT_TRUE(PolicyUsesWorkload("fgd"));
  EXPECT_TRUE(PolicyUsesWorkload("seedance"));
}

TEST(Policy, SelectHostBreaksTiesByNameOrAtRandom) {
  // Node names out of input order: "n-b" (index 0), "n-c" (1), "n-a" (2).
  Cluster c({MakeNode("n-b", 64000, 2), MakeNode("n-c", 64000, 2), MakeNode("n-a", 64000, 2)});
  EXPECT_EQ(c.tie_rank(0), 1);
  EXPECT_EQ(c.tie_rank(1), 2);
  EXPECT_EQ(c.tie_rank(2), 0);
  std::mt19937_64 rng(7);
  const std::vector<Candidate> cs = {{0, 50, {}}, {1, 70, {}}, {2, 70, {}}};
  // The highest score wins outright whatever the rule; among the two at 70
  // the name rule takes "n-a" (index 2), every time.
  EXPECT_EQ(SelectHost({{0, 10, {}}, {1, 90, {}}, {2, 70, {}}}, c, TieBreak::kNodeName, rng), 1u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(SelectHost(cs, c, TieBreak::kNodeName, rng), 2u);
  // At random: both tied candidates, each about half of 10,000 draws (the
  // binomial sd is 50), the lower score never.
  int picks[3] = {0, 0, 0};
  for (int i = 0; i < 10000; ++i) ++picks[SelectHost(cs, c, TieBreak::kRandom, rng)];
  EXPECT_EQ(picks[0], 0);
  EXPECT_NEAR(picks[1], 5000, 300);
  EXPECT_NEAR(picks[2], 5000, 300);
}

TEST(Policy, ShuffledNodeNamesGiveARandomOrderFixedPerSeed) {
  std::vector<Node> nodes;
  for (int i = 0; i < 50; ++i) nodes.push_back(MakeNode("n-" + std::to_string(100 + i), 64000, 2));
  auto ranks = [&](TieBreak ties, uint64_t seed) {
    Cluster c(nodes);
    PrepareTieOrder(c, ties, seed);
    std::vector<int> r;
    for (int n = 0; n < 50; ++n) r.push_back(c.tie_rank(n));
    return r;
  };
  std::vector<int> identity(50);
  for (int i = 0; i < 50; ++i) identity[static_cast<size_t>(i)] = i;
  // Names sort as the input here, so the plain name order is the identity.
  EXPECT_EQ(ranks(TieBreak::kNodeName, 42), identity);
  EXPECT_EQ(ranks(TieBreak::kRandom, 42), identity);
  const auto a = ranks(TieBreak::kShuffledNodeNames, 42);
  // A permutation of 0..49, the same for the same seed, another for another
  // seed (two equal draws have probability 1/50!).
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(a, identity);
  EXPECT_EQ(ranks(TieBreak::kShuffledNodeNames, 42), a);
  EXPECT_NE(ranks(TieBreak::kShuffledNodeNames, 43), a);
  // SelectHost then takes the tied node of the lowest drawn rank.
  Cluster c(nodes);
  PrepareTieOrder(c, TieBreak::kShuffledNodeNames, 42);
  std::mt19937_64 rng(1);
  std::vector<Candidate> cs;
  for (int n = 0; n < 50; ++n) cs.push_back({n, n % 2 == 0 ? 70 : 10, {}});
  int want = 0;
  for (int n = 2; n < 50; n += 2) {
    if (a[static_cast<size_t>(n)] < a[static_cast<size_t>(want)]) want = n;
  }
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(SelectHost(cs, c, TieBreak::kShuffledNodeNames, rng), static_cast<size_t>(want));
  }
}

TEST(Policy, GpuClusteringBands) {
  // Four 8-GPU nodes: idle; hosting one share; hosting a share and a 1-GPU pod;
  // hosting a 2-GPU pod.
  Cluster c({MakeNode("idle", 64000, 8), MakeNode("shares", 64000, 8), MakeNode("mixed", 64000, 8),
             MakeNode("pairs", 64000, 8)});
  c.Bind(MakePod(1000, 1, 500), 1, std::vector<int>{0});
  c.Bind(MakePod(1000, 1, 500), 2, std::vector<int>{0});
  c.Bind(MakePod(1000, 1, 1000), 2, std::vector<int>{1});
  c.Bind(MakePod(1000, 2, 1000), 3, std::vector<int>{0, 1});
  auto policy = MakePolicy("gpuclustering", {});
  ASSERT_TRUE(policy.ok());
  std::mt19937_64 rng(1);
  std::vector<Candidate> cs = {{0, 0, {0}}, {1, 0, {0}}, {2, 0, {0}}, {3, 0, {0}}};
  (*policy)->Score(c, MakePod(1000, 1, 300), cs, rng);
  // packed = 25 * (8000 - left) / 8000 in integers.
  EXPECT_EQ(cs[0].score, 25 + 0);  // idle: (25, 50], nothing used
  EXPECT_EQ(cs[1].score, 75 + 1);  // only shares here: 75 + 25 * 500 / 8000 = 75 + 1
  EXPECT_EQ(cs[2].score, 50 + 4);  // shares among others: 50 + 25 * 1500 / 8000 = 50 + 4
  EXPECT_EQ(cs[3].score, 0 + 6);   // other tags only: 25 * 2000 / 8000 = 6
  (*policy)->Score(c, MakePod(1000, 2, 1000), cs, rng);
  EXPECT_EQ(cs[3].score, 75 + 6);  // the 2-GPU tag meets its own kind
  (*policy)->Score(c, MakePod(1000, 0, 0), cs, rng);
  EXPECT_EQ(cs[0].score, 0);  // CPU-only pods: no preference
  // Unbinding forgets the tag: the node is idle again.
  c.Unbind(MakePod(1000, 2, 1000), 3, std::vector<int>{0, 1});
  cs = {{3, 0, {0}}};
  (*policy)->Score(c, MakePod(1000, 1, 300), cs, rng);
  EXPECT_EQ(cs[0].score, 25);
}

TEST(Policy, SeedanceReservesScarceTypes) {
  // One T4 node and one G2 node; half the workload's demand can only use T4.
  Cluster c({MakeNode("t4", 64000, 2, "T4"), MakeNode("g2", 64000, 2, "G2")});
  const std::vector<Pod> workload = {MakePod(1000, 1, 1000, {"T4"}), MakePod(1000, 1, 1000)};
  auto seedance = MakePolicy("seedance", workload);
  auto fgd = MakePolicy("fgd", workload);
  ASSERT_TRUE(seedance.ok() && fgd.ok());
  std::mt19937_64 rng(1);
  const Pod anywhere = MakePod(1000, 1, 1000);
  std::vector<Candidate> s = {{0, 0, {0}}, {1, 0, {0}}}, f = s;
  (*seedance)->Score(c, anywhere, s, rng);
  (*fgd)->Score(c, anywhere, f, rng);
  // FGD: on T4, dF = 0 -> floor(100 sigma(0)) = 50; on G2 the T4-only class
  // sees all idle GPU as fragment, so dF = -0.5 x 1000 -> floor(100 sigma(0.5)) = 62.
  EXPECT_EQ(f[0].score, 50);
  EXPECT_EQ(f[1].score, 62);
  // Seedance charges the T4 node: reserve(T4) = 0.5 x 4000 free = 2000 > 1000
  // left after, so +1000 milli of cost -> floor(100 sigma(-1)) = 26. A
  // whole-GPU pod gets no packing key: the step x 8192.
  EXPECT_EQ(s[0].score, 26 * 8192);
  EXPECT_EQ(s[1].score, 62 * 8192);  // no penalty off the scarce type
  // A pod that needs T4 pays nothing.
  std::vector<Candidate> t = {{0, 0, {0}}};
  (*seedance)->Score(c, MakePod(1000, 1, 1000, {"T4"}), t, rng);
  std::vector<Candidate> tf = {{0, 0, {0}}};
  (*fgd)->Score(c, MakePod(1000, 1, 1000, {"T4"}), tf, rng);
  EXPECT_EQ(t[0].score, tf[0].score * 8192);
}

TEST(Policy, SeedancePacksCpuPodsAndSharesAmongFgdTies) {
  // Two 8-GPU nodes, "used" with 2 whole GPUs taken (6000 milli left), "idle".
  Cluster c({MakeNode("used", 96000, 8), MakeNode("idle", 96000, 8)});
  c.Bind(MakePod(1000, 2, 1000), 0, std::vector<int>{0, 1});
  const std::vector<Pod> workload = {MakePod(1000, 0, 0), MakePod(1000, 1, 500)};
  auto seedance = MakePolicy("seedance", workload);
  auto fgd = MakePolicy("fgd", workload);
  ASSERT_TRUE(seedance.ok() && fgd.ok());
  std::mt19937_64 rng(1);
  // FGD cannot tell the nodes apart. The CPU-only class (popularity 0.5)
  // counts all idle GPU as fragment; the 500 class fits before and after.
  // CPU-only pod: dF = 0 -> floor(100 sigma(0)) = 50. A 500 share on a fresh
  // GPU: dF = 0.5 x -500 = -250 -> floor(100 sigma(0.25)) = 56. Both nodes.
  const std::pair<Pod, int64_t> cases[] = {{MakePod(4000, 0, 0), 50}, {MakePod(4000, 1, 500), 56}};
  for (const auto& [pod, step] : cases) {
    std::vector<Candidate> s = {{0, 0, {2}}, {1, 0, {0}}}, f = s;
    (*seedance)->Score(c, pod, s, rng);
    (*fgd)->Score(c, pod, f, rng);
    EXPECT_EQ(f[0].score, step) << pod.num_gpu;
    EXPECT_EQ(f[1].score, step) << pod.num_gpu;
    // Seedance adds 8000 - milli left after: "used" 8000 - (6000 - demand); a
    // CPU-only pod gets that key alone (FGD's step is not consulted).
    const int64_t demand = pod.gpu_demand_milli();
    const int64_t base = pod.num_gpu == 0 ? 0 : step * 8192;
    EXPECT_EQ(s[0].score, base + 8000 - (6000 - demand)) << pod.num_gpu;
    EXPECT_EQ(s[1].score, base + 8000 - (8000 - demand)) << pod.num_gpu;
    EXPECT_EQ(SelectHost(s, c, TieBreak::kNodeName, rng), 0u);
  }
}

TEST(FgdProtocol, InvariantsAndDeterminismOnTheDefaultTrace) {
  const std::string dir = (base::testing::DataDir() / "alibaba-gpu-2023").string();
  SEEDANCE_REQUIRE_DATA(dir);
  auto* env = base::Env::Default();
  auto nodes = ReadAlibabaNodes(*env->ReadFile(dir + "/openb_node_list_gpu_node.csv"), "n");
  auto pods = ReadAlibabaPods(*env->ReadFile(dir + "/openb_pod_list_default.csv"), "p");
  ASSERT_TRUE(nodes.ok() && pods.ok());
  FgdRunOptions o;
  o.policy = "bestfit";
  o.check_invariants = true;  // Cluster::Check after every pod
  auto a = RunFgdProtocol(*nodes, *pods, o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->scheduled + a->failed, a->pods);  // every pod accounted for
  EXPECT_GT(a->pods, 8152);                      // topped up to 130% of capacity
  o.check_invariants = false;
  auto b = RunFgdProtocol(*nodes, *pods, o);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->alloc_pct_at, b->alloc_pct_at);  // deterministic for a seed
  for (size_t i = 1; i < a->alloc_pct_at.size(); ++i) {
    EXPECT_GE(a->alloc_pct_at[i], a->alloc_pct_at[i - 1]);  // no departures: never decreases
  }
  EXPECT_NEAR(a->alloc_pct_at[0], 50.0, 0.5);  // nothing fails at half load
}

}  // namespace
}  // namespace seedance::sched

namespace seedance::sched {
namespace {

// Every policy's scores stay in 0..max_score() (the framework rejects others), also on nodes
// past the formulas' 128 cores and 8 GPUs.
TEST(Policy, ScoresStayInRangeOnLargeNodes) {
  const std::vector<Node> nodes = {MakeNode("big", 256000, 16), MakeNode("std", 128000, 8)};
  Cluster c(nodes);
  std::mt19937_64 rng(1);
  auto score = [&](const char* policy, const Pod& pod) {
    auto p = MakePolicy(policy, {pod});
    EXPECT_TRUE(p.ok());
    std::vector<Candidate> cs;
    for (int n = 0; n < 2; ++n) {
      if (auto g = c.Place(pod, n)) cs.push_back({n, 0, *g});
    }
    (*p)->Score(c, pod, cs, rng);
    for (const Candidate& x : cs) {
      EXPECT_GE(x.score, 0) << policy;
      EXPECT_LE(x.score, (*p)->max_score()) << policy;
    }
    return cs;
  };
  // dotprod, 100 cores and 8 GPUs: on "big" (free 2 x 128 cores, 2 x 8 GPUs) the dot product is
  // 2 x 0.78125 + 2 x 1 = 3.5625, raw (1 - 3.5625 / 2) x 100 = -78; on "std" 0.78125 + 1 =
  // 1.78125, raw 10. Max-normalised: std 100, big -780 raised to 0.
  auto dot = score("dotprod", MakePod(100000, 8, 1000));
  ASSERT_EQ(dot.size(), 2u);
  EXPECT_EQ(dot[0].score, 0);
  EXPECT_EQ(dot[1].score, 100);
  // 16 GPUs fit on "big" only: raw 2 x 0.78125 + 2 x 2 = 5.5625 -> -178, no raw score above 0:
  // min-max normalised, the one candidate scores 100.
  auto alone = score("dotprod", MakePod(100000, 16, 1000));
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].score, 100);
  // gpuclustering, a 1-GPU pod on idle nodes: band 25 + 25 x (8000 - min(8000, left)) / 8000 =
  // 25 on both (the 16-GPU node counts as an empty 8-GPU one, not 25 - 25 = 0).
  auto clus = score("gpuclustering", MakePod(1000, 1, 1000));
  ASSERT_EQ(clus.size(), 2u);
  EXPECT_EQ(clus[0].score, 25);
  EXPECT_EQ(clus[1].score, 25);
  for (const char* policy : {"random", "bestfit", "gpupacking", "fgd", "seedance"}) {
    score(policy, MakePod(1000, 1, 500));
    score(policy, MakePod(100000, 8, 1000));
  }
}

TEST(TieBreak, NamesRoundTripAndErrorsListThem) {
  for (TieBreak t : {TieBreak::kNodeName, TieBreak::kShuffledNodeNames, TieBreak::kRandom}) {
    EXPECT_EQ(*ParseTieBreak(TieBreakName(t), "--ties"), t);
  }
  EXPECT_EQ(TieBreakNames(), "name, shuffled-names or random");
  auto bad = ParseTieBreak("auto", "--ties");  // auto is the experiment's, not a rule
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "--ties");
}

}  // namespace
}  // namespace seedance::sched
