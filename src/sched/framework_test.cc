// The framework's extension points with recording fakes: which run, in what
// order, and what is undone when a later one fails.
#include "seedance/sched/framework.h"

#include <gtest/gtest.h>

#include <string>

namespace seedance::sched {
namespace {

Node N(std::string name) {
  Node n;
  n.name = std::move(name);
  n.cpu_milli = 8000;
  n.memory_mib = 1 << 20;
  n.gpu_count = 1;
  n.gpu_model = "G";
  return n;
}

Pod OneGpu() {
  Pod p;
  p.name = "p";
  p.cpu_milli = 1000;
  p.num_gpu = 1;
  p.gpu_milli = 1000;
  return p;
}

using Log = std::vector<std::string>;

class NotNode final : public FilterPlugin {
 public:
  NotNode(int node, Log* log) : node_(node), log_(log) {}
  std::string_view name() const override { return "not-node"; }
  bool Filter(const Cluster&, const Pod&, int node) const override {
    log_->push_back("filter " + std::to_string(node));
    return node != node_;
  }

 private:
  int node_;
  Log* log_;
};

class Recorder final : public ReservePlugin {
 public:
  Recorder(std::string tag, bool fail, Log* log) : tag_(std::move(tag)), fail_(fail), log_(log) {}
  std::string_view name() const override { return tag_; }
  base::Status Reserve(Cluster& c, const Pod&, Candidate& at) override {
    log_->push_back("reserve " + tag_ + " node " + std::to_string(at.node) + " used " +
                    std::to_string(c.used_gpu_milli()));
    return fail_ ? base::UnavailableError("no") : base::OkStatus();
  }
  void Unreserve(Cluster&, const Pod&, const Candidate&) override {
    log_->push_back("unreserve " + tag_);
  }

 private:
  std::string tag_;
  bool fail_;
  Log* log_;
};

class FailingBind final : public BindPlugin {
 public:
  explicit FailingBind(Log* log) : log_(log) {}
  std::string_view name() const override { return "bind"; }
  base::Status Bind(const Pod&, const Candidate&) override {
    log_->push_back("bind");
    return base::UnavailableError("API server down");
  }

 private:
  Log* log_;
};

std::unique_ptr<Policy> BestFit() { return std::move(*MakePolicy("bestfit", {OneGpu()})); }

TEST(Framework, FilterScoreReserveInOrder) {
  Log log;
  Cluster c({N("a"), N("b")});
  Framework f(BestFit());
  f.AddFilter(std::make_unique<NotNode>(0, &log));
  f.AddReserve(std::make_unique<Recorder>("r1", false, &log));
  std::mt19937_64 rng(1);
  auto at = f.Schedule(c, OneGpu(), rng).value();
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->node, 1);  // node 0 filtered out
  // The cluster's reservation comes first: the plugin sees the GPU in use.
  EXPECT_EQ(log, (Log{"filter 0", "filter 1", "reserve r1 node 1 used 1000"}));
  log.clear();
  f.Unschedule(c, OneGpu(), *at);
  EXPECT_EQ(log, Log{"unreserve r1"});
  EXPECT_EQ(c.used_gpu_milli(), 0);
}

TEST(Framework, AFailedReserveUndoesTheEarlierOnes) {
  Log log;
  Cluster c({N("a")});
  Framework f(BestFit());
  f.AddReserve(std::make_unique<Recorder>("r1", false, &log));
  f.AddReserve(std::make_unique<Recorder>("r2", true, &log));
  f.AddReserve(std::make_unique<Recorder>("r3", false, &log));
  std::mt19937_64 rng(1);
  EXPECT_FALSE(f.Schedule(c, OneGpu(), rng).value().has_value());
  EXPECT_EQ(log,
            (Log{"reserve r1 node 0 used 1000", "reserve r2 node 0 used 1000", "unreserve r1"}));
  EXPECT_EQ(c.used_gpu_milli(), 0);
  EXPECT_TRUE(c.Check().ok());
}

TEST(Framework, AFailedBindUndoesTheReservations) {
  Log log;
  Cluster c({N("a")});
  Framework f(BestFit());
  f.AddReserve(std::make_unique<Recorder>("r1", false, &log));
  f.SetBind(std::make_unique<FailingBind>(&log));
  std::mt19937_64 rng(1);
  auto at = f.Schedule(c, OneGpu(), rng).value();
  ASSERT_TRUE(at.has_value());
  EXPECT_FALSE(f.Bind(c, OneGpu(), *at).ok());
  EXPECT_EQ(log, (Log{"reserve r1 node 0 used 1000", "bind", "unreserve r1"}));
  EXPECT_EQ(c.used_gpu_milli(), 0);
}

// Preempts whatever runs on node 0 (a known pod), once.
class EvictNodeZero final : public PostFilterPlugin {
 public:
  explicit EvictNodeZero(Log* log) : log_(log) {}
  std::string_view name() const override { return "evict"; }
  bool PostFilter(Cluster& c, const Pod& pod) override {
    log_->push_back("post-filter");
    if (c.used_gpu_milli() == 0) return false;
    c.Unbind(pod, 0, std::vector<int>{0});
    return true;
  }

 private:
  Log* log_;
};

TEST(Framework, PostFilterMakesRoomAndTheCycleRetries) {
  Log log;
  Cluster c({N("a")});
  c.Bind(OneGpu(), 0, std::vector<int>{0});  // the node is full
  Framework f(BestFit());
  f.SetPostFilter(std::make_unique<EvictNodeZero>(&log));
  std::mt19937_64 rng(1);
  auto at = f.Schedule(c, OneGpu(), rng).value();
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(log, Log{"post-filter"});
  // A full cluster with nothing to evict: one post-filter call, then no.
  log.clear();
  Cluster empty({N("a")});
  empty.Bind(OneGpu(), 0, std::vector<int>{0});
  Framework g(BestFit());
  g.SetPostFilter(std::make_unique<EvictNodeZero>(&log));
  Pod big = OneGpu();
  big.num_gpu = 2;  // fits nowhere even after eviction
  EXPECT_FALSE(g.Schedule(empty, big, rng).value().has_value());
  EXPECT_EQ(log, Log{"post-filter"});
}

}  // namespace
}  // namespace seedance::sched
