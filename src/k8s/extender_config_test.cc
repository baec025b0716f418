#include "seedance/k8s/extender_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seedance/base/fake_env.h"
#include "seedance/k8s/extender_server.h"

namespace seedance::k8s {
namespace {

TEST(ExtenderConfigTest, RoundTripsAndKeepsWhatAnUpdateLeavesOut) {
  const ExtenderConfig c{"fgd", true, false};
  EXPECT_EQ(DecodeExtenderConfig(EncodeExtenderConfig(c), "c").value(), c);
  const auto u = DecodeExtenderConfigUpdate(R"({"rdmaEnable":true})", "body").value();
  EXPECT_EQ(ApplyUpdate(c, u), (ExtenderConfig{"fgd", true, true}));
  EXPECT_TRUE(DecodeExtenderConfigUpdate("{}", "body")->empty());
  EXPECT_EQ(DecodeExtenderConfigUpdate(EncodeExtenderConfigUpdate(u), "b")->rdma, true);
}

TEST(ExtenderConfigTest, BadBodiesNameTheField) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[1]", "expected a JSON object"},
      {"{", "not valid JSON"},
      {R"({"policy":3})", "body.policy"},
      {R"({"numaAware":"yes"})", "body.numaAware"},
      {R"({"topology":"dynamic"})", "body.topology"},
  };
  for (const auto& [text, want] : bad) {
    auto r = DecodeExtenderConfigUpdate(text, "body");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().ToString().find(want), std::string::npos) << r.status().ToString();
  }
  EXPECT_FALSE(DecodeExtenderConfig(R"({"policy":"fgd"})", "answer").ok());
}

class NoBinder : public Binder {
 public:
  base::Status Bind(const BindPlan&) override { return base::OkStatus(); }
};

// `scheduler set`'s client against the server: the change takes effect for the next cycle.
TEST(ExtenderConfigTest, PutChangesTheRunningExtender) {
  base::FakeEnv env;
  ExtenderOptions o;
  o.policy = "bestfit";
  o.env = &env;
  auto e = Extender::Create(o).value();
  for (const char* name : {"a", "b"}) {
    KubeNode n;
    n.node.name = name;
    n.node.cpu_milli = 8000;
    n.node.memory_mib = 8192;
    n.node.gpu_count = 8;
    n.node.numa_nodes = 2;
    n.node.nics = name[0] == 'b' ? 1 : 0;
    ASSERT_TRUE(e->UpsertNode(n).ok());
  }
  NoBinder binder;
  ExtenderServerOptions so;
  so.prefix = "/x";
  auto server = ExtenderServer::Start(*e, binder, so).value();
  const std::string url = "http://127.0.0.1:" + std::to_string(server->port()) + "/x";
  EXPECT_EQ(PutExtenderConfig(url, {}).value(), (ExtenderConfig{"bestfit", false, false}));
  ExtenderConfigUpdate u;
  u.policy = "fgd";
  u.rdma = true;
  EXPECT_EQ(PutExtenderConfig(url, u).value(), (ExtenderConfig{"fgd", false, true}));
  EXPECT_EQ(e->config(), (ExtenderConfig{"fgd", false, true}));
  // An RDMA pod now goes only to b.
  KubePod p;
  p.ns = "ml";
  p.name = "r";
  p.uid = "u-r";
  p.pod.name = "ml/r";
  p.pod.num_gpu = 1;
  p.pod.gpu_milli = 1000;
  p.pod.rdma = true;
  ExtenderArgs args;
  args.pod = p;
  args.node_names = std::vector<std::string>{"a", "b"};
  const auto r = e->Filter(args);
  ASSERT_TRUE(r.node_names.has_value());
  EXPECT_EQ(*r.node_names, std::vector<std::string>{"b"});
  // A bad policy is refused with its reason and changes nothing.
  u.policy = "dynamic-topo";
  auto bad = PutExtenderConfig(url, u);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("HTTP 400"), std::string::npos) << bad.status().ToString();
  EXPECT_NE(bad.status().ToString().find("dynamic-topo"), std::string::npos);
  EXPECT_EQ(e->config().policy, "fgd");
  EXPECT_FALSE(PutExtenderConfig("ftp://x", {}).ok());
  server->Stop();
  EXPECT_FALSE(PutExtenderConfig(url, {}, 1).ok());  // nobody there: a clear error
}

}  // namespace
}  // namespace seedance::k8s
