#include "seedance/probe/exporter.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "seedance/net/abuse.h"
#include "src/probe/fake_proc_for_test.h"

namespace seedance::probe {
namespace {

class ExporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ProcAt0(env_);
    probe_ = std::make_unique<Probe>(env_, nullptr, HostOptions{});
  }
  std::unique_ptr<Exporter> Start(std::function<std::string()> extra = nullptr,
                                  std::chrono::milliseconds request_timeout = {}) {
    ExporterOptions o;
    o.extra = std::move(extra);
    if (request_timeout.count() > 0) o.request_timeout = request_timeout;
    o.listen = "127.0.0.1:0";
    o.interval = std::chrono::milliseconds(50);
    o.version = "test";
    auto e = Exporter::Start(*probe_, o);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return std::move(*e);
  }
  // A client that connects and sends half a request line, then stalls.
  int StuckClient(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    const char partial[] = "GET /metr";
    EXPECT_EQ(::send(fd, partial, sizeof(partial) - 1, 0),
              static_cast<ssize_t>(sizeof(partial) - 1));
    return fd;
  }
  base::FakeEnv env_;
  std::unique_ptr<Probe> probe_;
};

TEST_F(ExporterTest, ServesMetricsWithTheTextFormatContentType) {
  auto e = Start();
  httplib::Client c("127.0.0.1", e->port());
  auto res = c.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(res->body.find("# TYPE seedance_cpu_seconds_total counter"), std::string::npos);
  EXPECT_NE(res->body.find("seedance_probe_info{version=\"test\""), std::string::npos);
  EXPECT_NE(res->body.find("seedance_probe_scrapes_total 1\n"), std::string::npos);
  auto second = c.Get("/metrics");
  ASSERT_TRUE(second);
  EXPECT_NE(second->body.find("seedance_probe_scrapes_total 2\n"), std::string::npos);
  EXPECT_EQ(e->scrapes(), 2u);
}

TEST_F(ExporterTest, AppendsTheExtraFamiliesRenderedAtEachScrape) {
  int calls = 0;
  auto e = Start([&calls] {
    ++calls;
    return "# TYPE extra_family gauge\nextra_family " + std::to_string(calls) + "\n";
  });
  httplib::Client c("127.0.0.1", e->port());
  auto first = c.Get("/metrics");
  ASSERT_TRUE(first);
  EXPECT_NE(first->body.find("extra_family 1\n"), std::string::npos);
  auto second = c.Get("/metrics");
  ASSERT_TRUE(second);
  EXPECT_NE(second->body.find("extra_family 2\n"), std::string::npos);
}

TEST_F(ExporterTest, BadRequestsGetFourHundreds) {
  auto e = Start();
  httplib::Client c("127.0.0.1", e->port());
  auto missing = c.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto post = c.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  auto index = c.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  // A request line that is not HTTP.
  int fd = StuckClient(e->port());
  const char rest[] = "ics garbage\r\n\r\n";
  ::send(fd, rest, sizeof(rest) - 1, 0);
  char buf[64] = {};
  ASSERT_GT(::recv(fd, buf, sizeof(buf) - 1, 0), 0);
  EXPECT_EQ(std::string(buf).substr(0, 12), "HTTP/1.1 400");
  ::close(fd);
}

TEST_F(ExporterTest, StuckClientsDoNotBlockOtherScrapes) {
  auto e = Start();
  // More stuck clients than any thread pool the exporter could have had.
  std::vector<int> stuck;
  for (int i = 0; i < 64; ++i) stuck.push_back(StuckClient(e->port()));
  httplib::Client c("127.0.0.1", e->port());
  // Shorter than the exporter's 2 s request timeout: served at once, not after the stuck
  // ones time out.
  c.set_read_timeout(std::chrono::milliseconds(1000));
  for (int i = 0; i < 20; ++i) {
    auto res = c.Get("/metrics");
    ASSERT_TRUE(res) << "scrape " << i << " failed with stuck clients connected";
    EXPECT_EQ(res->status, 200);
  }
  EXPECT_EQ(e->http_stats().evicted, 0u);  // 64 + 1 is under the connection cap
  for (int fd : stuck) ::close(fd);
}

TEST_F(ExporterTest, ListenAddressParsing) {
  EXPECT_EQ(*ParseListenAddress("127.0.0.1:9464"), std::make_pair(std::string("127.0.0.1"), 9464));
  EXPECT_EQ(*ParseListenAddress(":9464"), std::make_pair(std::string("0.0.0.0"), 9464));
  EXPECT_EQ(*ParseListenAddress("[::1]:80"), std::make_pair(std::string("::1"), 80));
  for (const char* bad : {"9464", "host:", "host:99999", "host:x1", "[::1]9464"}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
}

TEST_F(ExporterTest, PortInUseIsAClearError) {
  auto e = Start();
  ExporterOptions o;
  o.listen = "127.0.0.1:" + std::to_string(e->port());
  auto second = Exporter::Start(*probe_, o);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().where(), "listen");
}

// The guarantees of the one HTTP server (net/http_server.h), checked on this endpoint.
TEST_F(ExporterTest, HoldsTheHttpServersGuaranteesAgainstAbusiveClients) {
  const std::chrono::milliseconds timeout(300);
  auto e = Start(nullptr, timeout);
  const int port = e->port();
  for (const base::Status& check :
       {net::abuse::Slowloris(port, "/metrics", timeout),
        net::abuse::IdleSockets(port, "/metrics", 50, timeout),
        net::abuse::HugeHeaders(port, "/metrics"), net::abuse::Pipelining(port, "/metrics", 500),
        net::abuse::ManyConnections(port, "/metrics", 1000)}) {
    EXPECT_TRUE(check.ok()) << check.ToString();
  }
  auto health = net::abuse::Get(port, "/healthz");
  ASSERT_TRUE(health.ok()) << health.status().ToString();
  EXPECT_EQ(*health, 200);
}

}  // namespace
}  // namespace seedance::probe
