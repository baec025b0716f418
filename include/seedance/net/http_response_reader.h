// The client's half of HTTP/1.1 framing (RFC 9112 4, 6, 7): a response head and a chunked body,
// read as pure functions of the bytes received so far (no I/O), so both are fuzzed
// (tests/fuzz/http_response_fuzz.cc). net::HttpClient reads every response through them.
//
// Contract of ParseResponseHead(buffer, limits, method):
//   kIncomplete: buffer is a proper prefix of a head still within the limits. A buffer of
//                limits.max_head_bytes or more is never kIncomplete.
//   kComplete:   head.head_bytes <= min(buffer.size(), limits.max_head_bytes) bytes form one
//                status line, at most limits.max_headers fields and the blank line; the body's
//                framing follows RFC 9112 6.3: none for a HEAD request and for 1xx, 204 and 304;
//                chunked when Transfer-Encoding ends in chunked; Content-Length bytes; otherwise
//                until the server closes.
//   kError:      reason says what is wrong: a malformed status line or field, a head over the
//                limits, conflicting or malformed Content-Length, a Transfer-Encoding that does not
//                end in chunked, Content-Length beside Transfer-Encoding.
// ChunkedDecoder takes a chunked body in pieces of any size and gives the data; it refuses a
// malformed size line, a chunk size past 2^60, and size lines or trailer fields over its limits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/net/http_request.h"

namespace seedance::net {

struct HttpResponseLimits {
  size_t max_head_bytes = size_t{64} * 1024;  // status line + fields + blank line
  size_t max_headers = 128;                   // header fields
};

enum class BodyKind { kNone, kLength, kChunked, kUntilClose };

struct HttpResponseHead {
  int status = 0;
  int minor_version = 1;
  std::vector<std::pair<std::string, std::string>> fields;  // names as sent, values trimmed
  BodyKind body = BodyKind::kNone;
  uint64_t content_length = 0;  // kLength only
  bool keep_alive = true;       // 1.1 unless "Connection: close"; 1.0 only with "keep-alive"
  size_t head_bytes = 0;        // bytes of buffer the head took
  // The value of the first field named `name` (case-insensitive); "" when there is none.
  std::string Field(std::string_view name) const;
};

struct HttpResponseParse {
  HttpParse state = HttpParse::kIncomplete;
  HttpResponseHead head;  // kComplete only
  std::string reason;     // kError only
};

HttpResponseParse ParseResponseHead(std::string_view buffer, const HttpResponseLimits& limits,
                                    std::string_view request_method = "GET");

class ChunkedDecoder {
 public:
  explicit ChunkedDecoder(size_t max_line_bytes = 4096, size_t max_trailers = 64)
      : max_line_(max_line_bytes), max_trailers_(max_trailers) {}

  // Consumes what it can of `in` (it is advanced past what was used), appending chunk data to
  // `out`. Bytes after the end of the body are left in `in`. An error is final.
  base::Status Feed(std::string_view& in, std::string* out);
  bool done() const { return state_ == State::kDone; }

 private:
  enum class State { kSize, kData, kDataEnd, kTrailer, kDone };
  base::Status Fail(const std::string& why);
  State state_ = State::kSize;
  uint64_t left_ = 0;  // data bytes left in the current chunk
  std::string line_;   // a size line or trailer field not yet ended
  size_t trailers_ = 0;
  size_t max_line_;
  size_t max_trailers_;
  bool failed_ = false;
};

}  // namespace seedance::net
