// The request head of HTTP/1.x (RFC 9112 sections 2-6) as net::HttpServer reads it: a pure
// function from the bytes received so far to "need more", "here is one request" or "refuse it
// with this status". No I/O, no allocation beyond the returned strings, so it is fuzzed
// directly (tests/fuzz/http_request_fuzz.cc).
//
// Contract of ParseRequestHead(buffer, limits):
//   kIncomplete: buffer is a proper prefix of a head that is still within the limits; call again
//                with more bytes. A buffer of limits.max_head_bytes or more is never kIncomplete.
//   kComplete:   head.head_bytes <= min(buffer.size(), limits.max_head_bytes) bytes form one
//                request line, at most limits.max_headers fields and the blank line; a body of
//                head.content_length bytes follows (the caller reads or refuses it).
//   kError:      status is the response to send before closing the connection:
//                400 malformed, 414 target longer than limits.max_target_bytes,
//                431 head over max_head_bytes or more than max_headers fields,
//                501 a Transfer-Encoding (the server takes fixed-length bodies only), 400 one
//                beside a Content-Length (conflicting framing, RFC 9112 6.1),
//                505 an HTTP version other than 1.0 and 1.1.
// Lines end in CRLF or a bare LF (RFC 9112 2.2 allows recipients to accept LF); up to
// kMaxLeadingEmptyLines empty lines before the request line are skipped (2.2). Obsolete line
// folding, whitespace before a field's colon, control bytes in a value, a missing or repeated
// Host in HTTP/1.1, and conflicting Content-Length fields are 400 (RFC 9112 3.2, 5.1, 5.2, 6.3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace seedance::net {

struct HttpLimits {
  size_t max_head_bytes = 8192;    // request line + fields + blank line
  size_t max_target_bytes = 2048;  // the request target
  size_t max_headers = 64;         // header fields
};

inline constexpr int kMaxLeadingEmptyLines = 8;

struct HttpRequestHead {
  std::string method;      // case-sensitive token, e.g. "GET"
  std::string target;      // as sent, e.g. "/metrics?x=1"
  std::string path;        // target up to '?' or '#'
  int minor_version = 1;   // HTTP/1.<minor_version>
  bool keep_alive = true;  // 1.1 unless "Connection: close"; 1.0 only with "keep-alive"
  uint64_t content_length = 0;
  std::string authorization;  // the Authorization field's value; "" when absent (two: a 400)
  size_t head_bytes = 0;      // bytes of buffer the head took
};

enum class HttpParse { kIncomplete, kComplete, kError };

struct HttpParseResult {
  HttpParse state = HttpParse::kIncomplete;
  HttpRequestHead head;  // kComplete only
  int status = 0;        // kError only
  std::string reason;    // kError only: a short human-readable cause
};

HttpParseResult ParseRequestHead(std::string_view buffer, const HttpLimits& limits);

}  // namespace seedance::net
