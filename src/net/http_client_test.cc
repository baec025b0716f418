// HttpClient against cpp-httplib's server (an independent implementation) for what a good
// server does, and against scripted raw-socket servers for what a hostile one does.
#include "seedance/net/http_client.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "seedance/net/abuse.h"

namespace seedance::net {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(ParseUrlTest, SplitsWhatClientsAreGiven) {
  auto u = ParseUrl("http://127.0.0.1:9090/api/v1/query?q=up#x");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 9090);
  EXPECT_EQ(u->target, "/api/v1/query?q=up");
  EXPECT_EQ(u->Origin(), "http://127.0.0.1:9090");
  u = ParseUrl("HTTPS://[::1]/metrics");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->Origin(), "https://[::1]:443");
  u = ParseUrl("http://h?x=1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->target, "/?x=1");
  for (const char* bad : {"ftp://h/", "http://", "http://h:0/", "http://h:65536/", "http://h:x/",
                          "http://u:p@h/", "http://[::1/", "http://h/a b", "h:80"}) {
    auto r = ParseUrl(bad, "--metrics");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().where(), "--metrics") << bad;
  }
  EXPECT_FALSE(HttpClient::Create("http://h:1/path").ok());
}

class GoodServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get("/hello", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("hello", "text/plain");
    });
    server_.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.body + "|" + req.get_header_value("Content-Type") + "|" +
                          req.get_header_value("Authorization"),
                      "text/plain");
    });
    server_.Get("/chunked", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [](size_t offset, httplib::DataSink& sink) {
        if (offset >= 3000) {
          sink.done();
          return true;
        }
        const std::string piece(1000, static_cast<char>('a' + offset / 1000));
        return sink.write(piece.data(), piece.size());
      });
    });
    server_.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(2 << 20, 'b'), "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }
  std::unique_ptr<HttpClient> Client(HttpClientOptions o = {}) {
    auto c = HttpClient::Create("http://127.0.0.1:" + std::to_string(port_), std::move(o));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return std::move(*c);
  }
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(GoodServerTest, GetsPostsChunksAndReusesTheConnection) {
  HttpClientOptions o;
  o.headers = {{"Authorization", "Bearer t"}};
  auto c = Client(o);
  for (int i = 0; i < 3; ++i) {
    auto r = c->Send({});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 404);
    HttpClientRequest get;
    get.target = "/hello";
    r = c->Send(get);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "hello");
    EXPECT_EQ(r->Field("content-type"), "text/plain");
  }
  HttpClientRequest post;
  post.method = "POST";
  post.target = "/echo";
  post.body = "{\"a\":1}";
  post.content_type = "application/json";
  auto r = c->Send(post);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "{\"a\":1}|application/json|Bearer t");
  HttpClientRequest chunked;
  chunked.target = "/chunked";
  r = c->Send(chunked);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, std::string(1000, 'a') + std::string(1000, 'b') + std::string(1000, 'c'));
  // Streamed: pieces in order, nothing kept; stopping early is not an error.
  std::string streamed;
  chunked.on_body = [&](std::string_view piece) {
    streamed += piece;
    return streamed.size() < 1500;
  };
  r = c->Send(chunked);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->stopped_early);
  EXPECT_TRUE(r->body.empty());
  EXPECT_EQ(streamed.substr(0, 1000), std::string(1000, 'a'));
  // And the next exchange works on a fresh connection.
  HttpClientRequest get;
  get.target = "/hello";
  r = c->Send(get);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "hello");
}

TEST_F(GoodServerTest, ABodyOverTheCapIsAnErrorUnlessStreamed) {
  HttpClientOptions o;
  o.max_body_bytes = 1 << 20;
  auto c = Client(o);
  HttpClientRequest big;
  big.target = "/big";
  auto r = c->Send(big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("over the client's limit"), std::string::npos);
  EXPECT_EQ(r.status().where(), "GET http://127.0.0.1:" + std::to_string(port_) + "/big");
  size_t seen = 0;
  big.on_body = [&](std::string_view piece) {
    seen += piece.size();
    return true;
  };
  r = c->Send(big);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(seen, size_t{2} << 20);
}

// A scripted server: accepts one connection at a time and runs `script` on it.
class HostileServer {
 public:
  explicit HostileServer(std::function<void(int fd)> script) : script_(std::move(script)) {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(listen_, 16);
    socklen_t len = sizeof(addr);
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        const int fd = ::accept(listen_, nullptr, nullptr);
        if (fd < 0 || stop_) {
          if (fd >= 0) ::close(fd);
          return;
        }
        char buf[4096];
        [[maybe_unused]] const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);  // the request
        script_(fd);
        ::close(fd);
      }
    });
  }
  ~HostileServer() {
    stop_ = true;
    ::shutdown(listen_, SHUT_RDWR);
    thread_.join();
    ::close(listen_);
  }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::atomic<bool> stop_{false};

 private:
  std::function<void(int)> script_;
  int listen_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// Writes until the client goes away or `stop` is set.
void Endless(int fd, const std::string& first, const std::string& repeat,
             const std::atomic<bool>& stop) {
  if (!abuse::SendAll(fd, first)) return;
  while (!stop && abuse::SendAll(fd, repeat)) {
  }
}

