#include "seedance/k8s/extender.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "seedance/base/fake_env.h"
#include "seedance/k8s/extender_protocol.h"
#include "seedance/sched/cluster.h"
#include "seedance/sched/scheduler.h"

namespace seedance::k8s {
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
  std::vector<sched::Node> plain;
  for (int i = 0; i < 12; ++i) {
    nodes.push_back(ExtNode("node-" + std::to_string(i), 1 + i % 8, i % 3 == 0 ? "A100" : "V100"));
    names.push_back(nodes.back().node.name);
    plain.push_back(nodes.back().node);
  }
  for (const std::string policy : {"bestfit", "fgd", "seedance"}) {
    auto e = Make(ExtenderMode::kDecide, &env, policy, nodes);
    sched::SchedulerOptions so;
    so.ties = sched::TieBreak::kNodeName;
    sched::Scheduler reference(sched::MakePolicy(policy, {}).value(), plain, so);
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
      const auto plan = e->PlanBind({p.name, p.ns, p.uid, plain[want->node].name}).value().at(0);
      EXPECT_EQ(plan.gpus, want->gpus);
      e->BindSucceeded(plan);
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
  const auto q_plans = e->PlanBind({"q", "ml", q.uid, "a"});
  ASSERT_TRUE(q_plans.ok());
  e->BindFailed(q_plans->at(0));
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
    const auto plan = first->PlanBind({p.name, p.ns, p.uid, (*r.node_names)[0]}).value().at(0);
    first->BindSucceeded(plan);
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

// Two pods with one UID (the API server never makes them; a buggy or hostile caller can): the
// second is refused at filter and at bind, in both modes, and no sequence of its verbs commits,
// releases or takes over the first pod's reservation. One GPU never holds more than 1000 milli.
TEST(ExtenderTest, ADuplicateUidCannotTouchAnotherPodsReservation) {
  for (const ExtenderMode mode : {ExtenderMode::kCooperative, ExtenderMode::kDecide}) {
    SCOPED_TRACE(mode == ExtenderMode::kDecide ? "decide" : "cooperative");
    base::FakeEnv env;
    auto e = Make(mode, &env, "bestfit", {ExtNode("a", 1)});
    const KubePod first = ExtPod("first", 1, 1000, "shared-uid");
    const KubePod second = ExtPod("second", 1, 1000, "shared-uid");
    ASSERT_TRUE(e->Filter(FilterArgs(first, {"a"})).node_names.has_value());
    // The twin is refused at filter, before and after the first's bind is planned.
    const ExtenderFilterResult twin = e->Filter(FilterArgs(second, {"a"}));
    EXPECT_NE(twin.error.find("already belongs to pod ml/first"), std::string::npos) << twin.error;
    EXPECT_FALSE(twin.node_names.has_value());
    const auto plans = e->PlanBind({"first", "ml", "shared-uid", "a"});
    ASSERT_TRUE(plans.ok()) << plans.status().ToString();
    ASSERT_EQ(plans->size(), 1U);
    // The twin's bind is refused (nothing to post), and a report of its failure, or of its
    // success, touches nothing of the first's.
    const auto twin_bind = e->PlanBind({"second", "ml", "shared-uid", "a"});
    ASSERT_FALSE(twin_bind.ok());
    EXPECT_NE(twin_bind.status().ToString().find("already belongs"), std::string::npos);
    e->BindFailed({"ml", "second", "shared-uid", "a", {0}});
    EXPECT_EQ(e->stats().used_gpu_milli, 1000);
    e->BindSucceeded({"ml", "second", "shared-uid", "a", {0}});
    EXPECT_EQ(e->stats().reservations, 1);  // still the first's, still to commit
    e->BindSucceeded(plans->at(0));
    EXPECT_EQ(e->stats().reservations, 0);
    EXPECT_EQ(e->stats().used_gpu_milli, 1000);
    // A third pod finds the GPU taken.
    const ExtenderFilterResult third = e->Filter(FilterArgs(ExtPod("third", 1, 1000), {"a"}));
    EXPECT_FALSE(third.node_names.has_value());
    EXPECT_FALSE(e->PlanBind({"third", "ml", "uid-third", "a"}).ok());
    EXPECT_EQ(e->stats().used_gpu_milli, 1000);
    EXPECT_TRUE(e->Check().ok());
  }
}

TEST(ExtenderTest, TheWatchCommitsAReservation) {
  base::FakeEnv env;
  auto e = Make(ExtenderMode::kDecide, &env, "bestfit", {ExtNode("a", 1)});
  KubePod p = ExtPod("p", 1, 500);
  ASSERT_TRUE(e->Filter(FilterArgs(p, {"a"})).node_names.has_value());
  const auto plan = e->PlanBind({p.name, p.ns, p.uid, "a"}).value().at(0);
  p.node_name = "a";
  p.gpus = plan.gpus;
  p.pod.phase = "Pending";
  ASSERT_TRUE(e->UpsertPod(p).ok());  // the watch saw the binding before the bind returned
  EXPECT_EQ(e->stats().reservations, 0);
  e->BindSucceeded(plan);  // a no-op now
  env.AdvanceClock(std::chrono::minutes(5));
  EXPECT_EQ(e->ExpireReservations(), 0);
  EXPECT_EQ(e->stats().used_gpu_milli, 500);
}

// The node agent marks GPU 0 unhealthy: a share lands on GPU 1 though best fit prefers the
// fuller GPU 0, and GPU 0 takes pods again once it is healthy.
TEST(ExtenderTest, NothingNewLandsOnAnUnhealthyGpu) {
  base::FakeEnv env;
  KubeNode node = ExtNode("a", 2);
  auto e = Make(ExtenderMode::kDecide, &env, "bestfit", {node});
  KubePod old = ExtPod("old", 1, 300);
  old.node_name = "a";
  old.gpus = {0};
  old.pod.phase = "Running";
  ASSERT_TRUE(e->UpsertPod(old).ok());
  node.unhealthy_gpus = {0};
  ASSERT_TRUE(e->UpsertNode(node).ok());
  EXPECT_EQ(e->stats().used_gpu_milli, 1000);  // 300 running + 700 held
  KubePod p = ExtPod("p", 1, 500);
  ASSERT_TRUE(e->Filter(FilterArgs(p, {"a"})).node_names.has_value());
  EXPECT_EQ(e->PlanBind({p.name, p.ns, p.uid, "a"}).value().at(0).gpus, std::vector<int>{1});
  KubePod q0 = ExtPod("q0", 1, 700);  // 700 fits nowhere while GPU 0 is held
  EXPECT_TRUE(
      e->Filter(FilterArgs(q0, {"a"})).node_names.value_or(std::vector<std::string>{}).empty());
  node.unhealthy_gpus.clear();
  ASSERT_TRUE(e->UpsertNode(node).ok());
  KubePod q = ExtPod("q", 1, 700);  // fits only beside the 300 on GPU 0 (GPU 1 has 500 left)
  ASSERT_TRUE(e->Filter(FilterArgs(q, {"a"})).node_names.has_value());
  EXPECT_EQ(e->PlanBind({q.name, q.ns, q.uid, "a"}).value().at(0).gpus, std::vector<int>{0});
  EXPECT_TRUE(e->Check().ok());
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
  const auto plan = e->PlanBind({"big", "ml", big.uid, "b"}).value().at(0);
  EXPECT_EQ(plan.gpus.size(), 2U);
  e->BindSucceeded(plan);
  EXPECT_EQ(e->stats().used_gpu_milli, 2000);
  EXPECT_TRUE(e->Check().ok());
}

// A filter naming a great many unknown nodes gets a reason for a few of them, not one per name:
// the answer stays small whatever the request holds.
TEST(ExtenderTest, UnknownNodesGetABoundedListOfReasons) {
  for (const ExtenderMode mode : {ExtenderMode::kCooperative, ExtenderMode::kDecide}) {
    base::FakeEnv env;
    auto e = Make(mode, &env, "bestfit", {ExtNode("a", 1)});
    std::vector<std::string> names = {"a"};
    for (int i = 0; i < 100000; ++i) names.push_back("ghost-" + std::to_string(i));
    const auto r = e->Filter(FilterArgs(ExtPod("p", 1, 500), names));
    ASSERT_TRUE(r.node_names.has_value());
    EXPECT_EQ(*r.node_names, std::vector<std::string>{"a"});
    EXPECT_EQ(r.failed.size(), 32U);
    EXPECT_LT(EncodeFilterResult(r).size(), 8192U);
  }
}

// A pod already bound at the given GPUs, as the watch delivers it.
KubePod BoundPod(const std::string& name, const std::string& node, std::vector<int> gpus, int milli,
                 sched::Qos qos, int priority) {
  KubePod p = ExtPod(name, static_cast<int>(gpus.size()), milli);
  p.node_name = node;
  p.gpus = std::move(gpus);
  p.pod.qos = qos;
  p.pod.priority = priority;
  p.pod.phase = "Running";
  return p;
}

ExtenderPreemptionArgs PreemptArgs(const KubePod& p, const std::vector<std::string>& nodes) {
  ExtenderPreemptionArgs a;
  a.pod = p;
  for (const auto& n : nodes) a.victims[n].num_pdb_violations = 0;
  return a;
}

// The preempt verb on a hand-made node: the lowest tier goes first, a share only as large as
// needed, higher priorities never.
KubePod GangPod(const std::string& name, int num_gpu, int size) {
  KubePod p = ExtPod(name, num_gpu, 1000);
  p.gang = "ml/g";
  p.pod.gang = size;
  return p;
}

// No GPU used twice, and every pod's GPUs on its node: the plans a gang's bind posts.
void ExpectDistinctGpus(const std::vector<BindPlan>& plans) {
  std::set<std::pair<std::string, int>> used;
  for (const auto& p : plans) {
    for (int g : p.gpus) EXPECT_TRUE(used.insert({p.node, g}).second) << p.node << " " << g;
  }
}

TEST(ExtenderTest, AGangWaitsForEveryMemberThenIsPlacedAndBoundTogether) {
  for (const auto mode : {ExtenderMode::kDecide, ExtenderMode::kCooperative}) {
    base::FakeEnv env;
    auto e = Make(mode, &env, "bestfit", {ExtNode("a", 4), ExtNode("b", 4)});
    const std::vector<KubePod> m = {GangPod("m0", 2, 3), GangPod("m1", 2, 3), GangPod("m2", 2, 3)};
    auto r = e->Filter(FilterArgs(m[0], {"a", "b"}));
    EXPECT_FALSE(r.node_names.has_value());
    EXPECT_NE(r.failed.at("a").find("gang ml/g: 1 of 3 members seen"), std::string::npos);
    ASSERT_TRUE(e->UpsertPod(m[1]).ok());  // the watch shows another member pending
    r = e->Filter(FilterArgs(m[0], {"a", "b"}));
    EXPECT_NE(r.failed.at("b").find("2 of 3"), std::string::npos);
    EXPECT_EQ(e->stats().gangs_waiting, 1);
    EXPECT_EQ(e->stats().reservations, 0);
    r = e->Filter(FilterArgs(m[2], {"a", "b"}));  // the last one: the whole gang is placed
    ASSERT_TRUE(r.node_names.has_value()) << ExtenderModeName(mode);
    ASSERT_EQ(r.node_names->size(), 1U);
    EXPECT_EQ(e->stats().reservations, 3);
    EXPECT_EQ(e->stats().used_gpu_milli, 6000);
    EXPECT_EQ(e->stats().gangs_waiting, 0);
    // m0 comes back: its reservation; its bind posts every member's Binding, its own first.
    r = e->Filter(FilterArgs(m[0], {"a", "b"}));
    ASSERT_TRUE(r.node_names.has_value());
    const std::string at = (*r.node_names)[0];
    const auto plans = e->PlanBind({"m0", "ml", m[0].uid, at}).value();
    ASSERT_EQ(plans.size(), 3U);
    // kube-scheduler's bind of another member while those Bindings are posted: nothing to post.
    EXPECT_TRUE(e->PlanBind({"m2", "ml", m[2].uid, plans[2].node}).value().empty());
    EXPECT_EQ(plans[0].uid, m[0].uid);
    EXPECT_EQ(plans[0].node, at);
    ExpectDistinctGpus(plans);
    for (const auto& p : plans) e->BindSucceeded(p);
    EXPECT_EQ(e->stats().reservations, 0);
    EXPECT_EQ(e->stats().used_gpu_milli, 6000);
    // kube-scheduler's own bind of a member bound that way posts nothing.
    EXPECT_TRUE(e->PlanBind({"m1", "ml", m[1].uid, plans[1].node}).value().empty());
    EXPECT_TRUE(e->Check().ok());
  }
}

TEST(ExtenderTest, AGangThatDoesNotFitReservesNothing) {
  base::FakeEnv env;
  auto e = Make(ExtenderMode::kDecide, &env, "bestfit", {ExtNode("a", 4), ExtNode("b", 4)});
  for (const char* n : {"m0", "m1"}) ASSERT_TRUE(e->UpsertPod(GangPod(n, 4, 3)).ok());
  const auto r = e->Filter(FilterArgs(GangPod("m2", 4, 3), {"a", "b"}));
  EXPECT_FALSE(r.node_names.has_value());
  EXPECT_NE(r.failed.at("a").find("do not all fit"), std::string::npos);
  EXPECT_EQ(e->stats().reservations, 0);
  EXPECT_EQ(e->stats().used_gpu_milli, 0);
  // The same two members alone would fit: a gang of 2 is placed.
  for (const char* n : {"n0", "n1"}) ASSERT_TRUE(e->UpsertPod(GangPod(n, 4, 2)).ok());
  KubePod n1 = GangPod("n1", 4, 2);
  n1.gang = "ml/h";
  KubePod n0 = GangPod("n0", 4, 2);
  n0.gang = "ml/h";
  ASSERT_TRUE(e->UpsertPod(n0).ok());
  EXPECT_TRUE(e->Filter(FilterArgs(n1, {"a", "b"})).node_names.has_value());
  EXPECT_EQ(e->stats().used_gpu_milli, 8000);
}

TEST(ExtenderTest, AGangIsReleasedWholeByTheTtlADeletionOrARefusedBinding) {
  base::FakeEnv env;
  auto e = Make(ExtenderMode::kDecide, &env, "bestfit", {ExtNode("a", 2), ExtNode("b", 2)});
  const KubePod m0 = GangPod("m0", 1, 2), m1 = GangPod("m1", 1, 2);
  auto place = [&] {
    ASSERT_TRUE(e->UpsertPod(m0).ok());
    ASSERT_TRUE(e->Filter(FilterArgs(m1, {"a", "b"})).node_names.has_value());
    ASSERT_EQ(e->stats().reservations, 2);
  };
  place();
  env.AdvanceClock(std::chrono::seconds(31));  // the TTL (30 s) passes unbound
  EXPECT_EQ(e->ExpireReservations(), 2);
  EXPECT_EQ(e->stats().used_gpu_milli, 0);
  place();
  e->DeletePod(m0);  // a member gone: the gang cannot complete as placed
  EXPECT_EQ(e->stats().reservations, 0);
  EXPECT_NE(e->Filter(FilterArgs(m1, {"a", "b"})).failed.at("a").find("1 of 2"), std::string::npos);
  place();
  const auto r = e->Filter(FilterArgs(m1, {"a", "b"}));
  const auto plans = e->PlanBind({"m1", "ml", m1.uid, (*r.node_names)[0]}).value();
  ASSERT_EQ(plans.size(), 2U);
  e->BindFailed(plans[0]);  // the API server refused one: none is bound
  EXPECT_EQ(e->stats().reservations, 0);
  EXPECT_EQ(e->stats().used_gpu_milli, 0);
  EXPECT_TRUE(e->Check().ok());
}

TEST(ExtenderTest, PreemptTakesTheLowestTierFirstAndOnlyWhatIsNeeded) {
  base::FakeEnv env;
  auto e = Make(ExtenderMode::kDecide, &env, "bestfit", {ExtNode("a", 1), ExtNode("b", 1)});
  ASSERT_TRUE(e->UpsertPod(BoundPod("gold", "a", {0}, 200, sched::Qos::kLatencySensitive, 0)).ok());
  ASSERT_TRUE(e->UpsertPod(BoundPod("silver", "a", {0}, 300, sched::Qos::kBurstable, 0)).ok());
  ASSERT_TRUE(e->UpsertPod(BoundPod("bronze", "a", {0}, 500, sched::Qos::kBestEffort, 0)).ok());
  ASSERT_TRUE(e->UpsertPod(BoundPod("vip", "b", {0}, 800, sched::Qos::kBestEffort, 5000)).ok());
  KubePod want = ExtPod("want", 1, 500);
  want.pod.priority = 1000;
  auto v = e->Preempt(PreemptArgs(want, {"a", "b"}));
  // b's only pod outranks the preemptor: b is left out. On a, the bronze share suffices.
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v["a"].pod_uids, std::vector<std::string>{"uid-bronze"});
  // 700 milli needs the silver share too (bronze then silver, by tier); gold is spared.
  KubePod more = ExtPod("more", 1, 700);
  more.pod.priority = 1000;
  v = e->Preempt(PreemptArgs(more, {"a"}));
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v["a"].pod_uids, (std::vector<std::string>{"uid-silver", "uid-bronze"}));
  // Equal priority never preempts.
  KubePod peer = ExtPod("peer", 1, 500);
  EXPECT_TRUE(e->Preempt(PreemptArgs(peer, {"a"})).empty());
  // A pod that already fits needs no victim (kube-scheduler's dry run can propose such a node
  // when its own fit check, summed over the node, passes): the node with no victims.
  KubePod small = ExtPod("small", 1, 200);
  small.pod.priority = 1000;
  v = e->Preempt(PreemptArgs(small, {"b"}));
  ASSERT_EQ(v.size(), 1U);
  EXPECT_TRUE(v["b"].pod_uids.empty());
}

