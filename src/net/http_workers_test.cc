// HttpServer with worker threads: blocking handlers, request bodies, streamed responses, the
// built-in /healthz and /metrics, and the abuse checks (abuse.h) that every endpoint runs.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "seedance/net/abuse.h"
#include "seedance/net/http_server.h"

namespace seedance::net {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

using abuse::Connect;
using abuse::ReadUntilClosed;
using abuse::SendAll;

size_t CountOf(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

template <typename Pred>
bool WaitFor(Pred pred, milliseconds timeout = milliseconds(5000)) {
  const auto end = Clock::now() + timeout;
  while (!pred()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

// A gate a handler waits at until the test opens it.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

std::unique_ptr<HttpServer> StartOrDie(HttpServerOptions o, HttpHandler h) {
  auto s = HttpServer::Start(std::move(o), std::move(h));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(HttpWorkers, ABlockingHandlerStallsOnlyItsOwnClient) {
  Gate gate;
  HttpServerOptions o;
  o.workers = 2;
  auto server = StartOrDie(o, [&](const HttpRequest& req) {
    HttpResponse res;
    if (req.head.path == "/slow") gate.Wait();
    res.body = req.head.path;
    return res;
  });
  ASSERT_TRUE(server);
  std::atomic<int> slow_status{0};
  std::thread slow([&] {
    httplib::Client c("127.0.0.1", server->port());
    c.set_read_timeout(std::chrono::seconds(10));
    auto res = c.Get("/slow");
    slow_status = res ? res->status : -1;
  });
  // While /slow holds a worker, other clients are answered by the other one.
  for (int i = 0; i < 5; ++i) {
    httplib::Client c("127.0.0.1", server->port());
    auto res = c.Get("/fast");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->body, "/fast");
  }
  EXPECT_EQ(slow_status.load(), 0);
  gate.Open();
  slow.join();
  EXPECT_EQ(slow_status.load(), 200);
}

TEST(HttpWorkers, BodiesReachTheHandlerAndPipelinedPostsAreAnsweredInOrder) {
  HttpServerOptions o;
  o.workers = 4;
  auto server = StartOrDie(o, [](const HttpRequest& req) {
    HttpResponse res;
    res.body = "[" + req.body + "]";
    return res;
  });
  ASSERT_TRUE(server);
  const int fd = Connect(server->port());
  std::string many;
  for (int i = 0; i < 50; ++i) {
    const std::string body = "body-" + std::to_string(i);
    many += "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) +
            (i == 49 ? "\r\nConnection: close" : "") + "\r\n\r\n" + body;
  }
  SendAll(fd, many);
  bool closed = false;
  const std::string got = ReadUntilClosed(fd, milliseconds(10000), &closed);
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_EQ(CountOf(got, "HTTP/1.1 200 OK\r\n"), 50u);
  size_t at = 0;
  for (int i = 0; i < 50; ++i) {
    const size_t next = got.find("[body-" + std::to_string(i) + "]", at);
    ASSERT_NE(next, std::string::npos) << "answer " << i << " missing or out of order";
    at = next;
  }
}

HttpResponse Events(int count, std::atomic<int>* written = nullptr,
                    std::atomic<bool>* saw_false = nullptr, milliseconds pause = milliseconds(0)) {
  HttpResponse res;
  res.content_type = "text/event-stream";
  res.headers.emplace_back("Cache-Control", "no-cache");
  res.stream = [=](HttpStreamSink& sink) {
    for (int i = 0; count < 0 || i < count; ++i) {
      if (!sink.Write("data: " + std::to_string(i) + "\n\n")) {
        if (saw_false != nullptr) *saw_false = true;
        return;
      }
      if (written != nullptr) ++*written;
      if (pause.count() > 0) std::this_thread::sleep_for(pause);
    }
  };
  return res;
}

TEST(HttpWorkers, AStreamIsSentChunkedAndAnIndependentClientReadsEveryEvent) {
  HttpServerOptions o;
  o.workers = 2;
  auto server = StartOrDie(o, [](const HttpRequest&) { return Events(200); });
  ASSERT_TRUE(server);
  std::string expected;
  for (int i = 0; i < 200; ++i) expected += "data: " + std::to_string(i) + "\n\n";
  httplib::Client c("127.0.0.1", server->port());
  std::string body;
  auto res = c.Get("/events", [&](const char* data, size_t n) {
    body.append(data, n);
    return true;
  });
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Transfer-Encoding"), "chunked");
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  EXPECT_EQ(body, expected);
  // The connection stays usable: a second stream on the same client.
  body.clear();
  res = c.Get("/events", [&](const char* data, size_t n) {
    body.append(data, n);
    return true;
  });
  ASSERT_TRUE(res);
  EXPECT_EQ(body, expected);
  // HTTP/1.0 has no chunked coding: the body runs until the server closes.
  const int fd = Connect(server->port());
  SendAll(fd, "GET /events HTTP/1.0\r\n\r\n");
  bool closed = false;
  const std::string raw = ReadUntilClosed(fd, milliseconds(5000), &closed);
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_NE(raw.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(raw.find("Transfer-Encoding"), std::string::npos);
  EXPECT_EQ(raw.substr(raw.find("\r\n\r\n") + 4), expected);
}

TEST(HttpWorkers, AClientThatLeavesMidStreamStopsTheProducer) {
  HttpServerOptions o;
  o.workers = 2;
  std::atomic<int> written{0};
  std::atomic<bool> saw_false{false};
  auto server = StartOrDie(
      o, [&](const HttpRequest&) { return Events(-1, &written, &saw_false, milliseconds(5)); });
  ASSERT_TRUE(server);
  const int fd = Connect(server->port());
  SendAll(fd, "GET /events HTTP/1.1\r\nHost: t\r\n\r\n");
  char buf[4096];
  ASSERT_GT(::recv(fd, buf, sizeof(buf), 0), 0);
  ::close(fd);
  EXPECT_TRUE(WaitFor([&] { return saw_false.load(); }));
  EXPECT_TRUE(WaitFor([&] { return server->stats().streams_cut == 1; }));
}

TEST(HttpWorkers, AStreamNobodyReadsIsClosedByTheWriteDeadlineWithBoundedOutput) {
  HttpServerOptions o;
  o.workers = 1;
  o.write_timeout = milliseconds(300);
  o.max_output_bytes = 64 * 1024;
  std::atomic<int> written{0};
  std::atomic<bool> saw_false{false};
  auto server = StartOrDie(o, [&](const HttpRequest&) { return Events(-1, &written, &saw_false); });
  ASSERT_TRUE(server);
  const int fd = Connect(server->port());
  int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  SendAll(fd, "GET /events HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_TRUE(WaitFor([&] { return saw_false.load(); }));
  // Each event is about 12 bytes: the producer was held at the output cap plus what the
  // kernel's socket buffers took, not let run on.
  EXPECT_LT(written.load() * 12, 16 * 1024 * 1024);
  EXPECT_GE(server->stats().timed_out, 1u);
  ::close(fd);
}

TEST(HttpWorkers, StopEndsRunningStreams) {
  HttpServerOptions o;
  o.workers = 2;
  std::atomic<bool> saw_false{false};
  auto server = StartOrDie(
      o, [&](const HttpRequest&) { return Events(-1, nullptr, &saw_false, milliseconds(5)); });
  ASSERT_TRUE(server);
  const int fd = Connect(server->port());
  SendAll(fd, "GET /events HTTP/1.1\r\nHost: t\r\n\r\n");
  char buf[4096];
  ASSERT_GT(::recv(fd, buf, sizeof(buf), 0), 0);
  const auto t0 = Clock::now();
  server->Stop();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(3));
  EXPECT_TRUE(saw_false.load());
  ::close(fd);
}

// in_flight is what a graceful shutdown waits on: a response counts from its request reaching a
// worker until its last byte is with the kernel, not only while its producer runs.
TEST(HttpWorkers, InFlightCountsAResponseUntilItsLastByteLeaves) {
  Gate gate;
  std::atomic<bool> produced{false};
  HttpServerOptions o;
  o.workers = 1;
  o.max_output_bytes = 32 * 1024 * 1024;  // the whole stream fits: its producer ends at once
  o.write_timeout = std::chrono::seconds(30);
  const std::string chunk(256 * 1024, 'x');
  constexpr int kChunks = 64;  // 16 MiB: more than the sockets' buffers hold
  auto server = StartOrDie(o, [&](const HttpRequest&) {
    gate.Wait();
    HttpResponse res;
    res.stream = [&](HttpStreamSink& sink) {
      for (int i = 0; i < kChunks; ++i) {
        if (!sink.Write(chunk)) return;
      }
      produced = true;
    };
    return res;
  });
  ASSERT_TRUE(server);
  const int idle = Connect(server->port());  // open, no request: not in flight
  const int fd = abuse::ConnectWithReceiveBuffer(server->port(), 64 * 1024);
  ASSERT_GE(fd, 0);
  SendAll(fd, "GET /big HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_TRUE(WaitFor([&] { return server->stats().in_flight == 1; }));  // with the worker
  gate.Open();
  ASSERT_TRUE(WaitFor([&] { return produced.load(); }));
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(server->stats().in_flight, 1u);  // produced, but not sent: the client reads nothing
  std::string got;
  char buf[65536];
  const auto end = Clock::now() + std::chrono::seconds(10);
  while (got.find("\r\n0\r\n\r\n") == std::string::npos && Clock::now() < end) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_GT(got.size(), kChunks * chunk.size());  // every chunk, with its framing
  EXPECT_TRUE(WaitFor([&] { return server->stats().in_flight == 0; }));
  ::close(fd);
  ::close(idle);
}

// A handler runs only while its response is counted in flight: a graceful shutdown that waits
// for the count to reach 0 once the handler has ended (KvServer::Drain) must not read a count
// published before the loop saw the request. KvServer.ADrainPastItsTimeoutCancelsAndSaysSo
// failed once in CI that way: the stream's client read a connection closed under its response.
TEST(HttpWorkers, AHandlerRunsOnlyWhileItsResponseIsCounted) {
  std::atomic<HttpServer*> self{nullptr};
  std::atomic<uint64_t> least{~uint64_t{0}};
  std::atomic<int> handled{0};
  HttpServerOptions o;
  o.workers = 2;
  auto server = StartOrDie(o, [&](const HttpRequest&) {
    const uint64_t n = self.load()->stats().in_flight;
    uint64_t seen = least.load();
    while (n < seen && !least.compare_exchange_weak(seen, n)) {
    }
    ++handled;
    return HttpResponse{};
  });
  ASSERT_TRUE(server);
  self = server.get();
  httplib::Client client("127.0.0.1", server->port());
  for (int i = 0; i < 300; ++i) {
    auto r = client.Get("/x");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
  }
  EXPECT_EQ(handled.load(), 300);
  EXPECT_GE(least.load(), 1u);
}

TEST(HttpWorkers, HealthzAndMetricsAreServedByTheServer) {
  std::atomic<bool> draining{false};
  HttpServerOptions o;
  o.workers = 1;
  o.metrics_prefix = "seedance_test";
  o.health = [&]() -> base::Status {
    if (draining) return base::UnavailableError("draining");
    return base::OkStatus();
  };
  o.metrics = [] { return std::string("# TYPE app_up gauge\napp_up 1\n"); };
  auto server = StartOrDie(o, [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_TRUE(server);
  httplib::Client c("127.0.0.1", server->port());
  auto res = c.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "ok\n");
  draining = true;
  res = c.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->body, "draining\n");
  res = c.Post("/healthz", "", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "GET, HEAD");
  res = c.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body.rfind("# TYPE app_up gauge\napp_up 1\n", 0), 0u);
  EXPECT_NE(res->body.find("seedance_test_http_responses_total{code=\"200\"} 1\n"),
            std::string::npos);
  EXPECT_NE(res->body.find("seedance_test_http_responses_total{code=\"503\"} 1\n"),
            std::string::npos);
  EXPECT_NE(res->body.find("seedance_test_http_responses_total{code=\"405\"} 1\n"),
            std::string::npos);
  EXPECT_NE(res->body.find("seedance_test_http_request_duration_seconds_count 3\n"),
            std::string::npos);
  EXPECT_NE(res->body.find("seedance_test_http_connections_open 1\n"), std::string::npos);
}

TEST(HttpWorkers, AChunkedRequestBodyAndAStreamWithoutWorkersAreRefused) {
  auto server = StartOrDie(HttpServerOptions{}, [](const HttpRequest&) { return Events(3); });
  ASSERT_TRUE(server);
  int fd = Connect(server->port());
  SendAll(fd,
          "POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
          "ffffffff\r\n" +
              std::string(10000, 'a'));
  std::string got = ReadUntilClosed(fd, milliseconds(3000));
  ::close(fd);
  EXPECT_EQ(got.substr(0, 12), "HTTP/1.1 501");
  fd = Connect(server->port());
  SendAll(fd, "GET /events HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  got = ReadUntilClosed(fd, milliseconds(3000));
  ::close(fd);
  EXPECT_EQ(got.substr(0, 12), "HTTP/1.1 500");
  HttpServerOptions bad;
  bad.workers = -1;
  auto refused = HttpServer::Start(bad, [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().where(), "workers");
}

TEST(HttpWorkers, TheAbuseChecksPassWithAndWithoutWorkers) {
  for (int workers : {0, 4}) {
    HttpServerOptions o;
    o.workers = workers;
    o.request_timeout = milliseconds(300);
    o.max_connections = 256;
    auto server = StartOrDie(o, [](const HttpRequest&) {
      HttpResponse res;
      res.body = "ok\n";
      return res;
    });
    ASSERT_TRUE(server);
    const int port = server->port();
    EXPECT_TRUE(abuse::Slowloris(port, "/x", o.request_timeout).ok()) << workers;
    EXPECT_TRUE(abuse::IdleSockets(port, "/x", 50, o.request_timeout).ok()) << workers;
    const base::Status huge = abuse::HugeHeaders(port, "/x");
    EXPECT_TRUE(huge.ok()) << huge.ToString();
    const base::Status piped = abuse::Pipelining(port, "/x", 500);
    EXPECT_TRUE(piped.ok()) << piped.ToString();
    const base::Status many = abuse::ManyConnections(port, "/x", 1000);
    EXPECT_TRUE(many.ok()) << many.ToString();
  }
}

}  // namespace
}  // namespace seedance::net
