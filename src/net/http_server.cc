#include "seedance/net/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "seedance/base/env.h"
#include "seedance/net/router.h"
#include "src/net/http_response.h"
#include "src/net/http_workers.h"

namespace seedance::net {

namespace {

using internal::Completion;
using internal::Job;
using internal::StreamState;

constexpr size_t kReadChunk = size_t{16} * 1024;
constexpr int64_t kLingerNanos = 500'000'000;  // drain time after an error response
constexpr int64_t kNever = INT64_MAX;

int64_t Nanos(std::chrono::milliseconds ms) { return static_cast<int64_t>(ms.count()) * 1'000'000; }

// One client connection. Phases: kReading (waiting for or inside a request; output may be
// queued from earlier pipelined requests), kLingering (an error was answered: write side shut
// down, input discarded until EOF or the linger deadline).
struct Conn {
  enum class Phase { kReading, kLingering };
  int fd = -1;
  uint64_t serial = 0;
  Phase phase = Phase::kReading;
  std::string in;
  std::optional<HttpRequestHead> head;  // parsed; its body is still arriving
  std::string out;
  size_t out_sent = 0;
  bool close_after_write = false;       // the last queued response ends the connection
  bool refused = false;                 // that response is an error: linger before closing
  bool peer_closed = false;             // the client sent EOF; answer what is here, then close
  bool busy = false;                    // a request is with a worker (or its stream is running)
  bool peer_loopback = false;           // accepted from 127.0.0.0/8 or ::1
  std::shared_ptr<StreamState> stream;  // the streamed response in flight
  bool keep_alive_after_stream = false;
  bool request_started = false;  // bytes of a request not yet complete are in `in`
  int64_t deadline = 0;          // request, idle or linger deadline
  int64_t write_deadline = 0;    // valid while output is queued
  int64_t waiting_since = 0;     // when the current wait for a request began (eviction order)
  uint32_t events = 0;           // the epoll interest set now registered
  size_t pending() const { return out.size() - out_sent; }
};

bool IsLoopback(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (a.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return in6->sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

bool IsGet(const HttpRequestHead& h) { return h.method == "GET" || h.method == "HEAD"; }

}  // namespace

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, HttpHandler handler)
      : options_(std::move(options)), handler_(std::move(handler)) {
    stats_.seconds_cumulative.assign(std::size(kHttpSecondsBounds) + 1, 0);
  }

  ~Impl() {
    Stop();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
  }

  base::Status Start() {
    if (options_.workers < 0) {
      return base::InvalidArgumentError(
          "expected 0 or more, got " + std::to_string(options_.workers), "workers");
    }
    if (auto s = Listen(); !s.ok()) return s;
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd_ < 0 || wake_fd_ < 0) {
      return base::InternalError(std::string("epoll/eventfd: ") + std::strerror(errno));
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listen_fd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
    ev.data.fd = wake_fd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
    if (options_.workers > 0) {
      pool_ = std::make_unique<internal::WorkerPool>(
          options_.workers, handler_, options_.max_output_bytes,
          [this](Completion c) {
            {
              std::lock_guard<std::mutex> lock(done_mu_);
              done_.push_back(std::move(c));
            }
            Wake();
          },
          [this] { Wake(); });
    }
    thread_ = std::thread([this] { Loop(); });
    return base::OkStatus();
  }

  void Stop() {
    if (stopping_.exchange(true)) {
      if (thread_.joinable()) thread_.join();
      return;
    }
    Wake();
    if (thread_.joinable()) thread_.join();
    // Streams first, so their producers stop writing; then the workers (a handler still in
    // progress is waited for); then the sockets.
    for (auto& [fd, conn] : conns_) CloseStream(*conn);
    if (pool_) pool_->Stop();
    for (auto& [fd, conn] : conns_) ::close(fd);
    conns_.clear();
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.open = 0;
    stats_.in_flight = 0;
  }

  int port() const { return port_; }

  HttpServerStats stats() const {
    std::lock_guard<std::mutex> lock(stats_mu_);
    return stats_;
  }

