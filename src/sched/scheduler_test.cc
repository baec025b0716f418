// The live Scheduler: its cache of nodes and pods, the assume / bind / forget cycle, gangs, node
// changes, score validation, and the simulators' plugins (spot, over-commit) running in it.
#include "seedance/sched/scheduler.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/sched/overcommit.h"
#include "src/sched/spot_capacity.h"

namespace seedance::sched {
namespace {

Node LiveNode(std::string name, int gpus, bool spot = false) {
  Node n;
  n.name = std::move(name);
  n.cpu_milli = 32000;
  n.memory_mib = 1 << 20;
  n.gpu_count = gpus;
  n.gpu_model = "G";
  n.spot = spot;
  return n;
}

Pod MakePod(std::string name, int gpus, int milli = 1000) {
  Pod p;
  p.name = std::move(name);
  p.cpu_milli = 1000;
  p.num_gpu = gpus;
  p.gpu_milli = milli;
  return p;
}

std::unique_ptr<Policy> Make(const char* name) { return std::move(*MakePolicy(name, {})); }

SchedulerOptions ByName() {
  SchedulerOptions o;
  o.ties = TieBreak::kNodeName;
  return o;
}

TEST(Scheduler, AssumeBindForgetAndRemove) {
  Scheduler s(Make("bestfit"), {LiveNode("a", 4), LiveNode("b", 2)}, ByName());
  // Best fit, 1 CPU and 2 GPUs: node a (32 CPUs, 4 GPUs) scores (1 - 0.5 x 31/128 - 0.5 x
  // 2000/8000) x 100 = 75.4, node b (2 GPUs) (1 - 0.5 x 31/128 - 0) x 100 = 87.9: b wins.
  auto at = s.Schedule(MakePod("p", 2));
  ASSERT_TRUE(at.ok() && at->has_value());
  EXPECT_EQ((*at)->node, 1);
  EXPECT_EQ((*at)->gpus, (std::vector<int>{0, 1}));
  ASSERT_NE(s.Find("p"), nullptr);
  EXPECT_FALSE(s.Find("p")->bound);  // assumed
  EXPECT_EQ(s.cluster().used_gpu_milli(), 2000);
  // A name is known once.
  EXPECT_FALSE(s.Schedule(MakePod("p", 1)).ok());
  EXPECT_TRUE(s.Bind("p").ok());
  EXPECT_TRUE(s.Find("p")->bound);
  EXPECT_FALSE(s.Bind("p").ok());    // bound already
  EXPECT_FALSE(s.Forget("p").ok());  // a bound pod is removed, not forgotten
  auto q = s.Schedule(MakePod("q", 1));
  ASSERT_TRUE(q.ok() && q->has_value());
  EXPECT_TRUE(s.Forget("q").ok());
  EXPECT_EQ(s.Find("q"), nullptr);
  EXPECT_EQ(s.cluster().used_gpu_milli(), 2000);
  EXPECT_TRUE(s.RemovePod("p").ok());
  EXPECT_EQ(s.cluster().used_gpu_milli(), 0);
  EXPECT_FALSE(s.RemovePod("p").ok());
  EXPECT_TRUE(s.Check().ok());
}

TEST(Scheduler, NoRoomIsNotAnError) {
  Scheduler s(Make("bestfit"), {LiveNode("a", 1)}, ByName());
  auto at = s.Schedule(MakePod("big", 2));
  ASSERT_TRUE(at.ok());
  EXPECT_FALSE(at->has_value());
  EXPECT_EQ(s.pod_count(), 0u);
}

TEST(Scheduler, GangIsAllOrNothing) {
  Scheduler s(Make("bestfit"), {LiveNode("a", 2), LiveNode("b", 2)}, ByName());
  const std::vector<Pod> three = {MakePod("g0", 2), MakePod("g1", 2), MakePod("g2", 2)};
  auto none = s.ScheduleGang(three);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(s.pod_count(), 0u);  // the first two were forgotten
  EXPECT_EQ(s.cluster().used_gpu_milli(), 0);
  const std::vector<Pod> two = {MakePod("g0", 2), MakePod("g1", 2)};
  auto both = s.ScheduleGang(two);
  ASSERT_TRUE(both.ok() && both->has_value());
  EXPECT_NE((**both)[0].node, (**both)[1].node);
  EXPECT_TRUE(s.Check().ok());
}

TEST(Scheduler, NodeChanges) {
  Scheduler s(Make("bestfit"), {LiveNode("a", 2)}, ByName());
  ASSERT_TRUE(s.AddPod(MakePod("p", 2), 0, {0, 1}).ok());
  EXPECT_FALSE(s.AddPod(MakePod("q", 1), 0, {0}).ok());  // no room on GPU 0
  EXPECT_FALSE(s.AddNode(LiveNode("a", 8)).ok());        // a known name
  ASSERT_TRUE(s.AddNode(LiveNode("b", 4)).ok());
  EXPECT_EQ(s.NodeIndex("b"), 1);
  EXPECT_EQ(s.cluster().total_gpu_milli(), 6000);
  EXPECT_EQ(s.cluster().used_gpu_milli(), 2000);  // p stays bound through the rebuild
  // Shrinking node a below what p holds is refused, and nothing changes.
  EXPECT_FALSE(s.UpdateNode(LiveNode("a", 1)).ok());
  EXPECT_EQ(s.cluster().total_gpu_milli(), 6000);
  auto q = s.Schedule(MakePod("q", 4));
  ASSERT_TRUE(q.ok() && q->has_value());
  EXPECT_EQ((*q)->node, 1);
  // Removing node a takes p with it; q's node index moves from 1 to 0.
  auto gone = s.RemoveNode("a");
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(*gone, std::vector<std::string>{"p"});
  ASSERT_NE(s.Find("q"), nullptr);
  EXPECT_EQ(s.Find("q")->node, 0);
  EXPECT_EQ(s.cluster().used_gpu_milli(), 4000);
  EXPECT_TRUE(s.Check().ok());
  EXPECT_TRUE(s.RemovePod("q").ok());
  EXPECT_EQ(s.cluster().used_gpu_milli(), 0);
}

// A policy that scores every node 101: the framework rejects it, as kube-scheduler rejects a
// score outside 0..100.
class OutOfRange final : public Policy {
 public:
  std::string_view name() const override { return "out-of-range"; }
  void Score(const Cluster&, const Pod&, std::vector<Candidate>& cs,
             std::mt19937_64&) const override {
    for (auto& c : cs) c.score = 101;
  }
};

TEST(Scheduler, ScoresOutOfRangeAreAnError) {
  Scheduler s(std::make_unique<OutOfRange>(), {LiveNode("a", 1)}, ByName());
  auto at = s.Schedule(MakePod("p", 1));
  ASSERT_FALSE(at.ok());
  EXPECT_NE(at.status().ToString().find("out-of-range scored node a 101, outside 0..100"),
            std::string::npos)
      << at.status().ToString();
  EXPECT_EQ(s.cluster().used_gpu_milli(), 0);
}

// The simulator's spot plugin in the live scheduler: reclaimed nodes are filtered out, and
// while spot-only is on, so are on-demand ones.
TEST(Scheduler, SpotFilterPlugin) {
  const std::vector<Node> nodes = {LiveNode("a-on-demand", 2), LiveNode("b-spot", 2, true)};
  SpotCapacity spot(nodes, SpotOptions{});
  Scheduler s(Make("gpupacking"), nodes, ByName());
  s.framework().AddFilter(MakeSpotFilter(&spot));
  spot.set_spot_only(true);
  auto at = s.Schedule(MakePod("p", 1));
  ASSERT_TRUE(at.ok() && at->has_value());
  EXPECT_EQ((*at)->node, 1);
  spot.set_down(1, true);  // reclaimed: nothing is spot and up
  auto none = s.Schedule(MakePod("q", 1));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  spot.set_spot_only(false);
  auto q = s.Schedule(MakePod("q", 1));
  ASSERT_TRUE(q.ok() && q->has_value());
  EXPECT_EQ((*q)->node, 0);
}

// The over-commit plugins in the live scheduler. One node of two GPUs; GPU 0 holds a Bronze share
// of 600 milli-GPU at 100% (busy 600). A Gold share asking 500 at 100% books ceil(500 / 1.15) =
// 435 milli-GPU. Uncontended, it goes to GPU 1. With GPU 1 taken by another 600-busy share and
// contention allowed: on GPU 0 the busy time would be 600 + 500 = 1,100, a slowdown of 1.1, within
// Gold's 1.15 and Bronze's 2; the filter passes the node and the reserve plugin keeps a GPU within
// every margin.
TEST(Scheduler, OvercommitPlugins) {
  ShareTable shares;
  Scheduler s(Make("bestfit"), {LiveNode("n", 2)}, ByName());
  s.framework().AddFilter(MakeOvercommitFilter(&shares));
  s.framework().AddReserve(MakeOvercommitReserve(&shares));
  const ShareProfile bronze{Tier::kBronze, 100, 600}, gold{Tier::kGold, 100, 500};
  shares.Declare("b0", 0, bronze);
  shares.Declare("g", 1, gold);
  shares.Declare("b1", 2, bronze);
  EXPECT_EQ(ShareTable::Booking(gold), 435);
  EXPECT_EQ(ShareTable::Booking(bronze), 300);  // ceil(600 / 2)
  ASSERT_TRUE(s.AddPod(MakePod("b0", 1, 300), 0, {0}).ok());
  shares.Join(0, {0, 0});
  auto g = s.Schedule(MakePod("g", 1, 435));
  ASSERT_TRUE(g.ok() && g->has_value());
  EXPECT_EQ((*g)->gpus, std::vector<int>{1});  // uncontended
  ASSERT_TRUE(s.RemovePod("g").ok());
  ASSERT_TRUE(s.AddPod(MakePod("b1", 1, 300), 0, {1}).ok());
  shares.Join(2, {0, 1});
  auto none = s.Schedule(MakePod("g", 1, 435));  // both GPUs busy 600: contention needed
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  shares.set_contention_allowed(true);
  auto contended = s.Schedule(MakePod("g", 1, 435));
  ASSERT_TRUE(contended.ok() && contended->has_value());
  const GpuSlot slot{0, (*contended)->gpus[0]};
  shares.Join(1, slot);
  EXPECT_NEAR(shares.GpuBusy(slot), 1100, 1e-9);
  EXPECT_NEAR(shares.Speed(slot), 1 / 1.1, 1e-12);
  EXPECT_TRUE(s.Check().ok());
}

}  // namespace
}  // namespace seedance::sched
