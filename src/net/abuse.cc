#include "seedance/net/abuse.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "seedance/base/env.h"

namespace seedance::net::abuse {
namespace {

int64_t NowMs() { return base::Env::Default()->NowMonotonicNanos() / 1'000'000; }

base::Status Fail(const std::string& what) {
  return base::FailedPreconditionError(what, "abuse check");
}

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

std::string Request(const std::string& path, bool close) {
  return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
         (close ? "Connection: close\r\n" : "") + "\r\n";
}

size_t CountOf(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

int Connect(int port) { return ConnectWithReceiveBuffer(port, 0); }

int ConnectWithReceiveBuffer(int port, int bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (bytes > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, std::string_view data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string ReadUntilClosed(int fd, std::chrono::milliseconds timeout, bool* closed) {
  std::string got;
  const int64_t end = NowMs() + timeout.count();
  if (closed != nullptr) *closed = false;
  while (NowMs() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, end - NowMs()))) <= 0) continue;
    char buf[65536];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      if (closed != nullptr) *closed = true;
      return got;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

base::StatusOr<int> Get(int port, const std::string& path) {
  Socket s(Connect(port));
  if (s.fd() < 0) return Fail("cannot connect to 127.0.0.1:" + std::to_string(port));
  if (!SendAll(s.fd(), Request(path, true))) return Fail("the request could not be sent");
  bool closed = false;
  const std::string got = ReadUntilClosed(s.fd(), std::chrono::milliseconds(10'000), &closed);
  if (got.size() < 12 || got.compare(0, 9, "HTTP/1.1 ") != 0) {
    return Fail("no HTTP response to GET " + path + " (got " + std::to_string(got.size()) +
                " bytes)");
  }
  return (got[9] - '0') * 100 + (got[10] - '0') * 10 + (got[11] - '0');
}

base::Status Slowloris(int port, const std::string& path,
                       std::chrono::milliseconds request_timeout) {
  Socket s(Connect(port));
  if (s.fd() < 0) return Fail("cannot connect");
  const std::string request = Request(path, false);
  const int64_t start = NowMs();
  const int64_t limit = 2 * request_timeout.count() + 2000;
  bool closed = false;
  for (size_t i = 0; !closed && NowMs() - start < limit + 1000; ++i) {
    // The request never completes: its last byte is never sent.
    if (!SendAll(s.fd(), std::string(1, request[i % (request.size() - 1)]))) break;
    ReadUntilClosed(s.fd(), std::chrono::milliseconds(50), &closed);
  }
  const int64_t took = NowMs() - start;
  if (!closed && took >= limit) {
    return Fail("a client sending a byte every 50 ms was still connected after " +
                std::to_string(took) + " ms (request timeout " +
                std::to_string(request_timeout.count()) + " ms)");
  }
  return base::OkStatus();
}

base::Status IdleSockets(int port, const std::string& path, int count,
                         std::chrono::milliseconds request_timeout) {
  std::vector<std::unique_ptr<Socket>> idle;
  for (int i = 0; i < count; ++i) {
    idle.push_back(std::make_unique<Socket>(Connect(port)));
    if (idle.back()->fd() < 0) return Fail("cannot connect idle socket " + std::to_string(i));
  }
  auto status = Get(port, path);
  if (!status.ok())
    return Fail("with idle sockets open: " + std::string(status.status().message()));
  if (*status != 200)
    return Fail("with idle sockets open, GET answered " + std::to_string(*status));
  const int64_t limit = 2 * request_timeout.count() + 2000;
  const int64_t start = NowMs();
  for (const auto& s : idle) {
    bool closed = false;
    ReadUntilClosed(s->fd(),
                    std::chrono::milliseconds(std::max<int64_t>(1, limit - (NowMs() - start))),
                    &closed);
    if (!closed) {
      return Fail("an idle connection was still open after " + std::to_string(NowMs() - start) +
                  " ms (request timeout " + std::to_string(request_timeout.count()) + " ms)");
    }
  }
  return base::OkStatus();
}

base::Status HugeHeaders(int port, const std::string& path) {
  Socket s(Connect(port));
  if (s.fd() < 0) return Fail("cannot connect");
  std::string head = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  while (head.size() < size_t{64} * 1024) head += "X-Filler: " + std::string(100, 'a') + "\r\n";
  head += "\r\n";
  std::thread sender([&] { SendAll(s.fd(), head); });
  bool closed = false;
  const std::string got = ReadUntilClosed(s.fd(), std::chrono::milliseconds(10'000), &closed);
  ::shutdown(s.fd(), SHUT_RDWR);
  sender.join();
  if (got.compare(0, 12, "HTTP/1.1 431") != 0) {
    return Fail("64 KiB of header fields got '" + got.substr(0, 12) + "', expected 431");
  }
  if (!closed) return Fail("the connection stayed open after 431");
  return base::OkStatus();
}

base::Status Pipelining(int port, const std::string& path, int count) {
  Socket s(Connect(port));
  if (s.fd() < 0) return Fail("cannot connect");
  std::string many;
  for (int i = 1; i < count; ++i) many += Request(path, false);
  many += Request(path, true);
  std::thread sender([&] { SendAll(s.fd(), many); });
  bool closed = false;
  const std::string got = ReadUntilClosed(s.fd(), std::chrono::milliseconds(30'000), &closed);
  sender.join();
  const size_t ok = CountOf(got, "HTTP/1.1 200 ");
  if (ok != static_cast<size_t>(count) || CountOf(got, "HTTP/1.1 ") != ok) {
    return Fail(std::to_string(count) + " pipelined GETs got " + std::to_string(ok) +
                " answers of 200 and " + std::to_string(CountOf(got, "HTTP/1.1 ") - ok) +
                " others");
  }
  if (!closed) return Fail("the connection stayed open after Connection: close");
  return base::OkStatus();
}

base::Status ManyConnections(int port, const std::string& path, int count) {
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  // The server may be in this process: room for both ends of every connection.
  const rlim_t want = 2 * static_cast<rlim_t>(count) + 256;
  if (lim.rlim_cur < want && lim.rlim_max >= want) {
    lim.rlim_cur = want;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
  std::vector<std::unique_ptr<Socket>> open;
  for (int i = 0; i < count; ++i) {
    open.push_back(std::make_unique<Socket>(Connect(port)));
    if (open.back()->fd() < 0) {
      return Fail("connection " + std::to_string(i) + " of " + std::to_string(count) +
                  " could not be made (descriptor limit " + std::to_string(lim.rlim_cur) + ")");
    }
  }
  auto status = Get(port, path);
  if (!status.ok()) {
    return Fail("with " + std::to_string(count) +
                " connections open: " + std::string(status.status().message()));
  }
  if (*status != 200) {
    return Fail("with " + std::to_string(count) + " connections open, GET answered " +
                std::to_string(*status));
  }
  return base::OkStatus();
}

}  // namespace seedance::net::abuse
