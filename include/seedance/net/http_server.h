// The library's one HTTP/1.1 server: one epoll loop on non-blocking sockets, so a slow, idle or
// hostile client costs a file descriptor and a few kilobytes, never a thread. The probe's
// exporter (/metrics), `kv serve` (an OpenAI-compatible API with server-sent events) and the
// Kubernetes extender (kube-scheduler's verbs) all serve through it (docs/design/net.md).
//
// Guarantees, each tested in http_server_test.cc and http_workers_test.cc, and held for every
// endpoint built on it by that endpoint's own abuse test:
//  - connections <= max_connections. At the cap a new connection evicts the open connection that
//    has waited longest for a request that has not arrived whole; when every connection has a
//    response in flight, the new one is closed instead.
//  - a request's head and body arrive within request_timeout of its first byte (of the accept for
//    the first request): a client that sends one byte a second is closed, not waited for.
//  - an idle keep-alive connection is closed after idle_timeout.
//  - queued output moves: a connection whose unsent output has not advanced for write_timeout
//    (a client that stopped reading) is closed; one that reads keeps it, whatever it pipelined.
//  - memory per connection <= limits.max_head_bytes + max_body_bytes + one read (16 KiB) of input
//    and about max_output_bytes + one response of output: pipelined requests are answered in order,
//    and reading pauses while more than max_output_bytes wait to be sent.
//  - heads are read by ParseRequestHead (http_request.h); its errors are answered with their status
//    and "Connection: close", then the connection is shut down for writing and drained briefly so
//    that the client sees the response rather than a reset. A body over max_body_bytes is 413; a
//    chunked request body is 501 (only fixed-length bodies are taken, so no body escapes the cap).
//  - HEAD gets GET's status and headers without the body. No Range support: a Range field is
//    ignored and the whole representation is sent (RFC 9110 14.2 allows it).
//  - GET /healthz is answered by the server: 200 "ok", or 503 with the reason `health` gives.
//    With `metrics` set, GET /metrics is too: that text, then the server's own families
//    (RenderHttpMetrics). Other methods on them are 405 with Allow.
//
// Handlers. With workers == 0 the handler runs on the loop thread, one request at a time, and must
// not block. With workers > 0 it runs on one of `workers` threads; each connection has at most one
// request in the handler (its pipelined requests wait, in order), so the threads are shared fairly
// and a blocking handler (an API write, a model's generation) stalls only its own client. A
// response with a `stream` is sent with chunked transfer coding (HTTP/1.0: until close); `stream`
// runs on the worker and writes through an HttpStreamSink, which waits while more than
// max_output_bytes are unsent and says false once the client is gone (EOF, an error, the write
// deadline) or the server stops: server-sent events are written this way. Streaming needs workers.
//
// Thread safety: Start/Stop from one thread; stats() and RenderHttpMetrics from any.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/net/http_request.h"

namespace seedance::net {

// A complete request: the parsed head and the body (head.content_length bytes).
struct HttpRequest {
  HttpRequestHead head;
  std::string body;
  bool peer_loopback = false;  // the client connected from 127.0.0.0/8 or ::1
};

// Where a streamed response body goes (HttpResponse::stream). Used by one worker thread.
class HttpStreamSink {
 public:
  virtual ~HttpStreamSink() = default;
  // Queues `data` (one chunk); waits while more than max_output_bytes are unsent. False once the
  // client is gone or the server stops: the producer should stop and clean up.
  virtual bool Write(std::string_view data) = 0;
  // False once the client is gone or the server stops (a producer waiting for data polls this).
  virtual bool Open() const = 0;
};

using HttpStreamProducer = std::function<void(HttpStreamSink&)>;

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra fields, e.g. Allow
  HttpStreamProducer stream;  // set: the body is what it writes (workers > 0 only)
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

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
  int workers = 0;                          // 0: handlers run on the loop thread and must not block
  std::function<base::Status()> health;     // /healthz: ok, or the reason for 503; empty: ok
  std::function<std::string()> metrics;     // set: the server answers /metrics (see above)
  std::string metrics_prefix = "seedance";  // its own families are <prefix>_http_...
  // How the errors the server answers itself look (a malformed request, 413, 405 on /healthz
  // and /metrics): status and message in, response out. Empty: text/plain (router.h's
  // PlainErrorPage). Called on the loop thread; must not block.
  std::function<HttpResponse(int status, const std::string& message)> error_page;
};

// Counters since Start, for tests and /metrics.
struct HttpServerStats {
  uint64_t accepted = 0;            // connections accepted
  uint64_t responses = 0;           // responses queued, errors included
  uint64_t refused = 0;             // requests answered with a 4xx/5xx by the server itself
  uint64_t timed_out = 0;           // connections closed by a deadline
  uint64_t evicted = 0;             // connections closed to admit a new one at the cap
  uint64_t rejected = 0;            // new connections closed because every slot had work in flight
  uint64_t open = 0;                // connections open now
  uint64_t streams_cut = 0;         // streamed responses whose client went away before the end
  std::map<int, uint64_t> by_code;  // responses by status code
  // Time from a request's last byte to its response (a stream's head) being queued: counts of
  // observations <= kHttpSecondsBounds[i], the last one all of them (cumulative), and their sum.
  std::vector<uint64_t> seconds_cumulative;
  double seconds_sum = 0;
  // Connections whose response is not yet wholly handed to the kernel: a request with a worker,
  // a stream running, or output unsent. A graceful shutdown waits for 0 before Stop(), which
  // discards what is unsent. Updated by the loop after each round of events, and before a
  // request is handed to a worker while it reads 0, so no handler runs while it reads 0.
  uint64_t in_flight = 0;
};

// The request-duration histogram's upper bounds, in seconds: a 1-2.5-5 series, 100 us to 10 s.
inline constexpr double kHttpSecondsBounds[] = {1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3,
                                                1e-2, 2.5e-2, 5e-2, 0.1,  0.25,   0.5,
                                                1.0,  2.5,    5.0,  10.0};

// The reason phrase of a status code ("OK", "Not Found", ...); "Unknown" for others.
const char* HttpReasonPhrase(int status);

// The server's own families, as Prometheus text: <prefix>_http_responses_total{code},
// <prefix>_http_request_duration_seconds, <prefix>_http_connections_open and
// <prefix>_http_connections_closed_total{reason} (timeout, evicted, rejected).
std::string RenderHttpMetrics(const HttpServerStats& stats, std::string_view prefix);

class HttpServer {
 public:
  // Binds and listens, then serves on a thread of its own. Errors: a bad address, a port in use
  // (where "listen"), a negative worker count.
  static base::StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerOptions options,
                                                           HttpHandler handler);
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // Closes every connection, tells running streams that their clients are gone and joins the
  // workers (a handler still running is waited for); idempotent.
  void Stop();
  HttpServerStats stats() const;

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::net
