#include "seedance/net/http_client.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <mutex>

#include "seedance/base/ascii.h"
#include "seedance/base/env.h"
#include "src/net/http_transport.h"

namespace seedance::net {
namespace {

using internal::kNoDeadline;
using internal::Transport;

constexpr size_t kClientReadChunk = size_t{64} * 1024;
constexpr int kMaxInterimResponses = 8;  // 1xx heads skipped before the final one

int64_t ClientNow() { return base::Env::Default()->NowMonotonicNanos(); }

int64_t DeadlineAfter(std::chrono::milliseconds ms) {
  if (ms.count() <= 0) return kNoDeadline;
  return ClientNow() + static_cast<int64_t>(ms.count()) * 1'000'000;
}

bool Idempotent(const std::string& method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

}  // namespace

std::string Url::Origin() const {
  const bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

base::StatusOr<Url> ParseUrl(std::string_view text, const std::string& where) {
  auto bad = [&](const std::string& why) {
    return base::InvalidArgumentError("expected http://HOST[:PORT][/PATH] or https://..., got '" +
                                          std::string(text.substr(0, 200)) + "': " + why,
                                      where);
  };
  Url u;
  std::string_view rest = text;
  auto starts = [&](std::string_view prefix) {
    return rest.size() >= prefix.size() &&
           base::EqualsIgnoreCase(rest.substr(0, prefix.size()), prefix);
  };
  if (starts("http://")) {
    u.scheme = "http";
    rest.remove_prefix(7);
  } else if (starts("https://")) {
    u.scheme = "https";
    rest.remove_prefix(8);
  } else {
    return bad("the scheme is not http or https");
  }
  const size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view target = end == std::string_view::npos ? "/" : rest.substr(end);
  if (!target.empty() && target.front() == '?')
    u.target = "/" + std::string(target);
  else
    u.target = std::string(target.substr(0, target.find('#')));
  if (u.target.empty() || u.target.front() != '/') u.target = "/" + u.target;
  if (authority.find('@') != std::string_view::npos) return bad("credentials in the URL");
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 address without ']'");
    u.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after the IPv6 address");
      port = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return bad("no host");
  for (char c : u.target) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return bad("a space or control byte in the path");
    }
  }
  u.port = u.scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    int p = 0;
    const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || ptr != port.data() + port.size() || p < 1 || p > 65535) {
      return bad("the port is not 1-65535");
    }
    u.port = p;
  }
  return u;
}

std::string HttpClientResponse::Field(std::string_view name) const {
  for (const auto& [n, v] : fields) {
    if (base::EqualsIgnoreCase(n, name)) return v;
  }
  return "";
}

class HttpClient::Impl {
 public:
  Impl(Url origin, HttpClientOptions options, std::shared_ptr<internal::TlsContext> tls)
      : origin_(std::move(origin)), options_(std::move(options)), tls_(std::move(tls)) {}

  base::StatusOr<HttpClientResponse> Send(const HttpClientRequest& req) {
    std::lock_guard<std::mutex> exchange(send_mu_);
    const std::string what = req.method + " " + origin_.Origin() + req.target;
    const int64_t deadline = DeadlineAfter(req.timeout.value_or(options_.timeout));
    for (int attempt = 0;; ++attempt) {
      bool reused = false;
      auto conn = Connection(deadline, &reused);
      if (!conn.ok()) return Annotate(conn.status(), what);
      bool got_bytes = false;
      auto res = Exchange(**conn, req, deadline, &got_bytes);
      if (res.ok()) return res;
      Drop();
      // A kept-alive connection the server closed while idle fails before any answer: a request
      // that can be repeated is, once, on a new connection.
      if (reused && !got_bytes && attempt == 0 && Idempotent(req.method) && !stopped_) continue;
      return Annotate(res.status(), what);
    }
  }

  void Stop() {
    stopped_ = true;
    std::lock_guard<std::mutex> lock(conn_mu_);
    if (conn_) conn_->Shutdown();
  }

 private:
  static base::Status Annotate(const base::Status& s, const std::string& what) {
    return base::UnavailableError(std::string(s.message()), what);
  }

