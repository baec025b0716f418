#include "seedance/net/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "seedance/net/abuse.h"

namespace seedance::net {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions o = {}, size_t body_bytes = 64) {
    body_ = std::string(body_bytes, 'm');
    auto s = HttpServer::Start(o, [this](const HttpRequest& req) {
      HttpResponse res;
      if (req.head.path != "/metrics") {
        res.status = 404;
        return res;
      }
      res.body = body_;
      res.headers.emplace_back("X-Seq", std::to_string(seq_++));
      return res;
    });
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }

  int Connect() const {
    const int fd = abuse::Connect(server_->port());
    EXPECT_GE(fd, 0);
    return fd;
  }

  static void SendAll(int fd, const std::string& s) { abuse::SendAll(fd, s); }

  static std::string ReadUntilClosed(int fd, milliseconds timeout, bool* closed = nullptr) {
    return abuse::ReadUntilClosed(fd, timeout, closed);
  }

  static size_t Count(const std::string& hay, const std::string& needle) {
    size_t n = 0;
    for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
    return n;
  }

  // One well-behaved scrape on a fresh connection (cpp-httplib's client): its latency, or -1.
  double ScrapeMs() const {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_connection_timeout(std::chrono::seconds(5));
    c.set_read_timeout(std::chrono::seconds(5));
    const auto t0 = Clock::now();
    auto res = c.Get("/metrics");
    if (!res || res->status != 200 || res->body != body_) return -1;
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  }

  std::string body_;
  std::atomic<int> seq_{0};
  std::unique_ptr<HttpServer> server_;
};

const std::string kGet = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";