// Against brute force on random small nodes: a node is answered exactly when some set of
// lower-priority pods makes room; the answer's victims all have lower priority, make room, and
// each is needed (putting any one back leaves no room).
TEST(ExtenderTest, PreemptVictimsAgreeWithBruteForce) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    base::FakeEnv env;
    const int gpus = 1 + static_cast<int>(rng() % 3);
    auto e = Make(ExtenderMode::kDecide, &env, "bestfit", {ExtNode("n", gpus)});
    sched::Cluster reference({ExtNode("n", gpus).node});
    std::vector<KubePod> pods;
    for (int i = 0; i < 6; ++i) {
      const int g = static_cast<int>(rng() % gpus);
      const int milli = 100 * (1 + static_cast<int>(rng() % 6));
      KubePod p = BoundPod("p" + std::to_string(i), "n", {g}, milli,
                           static_cast<sched::Qos>(rng() % 4), static_cast<int>(rng() % 3) * 100);
      if (!reference.Fits(p.pod, 0) || reference.state(0).gpu_left[g] < milli) continue;
      reference.Bind(p.pod, 0, p.gpus);
      ASSERT_TRUE(e->UpsertPod(p).ok());
      pods.push_back(p);
    }
    KubePod want = ExtPod("want", 1 + static_cast<int>(rng() % gpus),
                          100 * (1 + static_cast<int>(rng() % 10)));
    if (want.pod.num_gpu > 1) want.pod.gpu_milli = 1000;
    want.pod.priority = 150;
    // Brute force: does any subset of the lower-priority pods make room?
    std::vector<int> lower;
    for (int i = 0; i < static_cast<int>(pods.size()); ++i) {
      if (pods[i].pod.priority < want.pod.priority) lower.push_back(i);
    }
    auto fits_without = [&](const std::vector<int>& gone) {
      sched::Cluster c = reference;
      for (int i : gone) c.Unbind(pods[i].pod, 0, pods[i].gpus);
      return c.Fits(want.pod, 0);
    };
    bool possible = false;
    for (uint32_t mask = 0; mask < (1U << lower.size()) && !possible; ++mask) {
      std::vector<int> gone;
      for (size_t b = 0; b < lower.size(); ++b) {
        if (mask & (1U << b)) gone.push_back(lower[b]);
      }
      possible = fits_without(gone);
    }
    const auto v = e->Preempt(PreemptArgs(want, {"n"}));
    ASSERT_EQ(v.count("n") == 1, possible) << "trial " << trial;
    if (!possible) continue;
    std::vector<int> gone;
    for (const auto& uid : v.at("n").pod_uids) {
      int at = -1;
      for (int i = 0; i < static_cast<int>(pods.size()); ++i) {
        if (pods[i].uid == uid) at = i;
      }
      ASSERT_GE(at, 0) << uid;
      EXPECT_LT(pods[at].pod.priority, want.pod.priority);
      gone.push_back(at);
    }
    EXPECT_TRUE(fits_without(gone)) << "trial " << trial;
    for (size_t k = 0; k < gone.size(); ++k) {
      std::vector<int> spared = gone;
      spared.erase(spared.begin() + static_cast<int64_t>(k));
      EXPECT_FALSE(fits_without(spared)) << "trial " << trial << ": a victim was not needed";
    }
  }
}

}  // namespace
}  // namespace seedance::k8s
