#include "seedance/k8s/extender_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "seedance/base/fake_env.h"
#include "seedance/net/abuse.h"

namespace seedance::k8s {
namespace {

class RecordingBinder : public Binder {
 public:
  base::Status Bind(const BindPlan& plan) override {
    std::lock_guard<std::mutex> lock(mu);
    plans.push_back(plan);
    return fail ? base::UnavailableError("the API server said no", "binding") : base::OkStatus();
  }
  std::mutex mu;
  std::vector<BindPlan> plans;
  bool fail = false;
};

constexpr std::string_view kServerPod =
    R"({"metadata":{"name":"p","namespace":"ml","uid":"u1"},"spec":{"containers":[{"resources":)"
    R"({"requests":{"seedance.io/gpu-milli":"500"}}}]}})";

std::string FilterBody(std::string_view pod = kServerPod) {
  return std::string(R"({"Pod":)") + std::string(pod) + R"(,"Nodes":null,"NodeNames":["a","b"]})";
}

class ExtenderServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ExtenderOptions o;
    o.policy = "bestfit";
    o.env = &env_;
    extender_ = Extender::Create(o).value();
    for (const char* name : {"a", "b"}) {
      KubeNode n;
      n.node.name = name;
      n.node.cpu_milli = 8000;
      n.node.memory_mib = 8192;
      n.node.gpu_count = 1;
      ASSERT_TRUE(extender_->UpsertNode(n).ok());
    }
    ExtenderServerOptions so;
    so.prefix = "/seedance";
    so.recorder = [this](std::string_view verb, std::string_view request, int code,
                         std::string_view response) {
      std::lock_guard<std::mutex> lock(recorded_mu_);
      recorded_.push_back(nlohmann::json::parse(ExchangeJsonLine(verb, request, code, response)));
    };
    server_ = ExtenderServer::Start(*extender_, binder_, so).value();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }

  base::FakeEnv env_;
  std::unique_ptr<Extender> extender_;
  RecordingBinder binder_;
  std::unique_ptr<ExtenderServer> server_;
  std::unique_ptr<httplib::Client> client_;
  std::mutex recorded_mu_;
  std::vector<nlohmann::json> recorded_;  // the recorder's lines, parsed back

  std::vector<nlohmann::json> Recorded() {
    std::lock_guard<std::mutex> lock(recorded_mu_);
    return recorded_;
  }
};

std::string GangPodJson(const std::string& name) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":"u-)" + name +
         R"(","annotations":{"seedance.io/gang":"g","seedance.io/gang-size":"2"}},)"
         R"("spec":{"containers":[{"resources":{"requests":{"seedance.io/gpu-milli":"1000"}}}]}})";
}

// One bind of a gang member posts both members' Bindings; the other's own bind posts nothing.
TEST_F(ExtenderServerTest, AGangIsBoundByOneBind) {
  ASSERT_TRUE(extender_->UpsertPod(ParseKubePod(GangPodJson("w0"), "pod").value()).ok());
  auto f = client_->Post("/seedance/filter", FilterBody(GangPodJson("w1")), "application/json");
  ASSERT_TRUE(f);
  ASSERT_NE(f->body.find(R"("NodeNames":[")"), std::string::npos) << f->body;
  const std::string node = nlohmann::json::parse(f->body)["NodeNames"][0];
  auto b = client_->Post(
      "/seedance/bind",
      R"({"PodName":"w1","PodNamespace":"ml","PodUID":"u-w1","Node":")" + node + R"("})",
      "application/json");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->body, R"({"Error":""})");
  ASSERT_EQ(binder_.plans.size(), 2U);
  EXPECT_EQ(binder_.plans[0].name, "w1");
  EXPECT_EQ(binder_.plans[1].name, "w0");
  EXPECT_NE(binder_.plans[0].node, binder_.plans[1].node);  // one GPU per node
  EXPECT_EQ(extender_->stats().binds, 2);
  b = client_->Post("/seedance/bind",
                    R"({"PodName":"w0","PodNamespace":"ml","PodUID":"u-w0","Node":")" +
                        binder_.plans[1].node + R"("})",
                    "application/json");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->body, R"({"Error":""})");
  EXPECT_EQ(binder_.plans.size(), 2U);
  EXPECT_TRUE(extender_->Check().ok());
}

