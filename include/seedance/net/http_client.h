// The library's HTTP/1.1 client (http:// and https://, OpenSSL): what `loadtest`, `diagnose
// --metrics`, `scheduler set` and the extender's API client send their requests with. Every
// exchange is bounded, so no server can hang or inflate it (docs/design/net.md):
//  - a deadline for the whole exchange (connect, request, head and body: a server that sends a
//    byte every half second is cut at the deadline, not renewed by each byte), and optionally an
//    idle bound between bytes for long streams (a watch);
//  - the response head within limits.max_head_bytes and limits.max_headers fields;
//  - a body kept in memory within max_body_bytes; a streamed body (on_body) is handed over in
//    pieces and not kept; a chunked body's size lines and trailers are bounded too.
// Responses are read by http_response_reader.h (fuzzed). A kept-alive connection is reused when
// it is still open and idle; a GET or HEAD that finds it closed before any byte of the answer is
// sent again once on a new connection (other methods are not: the server may have acted).
//
// Thread safety: one exchange at a time (Send takes a lock); Stop from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/net/http_response_reader.h"

namespace seedance::net {

// "http://host:port/path?query" split up; the port defaults to 80 or 443. IPv6 hosts in brackets.
struct Url {
  std::string scheme;  // "http" or "https"
  std::string host;    // without brackets
  int port = 0;
  std::string target;          // "/path?query"; "/" when the URL has none
  std::string Origin() const;  // scheme://host:port
};

// Errors name `where` (a flag or field the URL came from).
base::StatusOr<Url> ParseUrl(std::string_view url, const std::string& where = "url");

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds timeout{30000};  // a whole exchange, unless the request says otherwise
  HttpResponseLimits limits;
  size_t max_body_bytes = size_t{64} << 20;  // a body kept in memory
  // TLS, for https: the CA bundle (empty: the system's), a client certificate and key, and
  // whether to verify the server (its certificate and name).
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  bool verify_tls = true;
  std::vector<std::pair<std::string, std::string>> headers;  // sent with every request
};

struct HttpClientRequest {
  std::string method = "GET";
  std::string target = "/";
  std::string body;
  std::string content_type;  // sent when there is a body
  std::vector<std::pair<std::string, std::string>> headers;
  // Set: a 2xx answer's body is handed over in pieces as it arrives (decoded), not kept;
  // returning false ends the exchange there (not an error; the connection is closed). Other
  // answers' bodies are kept as usual, so that their error can be read.
  std::function<bool(std::string_view)> on_body;
  std::optional<std::chrono::milliseconds> timeout;       // this exchange's deadline; 0: none
  std::optional<std::chrono::milliseconds> idle_timeout;  // the longest wait for a byte
};

struct HttpClientResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> fields;
  std::string body;                                // empty when streamed
  bool stopped_early = false;                      // on_body returned false
  std::string Field(std::string_view name) const;  // first of that name, case-insensitive; ""
};

class HttpClient {
 public:
  // `origin` is scheme://host[:port] (a path is refused). TLS files are read here.
  static base::StatusOr<std::unique_ptr<HttpClient>> Create(std::string_view origin,
                                                            HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One exchange. Errors (Unavailable, where "METHOD URL"): no connection, the deadline, a
  // response past the limits or malformed, Stop. Any status code is a response, not an error.
  base::StatusOr<HttpClientResponse> Send(const HttpClientRequest& request);
  // The exchange in progress fails now, and every later one at once.
  void Stop();

  class Impl;

 private:
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::net