TEST_F(HttpServerTest, ServesGetAndHeadWithTheSameHeaders) {
  Start();
  EXPECT_GE(ScrapeMs(), 0);
  const int fd = Connect();
  SendAll(fd, "HEAD /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  bool closed = false;
  const std::string got = ReadUntilClosed(fd, milliseconds(3000), &closed);
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_EQ(got.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_NE(got.find("Content-Length: 64\r\n"), std::string::npos);
  EXPECT_NE(got.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(got.substr(got.size() - 4), "\r\n\r\n");  // no body
}

TEST_F(HttpServerTest, PipelinedRequestsAreAllAnsweredInOrder) {
  Start();
  const int fd = Connect();
  std::string many;
  for (int i = 0; i < 1000; ++i) many += kGet;
  many += "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  SendAll(fd, many);
  bool closed = false;
  const std::string got = ReadUntilClosed(fd, milliseconds(10000), &closed);
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_EQ(Count(got, "HTTP/1.1 200 OK\r\n"), 1001u);
  EXPECT_LT(got.find("X-Seq: 0\r\n"), got.find("X-Seq: 1\r\n"));
  EXPECT_NE(got.find("X-Seq: 1000\r\n"), std::string::npos);
}

// Parsing pauses while max_output_bytes wait; once the socket takes them it resumes on the
// requests already read, with no new input to wake it.
TEST_F(HttpServerTest, PipelinedRequestsPastTheOutputCapAreAllAnswered) {
  HttpServerOptions o;
  o.max_output_bytes = 16 * 1024;
  o.request_timeout = milliseconds(300);
  o.write_timeout = milliseconds(300);
  Start(o, /*body_bytes=*/4096);
  const base::Status piped = abuse::Pipelining(server_->port(), "/metrics", 300);
  EXPECT_TRUE(piped.ok()) << piped.ToString();
}

TEST_F(HttpServerTest, ADribblingClientIsClosedByTheRequestDeadline) {
  HttpServerOptions o;
  o.request_timeout = milliseconds(300);
  Start(o);
  const int fd = Connect();
  const auto t0 = Clock::now();
  bool closed = false;
  // One byte every 50 ms: each read would reset a per-read timeout; the request deadline holds.
  for (int i = 0; i < 200 && !closed; ++i) {
    SendAll(fd, std::string(1, kGet[static_cast<size_t>(i) % 10]));
    ReadUntilClosed(fd, milliseconds(50), &closed);
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_LT(s, 5.0);  // 0.3 s plus scheduling; 200 dribbled bytes would take 10 s
  EXPECT_GE(server_->stats().timed_out, 1u);
}

TEST_F(HttpServerTest, IdleConnectionsAtTheCapMakeRoomForScrapers) {
  HttpServerOptions o;
  o.max_connections = 8;
  o.request_timeout = milliseconds(60000);  // only the cap can free a slot in this test
  Start(o);
  std::vector<int> idle;
  for (int i = 0; i < 40; ++i) idle.push_back(Connect());
  // Half-sent requests hold their slots too.
  for (int i = 0; i < 40; i += 2) SendAll(idle[static_cast<size_t>(i)], "GET /met");
  for (int i = 0; i < 20; ++i) EXPECT_GE(ScrapeMs(), 0) << "scrape " << i;
  const HttpServerStats st = server_->stats();
  EXPECT_LE(st.open, 8u);
  EXPECT_GE(st.evicted, 40u - 8u);
  for (int fd : idle) ::close(fd);
}

TEST_F(HttpServerTest, AHugeHeadIsRefusedAtTheLimit) {
  Start();
  const int fd = Connect();
  std::string head = "GET /metrics HTTP/1.1\r\nHost: t\r\n";
  for (int i = 0; i < 100000; ++i) head += "X-A: b\r\n";
  std::thread sender([&] { SendAll(fd, head); });
  bool closed = false;
  const std::string got = ReadUntilClosed(fd, milliseconds(10000), &closed);
  ::shutdown(fd, SHUT_RDWR);
  sender.join();
  ::close(fd);
  EXPECT_EQ(got.substr(0, 12), "HTTP/1.1 431");
  EXPECT_NE(got.find("Connection: close\r\n"), std::string::npos);
  EXPECT_TRUE(closed);
}

TEST_F(HttpServerTest, RangeIsIgnoredAndTheWholeBodySentOnce) {
  Start();
  auto request = [](int parts) {
    std::string ranges = "bytes=0-0";
    for (int i = 1; i < parts; ++i) ranges += "," + std::to_string(i) + "-" + std::to_string(i);
    return "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\nRange: " + ranges + "\r\n\r\n";
  };
  int fd = Connect();
  SendAll(fd, request(500));  // 4.4 KB of ranges: within the head limit
  std::string got = ReadUntilClosed(fd, milliseconds(3000));
  ::close(fd);
  EXPECT_EQ(got.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(got.find("multipart"), std::string::npos);
  EXPECT_EQ(got.substr(got.size() - 64), body_);
  EXPECT_LT(got.size(), 400u);
  fd = Connect();
  SendAll(fd, request(2000));  // 17 KB: over it, and the answer stays small
  got = ReadUntilClosed(fd, milliseconds(3000));
  ::close(fd);
  EXPECT_EQ(got.substr(0, 12), "HTTP/1.1 431");
  EXPECT_LT(got.size(), 400u);
}

TEST_F(HttpServerTest, SmallBodiesAreReadAndLargeOnesRefused) {
  Start();
  int fd = Connect();
  SendAll(fd, "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello" + kGet +
                  "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  std::string got = ReadUntilClosed(fd, milliseconds(3000));
  ::close(fd);
  EXPECT_EQ(Count(got, "HTTP/1.1 200 OK\r\n"), 3u);
  fd = Connect();
  SendAll(fd, "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\nxxxx");
  bool closed = false;
  got = ReadUntilClosed(fd, milliseconds(3000), &closed);
  ::close(fd);
  EXPECT_EQ(got.substr(0, 12), "HTTP/1.1 413");
  EXPECT_TRUE(closed);
}

TEST_F(HttpServerTest, ErrorsReachTheClientDespiteUnreadInput) {
  Start();
  const int fd = Connect();
  // A bad request line followed by more bytes than the server will read: a plain close()
  // would reset the connection and lose the 400.
  SendAll(fd, "GET /metrics garbage\r\n\r\n" + std::string(100000, 'z'));
  bool closed = false;
  const std::string got = ReadUntilClosed(fd, milliseconds(3000), &closed);
  ::close(fd);
  EXPECT_EQ(got.substr(0, 12), "HTTP/1.1 400");
  EXPECT_TRUE(closed);
}

TEST_F(HttpServerTest, AClientThatNeverReadsIsClosedByTheWriteDeadline) {
  HttpServerOptions o;
  o.write_timeout = milliseconds(300);
  o.max_output_bytes = 64 * 1024;
  Start(o, /*body_bytes=*/256 * 1024);
  const int fd = Connect();
  int small = 4096;  // a small receive buffer so that the server's output backs up
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  std::string many;
  for (int i = 0; i < 200; ++i) many += kGet;
  SendAll(fd, many);
  // Meanwhile other clients are served.
  for (int i = 0; i < 5; ++i) EXPECT_GE(ScrapeMs(), 0);
  const auto end = Clock::now() + std::chrono::seconds(10);
  while (server_->stats().timed_out == 0 && Clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_GE(server_->stats().timed_out, 1u);
  EXPECT_LT(server_->stats().responses, 200u);  // reading paused: not every request was answered
  ::close(fd);
}

TEST_F(HttpServerTest, AHalfClosedClientStillGetsItsAnswers) {
  Start();
  const int fd = Connect();
  SendAll(fd, kGet + kGet);
  ::shutdown(fd, SHUT_WR);
  bool closed = false;
  const std::string got = ReadUntilClosed(fd, milliseconds(3000), &closed);
  ::close(fd);
  EXPECT_EQ(Count(got, "HTTP/1.1 200 OK\r\n"), 2u);
  EXPECT_TRUE(closed);
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionsAreClosed) {
  HttpServerOptions o;
  o.idle_timeout = milliseconds(200);
  Start(o);
  const int fd = Connect();
  SendAll(fd, kGet);
  bool closed = false;
  const std::string got = ReadUntilClosed(fd, milliseconds(5000), &closed);
  ::close(fd);
  EXPECT_EQ(Count(got, "HTTP/1.1 200 OK\r\n"), 1u);
  EXPECT_TRUE(closed);
}

TEST_F(HttpServerTest, APortInUseIsAnError) {
  Start();
  HttpServerOptions o;
  o.port = server_->port();
  auto second = HttpServer::Start(o, [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot listen"), std::string::npos);
}

}  // namespace
}  // namespace seedance::net
