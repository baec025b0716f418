#include "seedance/probe/http_server.h"

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
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "seedance/base/env.h"

namespace seedance::probe {

const char* HttpReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

namespace {

constexpr size_t kReadChunk = size_t{16} * 1024;
constexpr int64_t kLingerNanos = 500'000'000;  // drain time after an error response

int64_t Nanos(std::chrono::milliseconds ms) { return static_cast<int64_t>(ms.count()) * 1'000'000; }

// One client connection. Phases: kReading (waiting for or inside a request; output may be
// queued from earlier pipelined requests), kLingering (an error was answered: write side shut
// down, input discarded until EOF or the linger deadline).
struct Conn {
  enum class Phase { kReading, kLingering };
  int fd = -1;
  Phase phase = Phase::kReading;
  std::string in;
  std::string out;
  size_t out_sent = 0;
  bool close_after_write = false;  // the last queued response ends the connection
  bool refused = false;            // that response is an error: linger before closing
  bool peer_closed = false;        // the client sent EOF; answer what is here, then close
  uint64_t discard = 0;            // body bytes still to skip before `held` is queued
  std::string held;                // a response waiting for its request's body
  bool held_closes = false;        // `held` ends the connection
  bool request_started = false;    // bytes of a request not yet complete are in `in`
  int64_t deadline = 0;            // request, idle or linger deadline
  int64_t write_deadline = 0;      // valid while output is queued
  int64_t waiting_since = 0;       // when the current wait for a request began (eviction order)
  uint32_t events = 0;             // the epoll interest set now registered
  size_t pending() const { return out.size() - out_sent; }
};

}  // namespace

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, HttpHandler handler)
      : options_(std::move(options)), handler_(std::move(handler)) {}

  ~Impl() {
    Stop();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
  }

  base::Status Start() {
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
    thread_ = std::thread([this] { Loop(); });
    return base::OkStatus();
  }

  void Stop() {
    if (stopping_.exchange(true)) {
      if (thread_.joinable()) thread_.join();
      return;
    }
    if (wake_fd_ >= 0) {
      const uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
    }
    if (thread_.joinable()) thread_.join();
    for (auto& [fd, conn] : conns_) ::close(fd);
    conns_.clear();
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.open = 0;
  }

  int port() const { return port_; }

  HttpServerStats stats() const {
    std::lock_guard<std::mutex> lock(stats_mu_);
    return stats_;
  }

 private:
  base::Status Listen() {
    const std::string where = "--listen";
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

  void Loop() {
    std::vector<epoll_event> events(64);
    while (!stopping_.load()) {
      const int timeout_ms = NextTimeoutMs();
      const int n =
          ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout_ms);
      if (n < 0 && errno != EINTR) break;
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_fd_) return;
        if (fd == listen_fd_) {
          AcceptAll();
          continue;
        }
        auto it = conns_.find(fd);
        if (it == conns_.end()) continue;
        Conn& c = *it->second;
        bool alive = true;
        if ((events[i].events & EPOLLOUT) != 0) alive = Flush(c);
        // Read only while reading is wanted: a hang-up under back-pressure is found by Flush.
        if (alive && (c.events & EPOLLIN) != 0 &&
            (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
          alive = ReadFrom(c);
        }
        if (alive) alive = Progress(c);
        if (!alive) Close(fd);
      }
      ExpireDeadlines();
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
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
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
      if (c->phase != Conn::Phase::kReading || c->pending() > 0 || c->discard > 0) continue;
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

  // Reads what is there (one chunk). False when the connection is finished.
  bool ReadFrom(Conn& c) {
    char buf[kReadChunk];
    const ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n == 0) {
      // EOF: a client may half-close after its last request and still read the answers.
      if (c.phase == Conn::Phase::kLingering) return false;
      c.peer_closed = true;
      return true;
    }
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (c.phase == Conn::Phase::kLingering || c.close_after_write) return true;  // discarded
    if (!c.request_started && c.discard == 0 && c.in.empty()) {
      c.request_started = true;
      c.deadline = Now() + Nanos(options_.request_timeout);
    }
    c.in.append(buf, static_cast<size_t>(n));
    return true;
  }

  // Parses and answers every complete request in `in`, then updates the interest set.
  bool Progress(Conn& c) {
    if (c.phase == Conn::Phase::kReading) {
      while (!c.close_after_write && c.pending() <= options_.max_output_bytes) {
        if (c.discard > 0) {
          const size_t take = static_cast<size_t>(std::min<uint64_t>(c.discard, c.in.size()));
          c.in.erase(0, take);
          c.discard -= take;
          if (c.discard > 0) break;
          Queue(c, c.held);
          c.held.clear();
          c.close_after_write = c.held_closes;
          continue;
        }
        if (c.in.empty()) break;
        HttpParseResult r = ParseRequestHead(c.in, options_.limits);
        if (r.state == HttpParse::kIncomplete) break;
        if (r.state == HttpParse::kError) {
          Refuse(c, r.status, r.reason);
          break;
        }
        c.in.erase(0, r.head.head_bytes);
        if (r.head.content_length > options_.max_body_bytes) {
          Refuse(c, 413, "request body over " + std::to_string(options_.max_body_bytes) + " bytes");
          break;
        }
        std::string response = Render(r.head, handler_(r.head));
        const int64_t now = Now();
        // The next request, if part of it is already here, starts its clock now.
        c.request_started = !c.in.empty();
        c.deadline =
            now + Nanos(c.request_started ? options_.request_timeout : options_.idle_timeout);
        c.waiting_since = now;
        if (r.head.content_length > 0) {
          c.discard = r.head.content_length;
          c.held = std::move(response);
          c.held_closes = !r.head.keep_alive;
          c.deadline = now + Nanos(options_.request_timeout);
          c.request_started = true;
        } else {
          Queue(c, response);
          c.close_after_write = !r.head.keep_alive;
        }
      }
    }
    if (c.pending() > 0 && !Flush(c)) return false;
    if (c.pending() == 0 && c.phase == Conn::Phase::kReading &&
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
        (!c.close_after_write && !c.peer_closed && c.pending() <= options_.max_output_bytes);
    if (reading) want |= EPOLLIN;
    Watch(c, want);
    return true;
  }

  void Refuse(Conn& c, int status, const std::string& reason) {
    HttpRequestHead head;  // HTTP/1.1, for the status line
    HttpResponse res;
    res.status = status;
    res.body = std::to_string(status) + " " + HttpReasonPhrase(status) + ": " + reason + "\n";
    head.keep_alive = false;
    Queue(c, Render(head, res));
    c.in.clear();
    c.close_after_write = true;
    c.refused = true;
    Count([](HttpServerStats& s) { ++s.refused; });
  }

  void Queue(Conn& c, const std::string& response) {
    if (c.pending() == 0) {
      c.out.clear();
      c.out_sent = 0;
      c.write_deadline = Now() + Nanos(options_.write_timeout);
    }
    c.out += response;
    Count([](HttpServerStats& s) { ++s.responses; });
  }

  static std::string Render(const HttpRequestHead& req, const HttpResponse& res) {
    std::string s =
        "HTTP/1.1 " + std::to_string(res.status) + " " + HttpReasonPhrase(res.status) + "\r\n";
    s += "Content-Type: " + res.content_type + "\r\n";
    s += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
    for (const auto& [name, value] : res.headers) s += name + ": " + value + "\r\n";
    if (!req.keep_alive) {
      s += "Connection: close\r\n";
    } else if (req.minor_version == 0) {
      s += "Connection: keep-alive\r\n";
    }
    s += "\r\n";
    if (req.method != "HEAD") s += res.body;
    return s;
  }

  // Sends what the socket takes. False on a write error (the peer is gone).
  bool Flush(Conn& c) {
    while (c.pending() > 0) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.out_sent, c.pending(), MSG_NOSIGNAL);
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      c.out_sent += static_cast<size_t>(n);
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

  void Close(int fd) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
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

}  // namespace seedance::probe
