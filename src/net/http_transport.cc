#include "src/net/http_transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "seedance/base/env.h"

namespace seedance::net::internal {

class TlsContext {
 public:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  ~TlsContext() { SSL_CTX_free(ctx_); }
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  SSL_CTX* get() const { return ctx_; }
  bool verify = true;

 private:
  SSL_CTX* ctx_;
};

namespace {

int64_t TransportNow() { return base::Env::Default()->NowMonotonicNanos(); }

std::string SslErrors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out.empty() ? "no detail from OpenSSL" : out;
}

bool IsIpAddress(const std::string& host) {
  in6_addr a6{};
  in_addr a4{};
  return ::inet_pton(AF_INET, host.c_str(), &a4) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

class PlainTransport : public Transport {
 public:
  explicit PlainTransport(int fd) : Transport(fd) {}
  ~PlainTransport() override { ::close(fd_); }
  PlainTransport(const PlainTransport&) = delete;
  PlainTransport& operator=(const PlainTransport&) = delete;

  base::Status WriteAll(std::string_view data, int64_t deadline_ns) override {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        SEEDANCE_RETURN_IF_ERROR(Wait(POLLOUT, deadline_ns));
        continue;
      }
      return base::UnavailableError(std::string("the connection failed while sending: ") +
                                    std::strerror(errno));
    }
    return base::OkStatus();
  }

  base::StatusOr<size_t> Read(char* buf, size_t size, int64_t deadline_ns) override {
    while (true) {
      const ssize_t n = ::recv(fd_, buf, size, 0);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        SEEDANCE_RETURN_IF_ERROR(Wait(POLLIN, deadline_ns));
        continue;
      }
      return base::UnavailableError(std::string("the connection failed while reading: ") +
                                    std::strerror(errno));
    }
  }

  bool Reusable() override {
    pollfd p{fd_, POLLIN, 0};
    return !shut_ && ::poll(&p, 1, 0) == 0;  // readable now means EOF or bytes nobody asked for
  }
};

class TlsTransport : public Transport {
 public:
  TlsTransport(int fd, SSL* ssl) : Transport(fd), ssl_(ssl) {}
  ~TlsTransport() override {
    SSL_free(ssl_);
    ::close(fd_);
  }
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  // Runs an OpenSSL call until it completes, waiting on the socket for what it wants.
  template <typename F>
  base::StatusOr<int> Drive(F call, int64_t deadline_ns, const char* what) {
    while (true) {
      ERR_clear_error();
      const int rc = call();
      if (rc > 0) return rc;
      const int e = SSL_get_error(ssl_, rc);
      if (e == SSL_ERROR_WANT_READ) {
        SEEDANCE_RETURN_IF_ERROR(Wait(POLLIN, deadline_ns));
      } else if (e == SSL_ERROR_WANT_WRITE) {
        SEEDANCE_RETURN_IF_ERROR(Wait(POLLOUT, deadline_ns));
      } else if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) {
        return 0;  // close_notify, or the peer closed without it: the end of the stream
      } else {
        return base::UnavailableError(std::string("TLS ") + what + " failed: " + SslErrors());
      }
    }
  }

  base::Status Handshake(int64_t deadline_ns) {
    auto rc = Drive([this] { return SSL_connect(ssl_); }, deadline_ns, "handshake");
    if (!rc.ok()) {
      const long verify = SSL_get_verify_result(ssl_);
      if (verify != X509_V_OK) {
        return base::UnavailableError(
            std::string("TLS handshake failed: the server's certificate: ") +
            X509_verify_cert_error_string(verify));
      }
      return rc.status();
    }
    if (*rc == 0)
      return base::UnavailableError("the server closed the connection in the TLS handshake");
    return base::OkStatus();
  }

  base::Status WriteAll(std::string_view data, int64_t deadline_ns) override {
    while (!data.empty()) {
      const int chunk = static_cast<int>(std::min<size_t>(data.size(), 1 << 20));
      SEEDANCE_ASSIGN_OR_RETURN(
          const int n,
          Drive([&] { return SSL_write(ssl_, data.data(), chunk); }, deadline_ns, "write"));
      if (n == 0) return base::UnavailableError("the server closed the connection while sending");
      data.remove_prefix(static_cast<size_t>(n));
    }
    return base::OkStatus();
  }

  base::StatusOr<size_t> Read(char* buf, size_t size, int64_t deadline_ns) override {
    const int chunk = static_cast<int>(std::min<size_t>(size, 1 << 20));
    SEEDANCE_ASSIGN_OR_RETURN(
        const int n, Drive([&] { return SSL_read(ssl_, buf, chunk); }, deadline_ns, "read"));
    return static_cast<size_t>(n);
  }

  bool Reusable() override {
    if (shut_ || SSL_pending(ssl_) > 0) return false;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }

 private:
  SSL* ssl_;
};

}  // namespace