  base::StatusOr<std::shared_ptr<Transport>> Connection(int64_t deadline, bool* reused) {
    if (stopped_) return base::UnavailableError("stopped");
    {
      std::lock_guard<std::mutex> lock(conn_mu_);
      if (conn_ && conn_->Reusable()) {
        *reused = true;
        return conn_;
      }
      conn_.reset();
    }
    const int64_t connect_by = std::min(deadline, DeadlineAfter(options_.connect_timeout));
    SEEDANCE_ASSIGN_OR_RETURN(std::unique_ptr<Transport> t,
                              internal::Dial(origin_.host, origin_.port, tls_, connect_by));
    std::shared_ptr<Transport> shared = std::move(t);
    std::lock_guard<std::mutex> lock(conn_mu_);
    if (stopped_) return base::UnavailableError("stopped");
    conn_ = shared;
    return shared;
  }

  void Drop() {
    std::lock_guard<std::mutex> lock(conn_mu_);
    conn_.reset();
  }

  std::string RequestBytes(const HttpClientRequest& req) const {
    std::string s = req.method + " " + req.target + " HTTP/1.1\r\n";
    const bool default_port = origin_.port == (origin_.scheme == "https" ? 443 : 80);
    const bool v6 = origin_.host.find(':') != std::string::npos;
    s += "Host: " + (v6 ? "[" + origin_.host + "]" : origin_.host) +
         (default_port ? "" : ":" + std::to_string(origin_.port)) + "\r\n";
    s += "User-Agent: seedance\r\n";
    for (const auto& [n, v] : options_.headers) s += n + ": " + v + "\r\n";
    for (const auto& [n, v] : req.headers) s += n + ": " + v + "\r\n";
    if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
      if (!req.content_type.empty()) s += "Content-Type: " + req.content_type + "\r\n";
      s += "Content-Length: " + std::to_string(req.body.size()) + "\r\n";
    }
    s += "\r\n";
    s += req.body;
    return s;
  }

  base::StatusOr<HttpClientResponse> Exchange(Transport& conn, const HttpClientRequest& req,
                                              int64_t deadline, bool* got_bytes) {
    SEEDANCE_RETURN_IF_ERROR(conn.WriteAll(RequestBytes(req), deadline));
    const auto idle = req.idle_timeout;
    auto read_more = [&](std::string& buf) -> base::StatusOr<size_t> {
      const int64_t by = idle ? std::min(deadline, DeadlineAfter(*idle)) : deadline;
      char chunk[kClientReadChunk];
      auto n = conn.Read(chunk, sizeof(chunk), by);
      if (stopped_) return base::UnavailableError("stopped");  // Stop also ends reads with EOF
      if (!n.ok()) {
        if (ClientNow() >= deadline)
          return base::UnavailableError("timed out (the request's deadline)");
        return n.status().message() == "timed out"
                   ? base::UnavailableError("timed out waiting for the server (idle)")
                   : n.status();
      }
      buf.append(chunk, *n);
      if (*n > 0) *got_bytes = true;
      return *n;
    };

    // The head; 1xx interim responses are read past.
    std::string buf;
    HttpResponseParse parsed;
    for (int interim = 0;;) {
      parsed = ParseResponseHead(buf, options_.limits, req.method);
      if (parsed.state == HttpParse::kError) {
        return base::UnavailableError("malformed response: " + parsed.reason);
      }
      if (parsed.state == HttpParse::kComplete) {
        if (parsed.head.status >= 200) break;
        if (parsed.head.status == 101)
          return base::UnavailableError("the server switched protocols");
        if (++interim > kMaxInterimResponses) {
          return base::UnavailableError("more than 8 interim (1xx) responses");
        }
        buf.erase(0, parsed.head.head_bytes);
        continue;
      }
      SEEDANCE_ASSIGN_OR_RETURN(const size_t n, read_more(buf));
      if (n == 0) {
        return base::UnavailableError(buf.empty() ? "the server closed the connection without "
                                                    "answering"
                                                  : "the server closed the connection in the "
                                                    "response head");
      }
    }
    const HttpResponseHead& head = parsed.head;
    buf.erase(0, head.head_bytes);
    HttpClientResponse res;
    res.status = head.status;
    res.fields = head.fields;

    // The body: each decoded piece goes to the caller's sink (a 2xx answer's) or into res.body,
    // within the cap.
    const bool streamed = req.on_body && head.status / 100 == 2;
    bool stop = false;
    auto take = [&](std::string_view piece) -> base::Status {
      if (piece.empty() || stop) return base::OkStatus();
      if (streamed) {
        if (!req.on_body(piece)) stop = true;
        return base::OkStatus();
      }
      if (res.body.size() + piece.size() > options_.max_body_bytes) {
        return base::UnavailableError("the response body is over the client's limit of " +
                                      std::to_string(options_.max_body_bytes) + " bytes");
      }
      res.body.append(piece);
      return base::OkStatus();
    };
    bool complete = true;
    switch (head.body) {
      case BodyKind::kNone:
        break;
      case BodyKind::kLength: {
        if (!streamed && head.content_length > options_.max_body_bytes) {
          return base::UnavailableError(
              "the response body of " + std::to_string(head.content_length) +
              " bytes is over the client's limit of " + std::to_string(options_.max_body_bytes));
        }
        uint64_t left = head.content_length;
        while (left > 0 && !stop) {
          if (buf.empty()) {
            SEEDANCE_ASSIGN_OR_RETURN(const size_t n, read_more(buf));
            if (n == 0)
              return base::UnavailableError("the server closed the connection in the body");
          }
          const size_t piece = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
          SEEDANCE_RETURN_IF_ERROR(take(std::string_view(buf).substr(0, piece)));
          buf.erase(0, piece);
          left -= piece;
        }
        complete = left == 0;
        break;
      }
      case BodyKind::kChunked: {
        ChunkedDecoder decoder;
        std::string data;
        while (!decoder.done() && !stop) {
          if (buf.empty()) {
            SEEDANCE_ASSIGN_OR_RETURN(const size_t n, read_more(buf));
            if (n == 0)
              return base::UnavailableError("the server closed the connection in the body");
          }
          std::string_view in = buf;
          data.clear();
          SEEDANCE_RETURN_IF_ERROR(decoder.Feed(in, &data));
          buf.erase(0, buf.size() - in.size());
          SEEDANCE_RETURN_IF_ERROR(take(data));
        }
        complete = decoder.done();
        break;
      }
      case BodyKind::kUntilClose:
        complete = false;  // the connection ends with the body
        while (!stop) {
          SEEDANCE_RETURN_IF_ERROR(take(buf));
          buf.clear();
          SEEDANCE_ASSIGN_OR_RETURN(const size_t n, read_more(buf));
          if (n == 0) break;
        }
        break;
    }
    res.stopped_early = stop;
    if (!complete || stop || !head.keep_alive || !buf.empty()) Drop();
    return res;
  }

  Url origin_;
  HttpClientOptions options_;
  std::shared_ptr<internal::TlsContext> tls_;
  std::mutex send_mu_;  // one exchange at a time
  std::mutex conn_mu_;  // conn_, for Stop from another thread
  std::shared_ptr<Transport> conn_;
  std::atomic<bool> stopped_{false};
};

base::StatusOr<std::unique_ptr<HttpClient>> HttpClient::Create(std::string_view origin,
                                                               HttpClientOptions options) {
  SEEDANCE_ASSIGN_OR_RETURN(Url url, ParseUrl(origin, "origin"));
  if (url.target != "/") {
    return base::InvalidArgumentError(
        "expected scheme://host[:port] without a path, got '" + std::string(origin) + "'",
        "origin");
  }
  std::shared_ptr<internal::TlsContext> tls;
  if (url.scheme == "https") {
    internal::TlsSettings s;
    s.ca_file = options.ca_file;
    s.cert_file = options.cert_file;
    s.key_file = options.key_file;
    s.verify = options.verify_tls;
    SEEDANCE_ASSIGN_OR_RETURN(tls, internal::MakeTlsContext(s));
  }
  return std::unique_ptr<HttpClient>(
      new HttpClient(std::make_unique<Impl>(std::move(url), std::move(options), std::move(tls))));
}

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::~HttpClient() = default;
base::StatusOr<HttpClientResponse> HttpClient::Send(const HttpClientRequest& request) {
  return impl_->Send(request);
}
void HttpClient::Stop() { impl_->Stop(); }

}  // namespace seedance::net
