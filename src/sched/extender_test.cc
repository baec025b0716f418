#include "seedance/sched/extender.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "seedance/base/fake_env.h"
#include "seedance/sched/scheduler.h"

namespace seedance::sched {
namespace {

KubeNode ExtNode(const std::string& name, int gpus, const std::string& model = "V100") {
  KubeNode n;
  n.node.name = name;
  n.node.cpu_milli = 64000;
  n.node.memory_mib = int64_t{256} * 1024;
  n.node.gpu_count = gpus;
  n.node.gpu_model = model;
  return n;
}

KubePod ExtPod(const std::string& name, int num_gpu, int milli, const std::string& uid = "") {
  KubePod p;
  p.ns = "ml";
  p.name = name;
  p.uid = uid.empty() ? "uid-" + name : uid;
  p.pod.name = "ml/" + name;
  p.pod.cpu_milli = 1000;
  p.pod.memory_mib = 1024;
  p.pod.num_gpu = num_gpu;
  p.pod.gpu_milli = milli;
  return p;
}

ExtenderArgs FilterArgs(const KubePod& p, std::vector<std::string> names) {
  ExtenderArgs a;
  a.pod = p;
  a.node_names = std::move(names);
  return a;
}

std::unique_ptr<Extender> Make(ExtenderMode mode, base::Env* env, const std::string& policy,
                               const std::vector<KubeNode>& nodes) {
  ExtenderOptions o;
  o.mode = mode;
  o.env = env;
  o.policy = policy;
  auto e = Extender::Create(o).value();
  for (const auto& n : nodes) EXPECT_TRUE(e->UpsertNode(n).ok());
  return e;
}

// Decide mode chooses what the live Scheduler alone chooses for the same pods in the same order
// (the simulator's decision), when kube-scheduler passes every node as a candidate.
TEST(ExtenderTest, DecideModeMatchesTheSchedulerAlone) {
  base::FakeEnv env;
  std::vector<KubeNode> nodes;
  std::vector<std::string> names;
  std::vector<Node> plain;
  for (int i = 0; i < 12; ++i) {
    nodes.push_back(ExtNode("node-" + std::to_string(i), 1 + i % 8, i % 3 == 0 ? "A100" : "V100"));
    names.push_back(nodes.back().node.name);
    plain.push_back(nodes.back().node);
  }
  for (const std::string policy : {"bestfit", "fgd", "seedance"}) {
    auto e = Make(ExtenderMode::kDecide, &env, policy, nodes);
    SchedulerOptions so;
    so.ties = TieBreak::kNodeName;
    Scheduler reference(MakePolicy(policy, {}).value(), plain, so);
    std::mt19937 rng(7);
    for (int i = 0; i < 60; ++i) {
      const int shape = static_cast<int>(rng() % 4);
      KubePod p = ExtPod("p" + std::to_string(i), shape == 3 ? 2 : 1,
                         shape == 0   ? 250
                         : shape == 1 ? 500
                                      : 1000);
      const auto want = reference.Schedule(p.pod).value();
      const ExtenderFilterResult r = e->Filter(FilterArgs(p, names));
      ASSERT_TRUE(r.error.empty()) << r.error;
      if (!want) {
        EXPECT_FALSE(r.node_names.has_value()) << policy << " pod " << i;
        continue;
      }
      ASSERT_TRUE(r.node_names.has_value()) << policy << " pod " << i;
      ASSERT_EQ(*r.node_names, std::vector<std::string>{plain[want->node].name}) << policy;
      ASSERT_TRUE(reference.Bind(p.pod.name).ok());
      const auto plan = e->PlanBind({p.name, p.ns, p.uid, plain[want->node].name}).value();
      EXPECT_EQ(plan.gpus, want->gpus);
      e->BindSucceeded(p.uid);
    }
    EXPECT_TRUE(e->Check().ok());
    EXPECT_EQ(e->stats().used_gpu_milli, reference.cluster().used_gpu_milli());
    EXPECT_EQ(e->stats().reservations, 0);
  }
}

TEST(ExtenderTest, FilteringTheSamePodAgainReservesNothingMore) {
  base::FakeEnv env;
  auto e = Make(ExtenderMode::kDecide, &env, "bestfit", {ExtNode("a", 1), ExtNode("b", 1)});
  const KubePod p = ExtPod("p", 1, 600);
  const auto first = e->Filter(FilterArgs(p, {"a", "b"}));
  const auto again = e->Filter(FilterArgs(p, {"a", "b"}));
  ASSERT_TRUE(first.node_names && again.node_names);
  EXPECT_EQ(*first.node_names, *again.node_names);
  EXPECT_EQ(e->stats().reservations, 1);
  EXPECT_EQ(e->stats().used_gpu_milli, 600);
  // The other node is left out of the answer, neither chosen nor failed.
  EXPECT_EQ(first.node_names->size(), 1u);
  EXPECT_TRUE(first.failed.empty() && first.failed_unresolvable.empty());
}

// The case: 64 concurrent filters for half-GPU pods on a node with one free GPU.
TEST(ExtenderTest, ConcurrentFiltersTakeExactlyTheFreeShares) {
  base::FakeEnv env;
  auto e = Make(ExtenderMode::kDecide, &env, "seedance", {ExtNode("only", 2)});
  KubePod busy = ExtPod("busy", 1, 1000);
  busy.node_name = "only";
  busy.gpus = {0};
  busy.pod.phase = "Running";
  ASSERT_TRUE(e->UpsertPod(busy).ok());
  std::atomic<int> fits{0};
  std::vector<std::thread> threads;
  threads.reserve(64);
  for (int i = 0; i < 64; ++i) {
    threads.emplace_back([&, i] {
      const auto r = e->Filter(FilterArgs(ExtPod("half-" + std::to_string(i), 1, 500), {"only"}));
      if (r.node_names && !r.node_names->empty()) ++fits;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fits.load(), 2);
  EXPECT_EQ(e->stats().reservations, 2);
  EXPECT_EQ(e->stats().used_gpu_milli, 2000);
  EXPECT_TRUE(e->Check().ok());
}

TEST(ExtenderTest, ReservationsExpireAndFailedBindsRelease) {
  base::FakeEnv env;
  auto e = Make(ExtenderMode::kDecide, &env, "bestfit", {ExtNode("a", 1)});
  const KubePod p = ExtPod("p", 1, 1000);
  ASSERT_TRUE(e->Filter(FilterArgs(p, {"a"})).node_names.has_value());
  env.AdvanceClock(std::chrono::seconds(29));
  EXPECT_EQ(e->ExpireReservations(), 0);
  env.AdvanceClock(std::chrono::seconds(2));
  EXPECT_EQ(e->ExpireReservations(), 1);
  EXPECT_EQ(e->stats().used_gpu_milli, 0);
  EXPECT_FALSE(e->PlanBind({"p", "ml", p.uid, "a"}).ok());  // nothing to bind any more
  // A bind the API server refused releases the GPU at once.
  const KubePod q = ExtPod("q", 1, 1000);
  ASSERT_TRUE(e->Filter(FilterArgs(q, {"a"})).node_names.has_value());
  ASSERT_TRUE(e->PlanBind({"q", "ml", q.uid, "a"}).ok());
  e->BindFailed(q.uid);
  EXPECT_EQ(e->stats().used_gpu_milli, 0);
  EXPECT_EQ(e->stats().bind_failures, 1);
  EXPECT_TRUE(e->Check().ok());
}

// After a restart the state comes back from the pods' annotations: the same GPUs are in use.
TEST(ExtenderTest, RebuildsFromBoundPodsAfterARestart) {
  base::FakeEnv env;
  const std::vector<KubeNode> nodes = {ExtNode("a", 4), ExtNode("b", 2)};
  auto first = Make(ExtenderMode::kDecide, &env, "seedance", nodes);
  std::vector<KubePod> bound;
  for (int i = 0; i < 9; ++i) {
    KubePod p = ExtPod("p" + std::to_string(i), i % 3 == 2 ? 2 : 1, i % 3 == 0 ? 300 : 1000);
    const auto r = first->Filter(FilterArgs(p, {"a", "b"}));
    if (!r.node_names) continue;
    const auto plan = first->PlanBind({p.name, p.ns, p.uid, (*r.node_names)[0]}).value();
    first->BindSucceeded(p.uid);
    p.node_name = plan.node;
    p.gpus = plan.gpus;
    p.pod.phase = "Running";
    bound.push_back(p);
  }
  auto second = Make(ExtenderMode::kDecide, &env, "seedance", nodes);
  for (const auto& p : bound) ASSERT_TRUE(second->UpsertPod(p).ok()) << p.name;
  EXPECT_EQ(second->stats().used_gpu_milli, first->stats().used_gpu_milli);
  EXPECT_EQ(second->stats().pods, first->stats().pods);
  EXPECT_TRUE(second->Check().ok());
  // A finished pod frees its GPUs.
  KubePod done = bound.front();
  done.pod.phase = "Succeeded";
  ASSERT_TRUE(second->UpsertPod(done).ok());
  EXPECT_EQ(second->stats().pods, first->stats().pods - 1);
}

// Found by the end-to-end test: the watch delivered a pod's pending state after filter had
// reserved it; releasing the reservation then let the next pod take the same GPU.
TEST(ExtenderTest, APendingPodEventKeepsItsReservation) {
  base::FakeEnv env;
  auto e = Make(ExtenderMode::kDecide, &env, "bestfit", {ExtNode("a", 1)});
  const KubePod p = ExtPod("p", 1, 1000);
  ASSERT_TRUE(e->Filter(FilterArgs(p, {"a"})).node_names.has_value());
  KubePod pending = p;
  pending.pod.phase = "Pending";
  ASSERT_TRUE(e->UpsertPod(pending).ok());
  EXPECT_EQ(e->stats().reservations, 1);
  EXPECT_FALSE(e->Filter(FilterArgs(ExtPod("q", 1, 1000), {"a"})).node_names.has_value());
  KubePod gone = pending;
  gone.terminating = true;
  ASSERT_TRUE(e->UpsertPod(gone).ok());
  EXPECT_EQ(e->stats().reservations, 0);
  EXPECT_EQ(e->stats().used_gpu_milli, 0);
}

TEST(ExtenderTest, TheWatchCommitsAReservation) {
  base::FakeEnv env;
  auto e = Make(ExtenderMode::kDecide, &env, "bestfit", {ExtNode("a", 1)});
  KubePod p = ExtPod("p", 1, 500);
  ASSERT_TRUE(e->Filter(FilterArgs(p, {"a"})).node_names.has_value());
  const auto plan = e->PlanBind({p.name, p.ns, p.uid, "a"}).value();
  p.node_name = "a";
  p.gpus = plan.gpus;
  p.pod.phase = "Pending";
  ASSERT_TRUE(e->UpsertPod(p).ok());  // the watch saw the binding before the bind returned
  EXPECT_EQ(e->stats().reservations, 0);
  e->BindSucceeded(p.uid);  // a no-op now
  env.AdvanceClock(std::chrono::minutes(5));
  EXPECT_EQ(e->ExpireReservations(), 0);
  EXPECT_EQ(e->stats().used_gpu_milli, 500);
}

TEST(ExtenderTest, CooperativeModeListsFitsWithReasonsAndChoosesGpusAtBind) {
  base::FakeEnv env;
  KubeNode cordoned = ExtNode("c", 8);
  cordoned.unschedulable = true;
  auto e = Make(ExtenderMode::kCooperative, &env, "bestfit",
                {ExtNode("a", 1), ExtNode("b", 4), ExtNode("t4", 2, "T4"), cordoned});
  KubePod big = ExtPod("big", 2, 1000);
  big.pod.gpu_models = {"V100"};
  const auto r = e->Filter(FilterArgs(big, {"a", "b", "t4", "c", "ghost"}));
  ASSERT_TRUE(r.node_names.has_value());
  EXPECT_EQ(*r.node_names, std::vector<std::string>{"b"});
  EXPECT_NE(r.failed_unresolvable.at("a").find("1 GPUs on the node"), std::string::npos);
  EXPECT_NE(r.failed_unresolvable.at("t4").find("GPU model T4"), std::string::npos);
  EXPECT_NE(r.failed_unresolvable.at("c").find("cordoned"), std::string::npos);
  EXPECT_NE(r.failed.at("ghost").find("node cache"), std::string::npos);
  EXPECT_EQ(e->stats().reservations, 0);  // nothing reserved until bind
  const auto scores = e->Prioritize(FilterArgs(big, {"a", "b"}));
  ASSERT_EQ(scores.size(), 2U);
  EXPECT_EQ(scores[0].score, 0);
  EXPECT_GE(scores[1].score, 0);
  EXPECT_LE(scores[1].score, 10);
  const auto plan = e->PlanBind({"big", "ml", big.uid, "b"}).value();
  EXPECT_EQ(plan.gpus.size(), 2U);
  e->BindSucceeded(big.uid);
  EXPECT_EQ(e->stats().used_gpu_milli, 2000);
  EXPECT_TRUE(e->Check().ok());
}

}  // namespace
}  // namespace seedance::sched
