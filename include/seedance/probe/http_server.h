// A small HTTP/1.1 server for endpoints that answer from memory (/metrics): one thread, one
// epoll loop, non-blocking sockets, so a slow, idle or hostile client costs a file descriptor and
// a few kilobytes, never a thread (feature PROBE-2; docs/design/hardening.md, finding 6).
//
// Guarantees, each tested in http_server_test.cc:
//  - connections <= max_connections. At the cap a new connection evicts the open connection that
//    has waited longest for a request that has not arrived whole; when every connection has a
//    response in flight, the new one is closed instead.
//  - a request's head and body arrive within request_timeout of its first byte (of the accept for
//    the first request): a client that sends one byte a second is closed, not waited for.
//  - an idle keep-alive connection is closed after idle_timeout.
//  - queued output is sent within write_timeout of being queued, else the connection is closed.
//  - memory per connection <= limits.max_head_bytes + max_body_bytes + one read (16 KiB) of input
//    and about max_output_bytes + one response of output: pipelined requests are answered in order,
//    and reading pauses while more than max_output_bytes wait to be sent.
//  - heads are read by ParseRequestHead (http_request.h); its errors are answered with their status
//    and "Connection: close", then the connection is shut down for writing and drained briefly so
//    that the client sees the response rather than a reset. A body over max_body_bytes is 413.
//  - HEAD gets GET's status and headers without the body. No Range support: a Range field is
//    ignored and the whole representation is sent (RFC 9110 14.2 allows it).
//
// Thread safety: Start/Stop from one thread. The handler runs on the server's thread, one request
// at a time; it must not block.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/probe/http_request.h"

namespace seedance::probe {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra fields, e.g. Allow
};

using HttpHandler = std::function<HttpResponse(const HttpRequestHead&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // a numeric address or a name getaddrinfo resolves
  int port = 0;                    // 0 picks a free port
  HttpLimits limits;
  size_t max_body_bytes = 4096;
  size_t max_connections = 256;
  std::chrono::milliseconds request_timeout{2000};
  std::chrono::milliseconds idle_timeout{1000};
  std::chrono::milliseconds write_timeout{2000};
  size_t max_output_bytes = size_t{1} << 20;
};

// Counters since Start, for tests and self-metrics.
struct HttpServerStats {
  uint64_t accepted = 0;   // connections accepted
  uint64_t responses = 0;  // responses queued, errors included
  uint64_t refused = 0;    // requests answered with a 4xx/5xx by the server itself
  uint64_t timed_out = 0;  // connections closed by a deadline
  uint64_t evicted = 0;    // connections closed to admit a new one at the cap
  uint64_t rejected = 0;   // new connections closed because every slot had work in flight
  uint64_t open = 0;       // connections open now
};

// The reason phrase of a status code ("OK", "Not Found", ...); "Unknown" for others.
const char* HttpReasonPhrase(int status);

class HttpServer {
 public:
  // Binds and listens, then serves on a thread of its own. Errors: a bad address, a port in use.
  static base::StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerOptions options,
                                                           HttpHandler handler);
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  void Stop();  // closes every connection; idempotent
  HttpServerStats stats() const;

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::probe
