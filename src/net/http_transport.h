// Private to seedance::net: the byte streams under HttpClient, plain TCP or TLS (OpenSSL), on
// non-blocking sockets so that every call ends by an absolute deadline (base::Env's monotonic
// nanoseconds; kNoDeadline for none), and Shutdown from another thread ends it at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "seedance/base/status.h"

namespace seedance::net::internal {

inline constexpr int64_t kNoDeadline = INT64_MAX;

struct TlsSettings {
  std::string ca_file;    // empty: the system's trust store
  std::string cert_file;  // a client certificate (chain), with key_file
  std::string key_file;
  bool verify = true;  // the server's certificate and its name (a DNS name or an IP address)
};

class TlsContext;  // an OpenSSL SSL_CTX, shared by a client's connections

// Builds the context once per client: certificates are read here, so errors show at Create.
base::StatusOr<std::shared_ptr<TlsContext>> MakeTlsContext(const TlsSettings& settings);

class Transport {
 public:
  virtual ~Transport() = default;
  // Everything of `data`, or an error (the peer closed, the deadline passed, Shutdown).
  virtual base::Status WriteAll(std::string_view data, int64_t deadline_ns) = 0;
  // At least one byte, or 0 at the end of the stream, or an error.
  virtual base::StatusOr<size_t> Read(char* buf, size_t size, int64_t deadline_ns) = 0;
  // Whether an idle kept-alive connection can take another request (no EOF or stray bytes).
  virtual bool Reusable() = 0;
  // Any thread: the call in progress and every later one fail.
  void Shutdown();

 protected:
  explicit Transport(int fd) : fd_(fd) {}
  // Waits for `events` on the socket until the deadline; an error when it passed or Shutdown.
  base::Status Wait(short events, int64_t deadline_ns) const;
  int fd_;
  std::atomic<bool> shut_{false};
};

// Connects to host:port by `deadline_ns`; with `tls`, completes the handshake too.
base::StatusOr<std::unique_ptr<Transport>> Dial(const std::string& host, int port,
                                                const std::shared_ptr<TlsContext>& tls,
                                                int64_t deadline_ns);

}  // namespace seedance::net::internal