TEST(HostileServerTest, EndlessHeadsAndBodiesAreCutAtTheirCaps) {
  struct Script {
    const char* name;
    std::string first, repeat;
    const char* words;
  };
  const Script scripts[] = {
      {"endless header fields", "HTTP/1.1 200 OK\r\n", "X-A: " + std::string(100, 'a') + "\r\n",
       "more than 128 header fields"},
      {"an endless header field", "HTTP/1.1 200 OK\r\nX-A: ", std::string(4096, 'a'),
       "over 65536 bytes"},
      {"endless body until close", "HTTP/1.1 200 OK\r\n\r\n", std::string(4096, 'x'),
       "over the client's limit"},
      {"endless chunked body", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
       "1000\r\n" + std::string(4096, 'x') + "\r\n", "over the client's limit"},
      {"a huge Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n",
       std::string(4096, 'x'), "over the client's limit"},
      {"an endless chunk-size line", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
       std::string(4096, '1'), "a line over 4096 bytes"},
  };
  for (const Script& s : scripts) {
    std::atomic<bool> stop{false};
    HostileServer server([&](int fd) { Endless(fd, s.first, s.repeat, stop); });
    HttpClientOptions o;
    o.max_body_bytes = 1 << 20;
    auto c = HttpClient::Create(server.origin(), o);
    ASSERT_TRUE(c.ok());
    const auto t0 = Clock::now();
    auto r = (*c)->Send({});
    stop = true;
    ASSERT_FALSE(r.ok()) << s.name;
    EXPECT_NE(r.status().message().find(s.words), std::string::npos)
        << s.name << ": " << r.status().ToString();
    EXPECT_LT(SecondsSince(t0), 10.0) << s.name;
  }
}

TEST(HostileServerTest, ADrippingServerIsCutAtTheDeadlineNotRenewedByEachByte) {
  std::atomic<bool> stop{false};
  HostileServer server([&](int fd) {
    const std::string answer =
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'd');
    for (char ch : answer) {
      if (stop || !abuse::SendAll(fd, std::string(1, ch))) return;
      std::this_thread::sleep_for(milliseconds(50));
    }
  });
  auto c = HttpClient::Create(server.origin());
  ASSERT_TRUE(c.ok());
  HttpClientRequest req;
  req.timeout = milliseconds(600);
  const auto t0 = Clock::now();
  auto r = (*c)->Send(req);
  stop = true;
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos) << r.status().ToString();
  EXPECT_LT(SecondsSince(t0), 2.0);  // 0.6 s plus slack; the whole drip would take 7 s
}

TEST(HostileServerTest, AnIdleStreamAndStopEndAnExchangeWithoutADeadline) {
  std::atomic<bool> stop{false};
  HostileServer server([&](int fd) {
    abuse::SendAll(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
    while (!stop) std::this_thread::sleep_for(milliseconds(10));
  });
  auto c = HttpClient::Create(server.origin());
  ASSERT_TRUE(c.ok());
  HttpClientRequest watch;
  watch.timeout = milliseconds(0);  // no deadline: a watch
  watch.idle_timeout = milliseconds(300);
  std::string got;
  watch.on_body = [&](std::string_view p) {
    got += p;
    return true;
  };
  auto t0 = Clock::now();
  auto r = (*c)->Send(watch);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("idle"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(got, "abc");
  EXPECT_LT(SecondsSince(t0), 2.0);
  // Without an idle bound, Stop from another thread ends it.
  watch.idle_timeout.reset();
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(200));
    (*c)->Stop();
  });
  t0 = Clock::now();
  r = (*c)->Send(watch);
  stopper.join();
  stop = true;
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("stopped"), std::string::npos) << r.status().ToString();
  EXPECT_LT(SecondsSince(t0), 3.0);
}

// TLS against cpp-httplib's SSLServer with a certificate made here by the openssl tool: the
// certificate and the address are verified, a client certificate is sent.
TEST(HttpClientTlsTest, VerifiesTheServerAndItsAddress) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("seedance-tls-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cert = (dir / "cert.pem").string(), key = (dir / "key.pem").string();
  const std::string cmd =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=seedance-test"
      " -addext subjectAltName=IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0)
    GTEST_SKIP() << "the openssl tool could not make a certificate";
  httplib::SSLServer server(cert.c_str(), key.c_str());
  server.Get("/hello", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("over tls", "text/plain");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  const std::string origin = "https://127.0.0.1:" + std::to_string(port);
  HttpClientRequest get;
  get.target = "/hello";
  HttpClientOptions trusted;
  trusted.ca_file = cert;
  trusted.cert_file = cert;  // the same pair as a client certificate
  trusted.key_file = key;
  auto c = HttpClient::Create(origin, trusted);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto r = (*c)->Send(get);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "over tls");
  r = (*c)->Send(get);  // again, on the kept connection
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Untrusted: the system store does not know this certificate.
  auto untrusted = HttpClient::Create(origin);
  ASSERT_TRUE(untrusted.ok());
  r = (*untrusted)->Send(get);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("certificate"), std::string::npos) << r.status().ToString();
  // Trusted, but asked for by another name than the certificate's.
  auto wrong_name = HttpClient::Create("https://localhost:" + std::to_string(port), trusted);
  ASSERT_TRUE(wrong_name.ok());
  r = (*wrong_name)->Send(get);
  EXPECT_FALSE(r.ok());
  HttpClientOptions insecure;
  insecure.verify_tls = false;
  auto skip = HttpClient::Create(origin, insecure);
  ASSERT_TRUE(skip.ok());
  r = (*skip)->Send(get);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  HttpClientOptions missing;
  missing.ca_file = (dir / "nothing.pem").string();
  EXPECT_FALSE(HttpClient::Create(origin, missing).ok());
  server.stop();
  t.join();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace seedance::net