TEST_F(ExtenderServerTest, FilterPrioritizeAndBindOverHttp) {
  auto f = client_->Post("/seedance/filter", FilterBody(), "application/json");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->status, 200);
  EXPECT_NE(f->body.find(R"("NodeNames":["a"])"), std::string::npos) << f->body;
  auto p = client_->Post("/seedance/prioritize", FilterBody(), "application/json");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->body, R"([{"Host":"a","Score":10},{"Host":"b","Score":0}])");
  auto b = client_->Post("/seedance/bind",
                         R"({"PodName":"p","PodNamespace":"ml","PodUID":"u1","Node":"a"})",
                         "application/json");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->body, R"({"Error":""})");
  ASSERT_EQ(binder_.plans.size(), 1U);
  EXPECT_EQ(binder_.plans[0].node, "a");
  EXPECT_EQ(binder_.plans[0].gpus, std::vector<int>{0});
  EXPECT_EQ(extender_->stats().binds, 1);
  auto health = client_->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body, "ok\n");
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find(R"(seedance_extender_requests_total{verb="filter",code="200"} 1)"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("seedance_extender_gpu_milli_used 500"), std::string::npos);
  EXPECT_NE(metrics->body.find(R"(seedance_extender_request_seconds_count{verb="bind"} 1)"),
            std::string::npos);
  // The recorder saw each exchange as sent: the bodies byte for byte.
  const auto lines = Recorded();
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0]["verb"], "filter");
  EXPECT_EQ(lines[0]["code"], 200);
  EXPECT_EQ(lines[0]["request"], FilterBody());
  EXPECT_EQ(lines[0]["response"], f->body);
  EXPECT_EQ(lines[1]["verb"], "prioritize");
  EXPECT_EQ(lines[1]["response"], p->body);
  EXPECT_EQ(lines[2]["verb"], "bind");
  EXPECT_EQ(lines[2]["response"], R"({"Error":""})");
}

TEST_F(ExtenderServerTest, AFailedBindingReleasesAndSaysWhy) {
  binder_.fail = true;
  ASSERT_TRUE(client_->Post("/seedance/filter", FilterBody(), "application/json"));
  auto b = client_->Post("/seedance/bind",
                         R"({"PodName":"p","PodNamespace":"ml","PodUID":"u1","Node":"a"})",
                         "application/json");
  ASSERT_TRUE(b);
  EXPECT_NE(b->body.find("the API server said no"), std::string::npos);
  EXPECT_EQ(extender_->stats().used_gpu_milli, 0);
  EXPECT_EQ(extender_->stats().bind_failures, 1);
}

TEST_F(ExtenderServerTest, MalformedBodiesAre400WithTheDecodersError) {
  auto f = client_->Post("/seedance/filter", R"({"Pod":{"metadata":{}}})", "application/json");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->status, 400);
  EXPECT_NE(f->body.find("ExtenderArgs.Pod.metadata.name"), std::string::npos) << f->body;
  auto b = client_->Post("/seedance/bind", "not json", "application/json");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->status, 400);
  auto m = client_->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find(R"(seedance_extender_requests_total{verb="filter",code="400"} 1)"),
            std::string::npos);
  const auto lines = Recorded();
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[1]["code"], 400);
  EXPECT_EQ(lines[1]["request"], "not json");
}

// A verb path asked with another method is 405 with its Allow field, not a bare 404.
TEST_F(ExtenderServerTest, WrongMethodsAre405WithAllow) {
  for (const char* verb :
       {"/seedance/filter", "/seedance/prioritize", "/seedance/bind", "/seedance/preempt"}) {
    auto r = client_->Get(verb);
    ASSERT_TRUE(r) << verb;
    EXPECT_EQ(r->status, 405) << verb;
    EXPECT_EQ(r->get_header_value("Allow"), "POST") << verb;
    EXPECT_NE(r->body.find("not allowed"), std::string::npos) << r->body;
  }
  auto config = client_->Post("/seedance/config", "{}", "application/json");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->status, 405);
  EXPECT_EQ(config->get_header_value("Allow"), "GET, HEAD, PUT");
  auto nowhere = client_->Get("/seedance/nothing");
  ASSERT_TRUE(nowhere);
  EXPECT_EQ(nowhere->status, 404);
  EXPECT_NE(nowhere->body.find("\"error\""), std::string::npos) << nowhere->body;
}

// The guarantees of the one HTTP server (net/http_server.h) hold here too: slow, idle, huge,
// pipelined and numerous clients neither hold the verbs out nor grow the server.
TEST(ExtenderAbuseTest, HoldsTheHttpServersGuaranteesAgainstAbusiveClients) {
  auto extender = Extender::Create(ExtenderOptions{});
  ASSERT_TRUE(extender.ok()) << extender.status().ToString();
  RecordingBinder binder;
  ExtenderServerOptions o;
  o.prefix = "/seedance";
  o.http.request_timeout = std::chrono::milliseconds(300);
  auto server = ExtenderServer::Start(**extender, binder, o);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  for (const base::Status& check :
       {net::abuse::Slowloris(port, "/seedance/config", o.http.request_timeout),
        net::abuse::IdleSockets(port, "/seedance/config", 50, o.http.request_timeout),
        net::abuse::HugeHeaders(port, "/seedance/config"),
        net::abuse::Pipelining(port, "/healthz", 500),
        net::abuse::ManyConnections(port, "/seedance/config", 1000)}) {
    EXPECT_TRUE(check.ok()) << check.ToString();
  }
}

