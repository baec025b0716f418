#include "src/net/http_response.h"

#include <cstdio>
#include <iterator>

#include "seedance/base/prometheus_text.h"

namespace seedance::net {

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
    case 429:
      return "Too Many Requests";
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

std::string RenderHttpMetrics(const HttpServerStats& st, std::string_view prefix) {
  const std::string p(prefix);
  base::PrometheusWriter w;
  w.Family(p + "_http_responses_total", "counter", "HTTP responses sent, by status code");
  for (const auto& [code, n] : st.by_code) {
    w.Sample({{"code", std::to_string(code)}}, static_cast<double>(n));
  }
  w.Family(p + "_http_request_duration_seconds", "histogram",
           "From a request's last byte to its response (a stream's head) being queued");
  std::vector<uint64_t> cumulative = st.seconds_cumulative;
  cumulative.resize(std::size(kHttpSecondsBounds) + 1, 0);
  w.Histogram({}, kHttpSecondsBounds, cumulative, st.seconds_sum);
  w.Family(p + "_http_connections_open", "gauge", "HTTP connections open now");
  w.Sample({}, static_cast<double>(st.open));
  w.Family(p + "_http_connections_closed_total", "counter",
           "HTTP connections closed by the server's limits, by reason");
  w.Sample({{"reason", "timeout"}}, static_cast<double>(st.timed_out));
  w.Sample({{"reason", "evicted"}}, static_cast<double>(st.evicted));
  w.Sample({{"reason", "rejected"}}, static_cast<double>(st.rejected));
  w.Family(p + "_http_streams_cut_total", "counter",
           "Streamed responses whose client went away before the end");
  w.Sample({}, static_cast<double>(st.streams_cut));
  return w.str();
}

namespace internal {

std::string RenderResponse(const HttpRequestHead& req, const HttpResponse& res,
                           BodyFraming framing) {
  std::string s =
      "HTTP/1.1 " + std::to_string(res.status) + " " + HttpReasonPhrase(res.status) + "\r\n";
  s += "Content-Type: " + res.content_type + "\r\n";
  if (framing == BodyFraming::kLength) {
    s += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  } else if (framing == BodyFraming::kChunked) {
    s += "Transfer-Encoding: chunked\r\n";
  }
  for (const auto& [name, value] : res.headers) s += name + ": " + value + "\r\n";
  if (!req.keep_alive || framing == BodyFraming::kUntilClose) {
    s += "Connection: close\r\n";
  } else if (req.minor_version == 0) {
    s += "Connection: keep-alive\r\n";
  }
  s += "\r\n";
  if (framing == BodyFraming::kLength && req.method != "HEAD") s += res.body;
  return s;
}

std::string EncodeChunk(std::string_view data) {
  if (data.empty()) return {};
  char size[24];
  const int n = std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  std::string out(size, static_cast<size_t>(n));
  out += data;
  out += "\r\n";
  return out;
}

}  // namespace internal
}  // namespace seedance::net