void Transport::Shutdown() {
  shut_ = true;
  ::shutdown(fd_, SHUT_RDWR);
}

base::Status Transport::Wait(short events, int64_t deadline_ns) const {
  while (true) {
    if (shut_) return base::UnavailableError("stopped");
    const int64_t now = TransportNow();
    if (now >= deadline_ns) return base::UnavailableError("timed out");
    // At most a second at a time, so a Shutdown that raced the poll is seen.
    const int64_t wait_ms = std::min<int64_t>((deadline_ns - now + 999'999) / 1'000'000, 1000);
    pollfd p{fd_, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(wait_ms, 1)));
    if (rc > 0) return base::OkStatus();  // ready, or an error the next call reports
    if (rc < 0 && errno != EINTR) {
      return base::UnavailableError(std::string("poll: ") + std::strerror(errno));
    }
  }
}

base::StatusOr<std::shared_ptr<TlsContext>> MakeTlsContext(const TlsSettings& s) {
  SSL_CTX* raw = SSL_CTX_new(TLS_client_method());
  if (raw == nullptr) return base::InternalError("TLS: " + SslErrors());
  auto ctx = std::make_shared<TlsContext>(raw);
  SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
  SSL_CTX_set_mode(raw, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  ctx->verify = s.verify;
  if (s.verify) {
    SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nullptr);
    const int ok = s.ca_file.empty()
                       ? SSL_CTX_set_default_verify_paths(raw)
                       : SSL_CTX_load_verify_locations(raw, s.ca_file.c_str(), nullptr);
    if (ok != 1) {
      return base::InvalidArgumentError("cannot read the CA certificates: " + SslErrors(),
                                        s.ca_file.empty() ? "ca_file" : s.ca_file);
    }
  } else {
    SSL_CTX_set_verify(raw, SSL_VERIFY_NONE, nullptr);
  }
  if (!s.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(raw, s.cert_file.c_str()) != 1) {
      return base::InvalidArgumentError("cannot read the client certificate: " + SslErrors(),
                                        s.cert_file);
    }
    if (SSL_CTX_use_PrivateKey_file(raw, s.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(raw) != 1) {
      return base::InvalidArgumentError(
          "cannot read the client key, or it does not match the certificate: " + SslErrors(),
          s.key_file);
    }
  }
  return ctx;
}

base::StatusOr<std::unique_ptr<Transport>> Dial(const std::string& host, int port,
                                                const std::shared_ptr<TlsContext>& tls,
                                                int64_t deadline_ns) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return base::UnavailableError("cannot resolve '" + host + "': " + ::gai_strerror(rc));
  }
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    const int s = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0) continue;
    if (::connect(s, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      why = std::strerror(errno);
      ::close(s);
      continue;
    }
    // Wait for the connection; its result is SO_ERROR.
    int err = 0;
    while (true) {
      pollfd p{s, POLLOUT, 0};
      const int64_t left = deadline_ns - TransportNow();
      if (left <= 0) {
        err = ETIMEDOUT;
        break;
      }
      const int rc =
          ::poll(&p, 1, static_cast<int>(std::min<int64_t>((left + 999'999) / 1'000'000, 1000)));
      if (rc > 0) {
        socklen_t len = sizeof(err);
        ::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
        break;
      }
      if (rc < 0 && errno != EINTR) {
        err = errno;
        break;
      }
    }
    if (err != 0) {
      why = err == ETIMEDOUT ? "timed out" : std::strerror(err);
      ::close(s);
      continue;
    }
    fd = s;
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    return base::UnavailableError("cannot connect to " + host + ":" + service + ": " + why);
  }
  int yes = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  if (!tls) return std::unique_ptr<Transport>(new PlainTransport(fd));
  SSL* ssl = SSL_new(tls->get());
  if (ssl == nullptr) {
    ::close(fd);
    return base::InternalError("TLS: " + SslErrors());
  }
  auto t = std::make_unique<TlsTransport>(fd, ssl);  // owns fd and ssl from here
  SSL_set_fd(ssl, fd);
  if (IsIpAddress(host)) {
    if (tls->verify) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, host.c_str());
    if (tls->verify) X509_VERIFY_PARAM_set1_host(SSL_get0_param(ssl), host.c_str(), 0);
  }
  SEEDANCE_RETURN_IF_ERROR(t->Handshake(deadline_ns));
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace seedance::net::internal