// A decode error quoting a multi-byte character cut in half still encodes (no 500, no empty body).
TEST_F(ExtenderServerTest, AnErrorQuotingCutUtf8IsStillA400WithABody) {
  const std::string quantity = "1\u65e5\u65e5\u65e5\u65e5";  // "1" and a long CJK suffix
  auto f = client_->Post("/seedance/filter",
                         R"({"Pod":{"metadata":{"name":"p"},"spec":{"containers":[{"resources":)"
                         R"({"requests":{"cpu":")" +
                             quantity + R"("}}}]}}})",
                         "application/json");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->status, 400) << f->body;
  ASSERT_FALSE(f->body.empty());
  EXPECT_NE(f->body.find("[cpu]"), std::string::npos) << f->body;
}

TEST(ExchangeJsonLineTest, KeepsBodiesExactlyAndReplacesBadUtf8) {
  const std::string line = ExchangeJsonLine("filter", "{\"a\":\n\"\\u00e9\"}", 200, "[]");
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["request"], "{\"a\":\n\"\\u00e9\"}");
  EXPECT_EQ(j["response"], "[]");
  const auto bad = nlohmann::json::parse(ExchangeJsonLine("bind", "\xff\xfe", 400, ""));
  EXPECT_EQ(bad["code"], 400);
  EXPECT_EQ(bad["request"].get<std::string>().size(), 6U);  // two U+FFFD
}

}  // namespace
}  // namespace seedance::k8s

namespace seedance::k8s {
namespace {

// With a token: an unauthenticated or wrongly authenticated PUT /config is a 401 and changes
// nothing; the verbs need the token unless loopback is trusted; reads stay open.
TEST(ExtenderAuthTest, MutationsNeedTheBearerToken) {
  auto extender = Extender::Create(ExtenderOptions{});
  ASSERT_TRUE(extender.ok());
  KubeNode n;
  n.node.name = "a";
  n.node.cpu_milli = 8000;
  n.node.memory_mib = 8192;
  n.node.gpu_count = 1;
  ASSERT_TRUE((*extender)->UpsertNode(n).ok());
  RecordingBinder binder;
  ExtenderServerOptions o;
  o.token = "s3cret-token";
  o.trust_loopback = false;  // the test's client is on loopback: make it count as outside
  auto server = ExtenderServer::Start(**extender, binder, o);
  ASSERT_TRUE(server.ok());
  httplib::Client c("127.0.0.1", (*server)->port());
  const std::string before = (*extender)->config().policy;
  const std::string update = R"({"policy": "random"})";
  for (const httplib::Headers& h :
       {httplib::Headers{}, httplib::Headers{{"Authorization", "Bearer wrong-token"}},
        httplib::Headers{{"Authorization", "Bearer s3cret-toke"}},
        httplib::Headers{{"Authorization", "Basic s3cret-token"}}}) {
    auto r = c.Put("/config", h, update, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401);
    EXPECT_TRUE(r->has_header("WWW-Authenticate"));
    EXPECT_EQ((*extender)->config().policy, before);
    r = c.Post("/filter", h, FilterBody(), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401);
  }
  EXPECT_EQ((*extender)->stats().reservations, 0);
  const httplib::Headers good{{"Authorization", "Bearer s3cret-token"}};
  auto r = c.Put("/config", good, update, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ((*extender)->config().policy, "random");
  r = c.Post("/filter", good, FilterBody(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  for (const char* path : {"/config", "/metrics", "/healthz"}) {
    r = c.Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << path;
  }
}

TEST(ExtenderAuthTest, LoopbackVerbsPassButConfigStillNeedsTheToken) {
  auto extender = Extender::Create(ExtenderOptions{});
  ASSERT_TRUE(extender.ok());
  RecordingBinder binder;
  ExtenderServerOptions o;
  o.token = "t";
  auto server = ExtenderServer::Start(**extender, binder, o);
  ASSERT_TRUE(server.ok());
  httplib::Client c("127.0.0.1", (*server)->port());
  auto r = c.Post("/filter", FilterBody(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);  // kube-scheduler in the same pod
  r = c.Put("/config", R"({"policy": "random"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
}

}  // namespace
}  // namespace seedance::k8s