 private:
  base::Status Listen() {
    const std::string where = "listen";
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(options_.port);
    if (const int rc = ::getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &found);
        rc != 0) {
      return base::InvalidArgumentError(
          "cannot resolve '" + options_.host + "': " + ::gai_strerror(rc), where);
    }
    std::string why = "no address";
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) continue;
      // SO_REUSEADDR only, not SO_REUSEPORT: a second server on a port in use must fail.
      int yes = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
        sockaddr_storage bound{};
        socklen_t len = sizeof(bound);
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
        port_ = bound.ss_family == AF_INET6
                    ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                    : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
        listen_fd_ = fd;
        break;
      }
      why = std::strerror(errno);
      ::close(fd);
    }
    ::freeaddrinfo(found);
    if (listen_fd_ < 0) {
      return base::UnavailableError("cannot listen on " + options_.host + ":" + port + ": " + why,
                                    where);
    }
    return base::OkStatus();
  }

  static int64_t Now() { return base::Env::Default()->NowMonotonicNanos(); }

  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  }

  void Loop() {
    std::vector<epoll_event> events(64);
    while (!stopping_.load()) {
      const int timeout_ms = NextTimeoutMs();
      const int n =
          ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout_ms);
      if (n < 0 && errno != EINTR) break;
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_fd_) {
          uint64_t count = 0;
          [[maybe_unused]] const ssize_t r = ::read(wake_fd_, &count, sizeof(count));
          if (stopping_.load()) return;
          TakeCompletions();
          continue;
        }
        if (fd == listen_fd_) {
          AcceptAll();
          continue;
        }
        auto it = conns_.find(fd);
        if (it == conns_.end()) continue;
        Conn& c = *it->second;
        bool alive = true;
        const uint32_t got = events[i].events;
        if ((got & EPOLLOUT) != 0) alive = Flush(c);
        // Read only while reading is wanted: a hang-up under back-pressure is found by Flush,
        // and one with nothing to send or read is the end of the connection.
        if (alive && (c.events & EPOLLIN) != 0 && (got & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
          alive = ReadFrom(c);
        } else if (alive && (got & (EPOLLHUP | EPOLLERR)) != 0 && c.pending() == 0) {
          alive = false;
        }
        if (alive) alive = Progress(c);
        if (!alive) Close(fd);
      }
      ExpireDeadlines();
      PublishInFlight();
    }
  }

  // Runs every round of events, and as a request goes to an idle server's worker: the stats
  // lock is taken only when the count changed.
  void PublishInFlight() {
    uint64_t n = 0;
    for (const auto& [fd, c] : conns_) n += c->busy || c->stream || c->pending() > 0 ? 1 : 0;
    if (n == published_in_flight_) return;
    published_in_flight_ = n;
    Count([n](HttpServerStats& s) { s.in_flight = n; });
  }

  // Applies the workers' answers, and moves the streams' new bytes to their connections.
  void TakeCompletions() {
    std::vector<Completion> done;
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      done.swap(done_);
    }
    for (Completion& d : done) {
      auto it = conns_.find(d.fd);
      if (it == conns_.end() || it->second->serial != d.serial) {
        if (d.stream) {  // the client left before its answer was ready
          std::lock_guard<std::mutex> lock(d.stream->mu);
          d.stream->closed = true;
          d.stream->room.notify_all();
        }
        continue;
      }
      Conn& c = *it->second;
      Append(c, d.bytes);
      CountResponse(d.status, d.started_ns);
      if (d.stream) {
        c.stream = std::move(d.stream);
        c.keep_alive_after_stream = d.keep_alive;
      } else {
        EndRequest(c, d.keep_alive);
      }
      if (!Progress(c)) Close(d.fd);
    }
    std::vector<int> streaming;
    for (const auto& [fd, c] : conns_) {
      if (c->stream) streaming.push_back(fd);
    }
    for (int fd : streaming) {
      if (!Progress(*conns_.at(fd))) Close(fd);
    }
  }

  // Milliseconds until the earliest deadline (at most 1 s, at least 1 ms while one is pending).
  int NextTimeoutMs() const {
    int64_t earliest = Now() + 1'000'000'000;
    for (const auto& [fd, c] : conns_) {
      earliest = std::min(earliest, c->deadline);
      if (c->pending() > 0) earliest = std::min(earliest, c->write_deadline);
    }
    const int64_t wait = earliest - Now();
    return wait <= 0 ? 0 : static_cast<int>(std::max<int64_t>(1, (wait + 999'999) / 1'000'000));
  }

  void ExpireDeadlines() {
    const int64_t now = Now();
    std::vector<int> expired;
    for (const auto& [fd, c] : conns_) {
      const bool write_late = c->pending() > 0 && now >= c->write_deadline;
      const bool wait_late = c->pending() == 0 && now >= c->deadline;
      if (write_late || wait_late) expired.push_back(fd);
    }
    for (int fd : expired) {
      Count([](HttpServerStats& s) { ++s.timed_out; });  // before the client can see the close
      Close(fd);
    }
  }

  void AcceptAll() {
    while (true) {
      sockaddr_storage peer{};
      socklen_t peer_len = sizeof(peer);
      const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_len,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or a transient error: the loop comes back
      if (conns_.size() >= options_.max_connections && !EvictOne()) {
        ::close(fd);
        Count([](HttpServerStats& s) { ++s.rejected; });
        continue;
      }
      // Headers and body leave in one write, but keep-alive responses would still wait for the
      // client's delayed ACK under Nagle's algorithm.
      int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      c->peer_loopback = IsLoopback(peer);
      c->serial = ++serial_;
      const int64_t now = Now();
      c->deadline = now + Nanos(options_.request_timeout);
      c->waiting_since = now;
      Conn& ref = *c;
      conns_.emplace(fd, std::move(c));
      Watch(ref, EPOLLIN, EPOLL_CTL_ADD);
      Count([](HttpServerStats& s) {
        ++s.accepted;
        ++s.open;
      });
    }
  }

  // Closes the connection that has waited longest for a request, if any waits with no output.
  bool EvictOne() {
    int victim = -1;
    int64_t oldest = 0;
    for (const auto& [fd, c] : conns_) {
      if (c->phase != Conn::Phase::kReading || c->pending() > 0 || c->busy || c->head) continue;
      if (victim < 0 || c->waiting_since < oldest) {
        victim = fd;
        oldest = c->waiting_since;
      }
    }
    if (victim < 0) return false;
    Count([](HttpServerStats& s) { ++s.evicted; });
    Close(victim);
    return true;
  }

  // Input held while a request is with a worker: enough for one more request.
  size_t InputCap() const { return options_.limits.max_head_bytes + options_.max_body_bytes; }

  // Reads what is there (one chunk). False when the connection is finished.
  bool ReadFrom(Conn& c) {
    char buf[kReadChunk];
    const ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n == 0) {
      // EOF: a client may half-close after its last request and still read the answers; a
      // stream's client that closes has gone away.
      if (c.phase == Conn::Phase::kLingering || c.stream) return false;
      c.peer_closed = true;
      return true;
    }
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (c.phase == Conn::Phase::kLingering || c.close_after_write) return true;  // discarded
    if (!c.request_started && !c.head && c.in.empty()) {
      c.request_started = true;
      if (!c.busy) c.deadline = Now() + Nanos(options_.request_timeout);
    }
    c.in.append(buf, static_cast<size_t>(n));
    return true;
  }

  // After a response is queued: what the connection waits for next.
  void EndRequest(Conn& c, bool keep_alive) {
    c.busy = false;
    if (!keep_alive) c.close_after_write = true;
    const int64_t now = Now();
    // The next request, if part of it is already here, started its clock when it arrived; it
    // gets a whole request_timeout from now, as a worker held it.
    c.request_started = !c.in.empty();
    c.deadline = now + Nanos(c.request_started ? options_.request_timeout : options_.idle_timeout);
    c.waiting_since = now;
  }

  // Moves a stream's new bytes to the output while there is room; ends it when it is done.
  // False when the stream was cut by its producer.
  bool PumpStream(Conn& c) {
    StreamState& st = *c.stream;
    bool done = false;
    {
      std::lock_guard<std::mutex> lock(st.mu);
      if (st.closed) return false;
      if (!st.pending.empty() && c.pending() <= options_.max_output_bytes) {
        Append(c, st.pending);
        st.pending.clear();
        st.room.notify_all();
      }
      done = st.finished && st.pending.empty();
    }
    if (done) {
      c.stream.reset();
      EndRequest(c, c.keep_alive_after_stream);
    }
    return true;
  }

  // Answers (or hands to a worker) every complete request in `in` while output has room.
  void ParseAndDispatch(Conn& c) {
    if (c.phase != Conn::Phase::kReading) return;
    while (!c.busy && !c.close_after_write && c.pending() <= options_.max_output_bytes) {
      if (!c.head) {
        if (c.in.empty()) break;
        HttpParseResult r = ParseRequestHead(c.in, options_.limits);
        if (r.state == HttpParse::kIncomplete) break;
        if (r.state == HttpParse::kError) {
          Refuse(c, r.status, r.reason);
          break;
        }
        if (r.head.content_length > options_.max_body_bytes) {
          Refuse(c, 413,
                 "the request body is larger than this server takes (" +
                     std::to_string(options_.max_body_bytes) + " bytes)");
          break;
        }
        c.in.erase(0, r.head.head_bytes);
        c.head = std::move(r.head);
      }
      if (c.in.size() < c.head->content_length) {
        c.request_started = true;  // the body is on its way; the request deadline runs
        break;
      }
      HttpRequest req;
      req.peer_loopback = c.peer_loopback;
      req.head = std::move(*c.head);
      c.head.reset();
      req.body = c.in.substr(0, req.head.content_length);
      c.in.erase(0, req.head.content_length);
      Dispatch(c, std::move(req));
    }
  }

  // Parses and answers every complete request in `in`, then updates the interest set.
  bool Progress(Conn& c) {
    if (c.stream && !PumpStream(c)) return false;
    while (true) {
      ParseAndDispatch(c);
      // Parsing stops while more than max_output_bytes wait; if the socket took them, go on
      // with the requests already here (no event would come for them).
      const bool held = c.phase == Conn::Phase::kReading && !c.busy && !c.close_after_write &&
                        c.pending() > options_.max_output_bytes;
      if (c.pending() > 0 && !Flush(c)) return false;
      if (c.stream && !PumpStream(c)) return false;  // room was made: take more
      if (!held || c.pending() > options_.max_output_bytes) break;
    }
    if (c.pending() == 0 && !c.busy && c.phase == Conn::Phase::kReading &&
        (c.close_after_write || c.peer_closed)) {
      if (!c.refused || c.peer_closed) return false;  // done
      // After an error, shut the write side and drain, so the client reads the response
      // instead of a reset caused by unread input.
      ::shutdown(c.fd, SHUT_WR);
      c.phase = Conn::Phase::kLingering;
      c.deadline = Now() + kLingerNanos;
    }
    uint32_t want = 0;
    if (c.pending() > 0) want |= EPOLLOUT;
    const bool reading =
        c.phase == Conn::Phase::kLingering ||
        (!c.close_after_write && !c.peer_closed && c.pending() <= options_.max_output_bytes &&
         (!c.busy || c.in.size() < InputCap()));
    if (reading) want |= EPOLLIN;
    Watch(c, want);
    return true;
  }

  // One complete request: answered here (the built-in routes, or the handler without workers),
  // or handed to a worker.
  void Dispatch(Conn& c, HttpRequest req) {
    const int64_t started = Now();
    if (std::optional<HttpResponse> res = BuiltIn(req.head)) {
      Append(c, internal::RenderResponse(req.head, *res));
      CountResponse(res->status, started);
      EndRequest(c, req.head.keep_alive);
      return;
    }
    if (pool_) {
      c.busy = true;
      c.deadline = kNever;  // the handler's time is not the client's to keep
      // Counted in flight before a worker can run the handler: a graceful shutdown that sees
      // the handler end (KvServer::Drain) must not read the count of a round that had not yet
      // seen the request, and stop the server with the response unsent. Only a published 0 can
      // hide it (the round's end recounts exactly), so a busy server does not recount here.
      if (published_in_flight_ == 0) PublishInFlight();
      Job job;
      job.fd = c.fd;
      job.serial = c.serial;
      job.started_ns = started;
      job.request = std::move(req);
      pool_->Submit(std::move(job));
      return;
    }
    HttpResponse res = handler_(req);
    if (res.stream) {
      res = ErrorPage(500, "a streamed response needs worker threads");
    }
    Append(c, internal::RenderResponse(req.head, res));
    CountResponse(res.status, started);
    EndRequest(c, req.head.keep_alive);
  }

  HttpResponse ErrorPage(int status, const std::string& message) const {
    HttpResponse res = options_.error_page ? options_.error_page(status, message)
                                           : PlainErrorPage(status, message);
    res.status = status;
    res.stream = nullptr;
    return res;
  }

  HttpResponse NotAllowed(const HttpRequestHead& head) const {
    HttpResponse res =
        ErrorPage(405, head.method + " is not allowed on " + head.path + "; allowed: GET, HEAD");
    res.headers.emplace_back("Allow", "GET, HEAD");
    return res;
  }

  std::optional<HttpResponse> BuiltIn(const HttpRequestHead& head) {
    if (head.path == "/healthz") {
      if (!IsGet(head)) return NotAllowed(head);
      HttpResponse res;
      const base::Status health = options_.health ? options_.health() : base::OkStatus();
      res.status = health.ok() ? 200 : 503;
      res.body = health.ok() ? "ok\n" : std::string(health.message()) + "\n";
      return res;
    }
    if (head.path == "/metrics" && options_.metrics) {
      if (!IsGet(head)) return NotAllowed(head);
      HttpResponse res;
      res.content_type = "text/plain; version=0.0.4; charset=utf-8";
      res.body = options_.metrics();
      res.body += RenderHttpMetrics(stats(), options_.metrics_prefix);
      return res;
    }
    return std::nullopt;
  }

  void Refuse(Conn& c, int status, const std::string& reason) {
    HttpRequestHead head;  // HTTP/1.1, for the status line
    const HttpResponse res = ErrorPage(status, reason);
    head.keep_alive = false;
    Append(c, internal::RenderResponse(head, res));
    CountResponse(status, Now());
    c.in.clear();
    c.head.reset();
    c.close_after_write = true;
    c.refused = true;
    Count([](HttpServerStats& s) { ++s.refused; });
  }

  void Append(Conn& c, std::string_view bytes) {
    if (c.pending() == 0) {
      c.out.clear();
      c.out_sent = 0;
      c.write_deadline = Now() + Nanos(options_.write_timeout);
    }
    c.out += bytes;
  }

  void CountResponse(int status, int64_t started_ns) {
    const double seconds = static_cast<double>(Now() - started_ns) * 1e-9;
    Count([&](HttpServerStats& s) {
      ++s.responses;
      ++s.by_code[status];
      for (size_t b = 0; b < std::size(kHttpSecondsBounds); ++b) {
        if (seconds <= kHttpSecondsBounds[b]) ++s.seconds_cumulative[b];
      }
      ++s.seconds_cumulative.back();
      s.seconds_sum += seconds;
    });
  }

  // Sends what the socket takes. False on a write error (the peer is gone).
  bool Flush(Conn& c) {
    while (c.pending() > 0) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.out_sent, c.pending(), MSG_NOSIGNAL);
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      c.out_sent += static_cast<size_t>(n);
      // The deadline is on progress: a client that reads keeps its connection, however much
      // it pipelined; one that stops reading loses it write_timeout later.
      c.write_deadline = Now() + Nanos(options_.write_timeout);
    }
    c.out.clear();
    c.out_sent = 0;
    return true;
  }

  void Watch(Conn& c, uint32_t want, int op = EPOLL_CTL_MOD) {
    if (op == EPOLL_CTL_MOD && want == c.events) return;
    epoll_event ev{};
    ev.events = want;
    ev.data.fd = c.fd;
    ::epoll_ctl(epoll_fd_, op, c.fd, &ev);
    c.events = want;
  }

  // Tells a stream's producer that its client is gone.
  void CloseStream(Conn& c) {
    if (!c.stream) return;
    bool cut = false;
    {
      std::lock_guard<std::mutex> lock(c.stream->mu);
      cut = !c.stream->finished || !c.stream->pending.empty();
      c.stream->closed = true;
      c.stream->room.notify_all();
    }
    c.stream.reset();
    if (cut) Count([](HttpServerStats& s) { ++s.streams_cut; });
  }

  void Close(int fd) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    CloseStream(*it->second);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    conns_.erase(it);
    Count([](HttpServerStats& s) { --s.open; });
  }

  template <typename F>
  void Count(F f) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    f(stats_);
  }

  HttpServerOptions options_;
  HttpHandler handler_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int port_ = -1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;  // loop thread only
  uint64_t serial_ = 0;                                   // loop thread only
  uint64_t published_in_flight_ = 0;                      // loop thread only
  std::unique_ptr<internal::WorkerPool> pool_;
  std::mutex done_mu_;
  std::vector<Completion> done_;  // answers from the workers, for the loop
  mutable std::mutex stats_mu_;
  HttpServerStats stats_;
};

base::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerOptions options,
                                                              HttpHandler handler) {
  auto impl = std::make_unique<Impl>(std::move(options), std::move(handler));
  if (auto s = impl->Start(); !s.ok()) return s;
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() { Stop(); }
int HttpServer::port() const { return impl_->port(); }
void HttpServer::Stop() { impl_->Stop(); }
HttpServerStats HttpServer::stats() const { return impl_->stats(); }

}  // namespace seedance::net
