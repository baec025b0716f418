#include "seedance/net/http_response_reader.h"

#include <algorithm>
#include <cctype>

#include "seedance/base/ascii.h"
#include "src/net/http_syntax.h"

namespace seedance::net {
namespace {

using base::EqualsIgnoreCase;
using internal::IsToken;
using internal::IsValueChar;
using internal::Line;
using internal::LineState;
using internal::NextLine;
using internal::ParseContentLength;
using internal::TrimOws;

HttpResponseParse ResponseError(std::string reason) {
  HttpResponseParse r;
  r.state = HttpParse::kError;
  r.reason = std::move(reason);
  return r;
}

// Whether a comma-separated field value has `option` as an element (case-insensitive).
bool HasOption(std::string_view value, std::string_view option) {
  while (true) {
    const size_t comma = value.find(',');
    if (EqualsIgnoreCase(TrimOws(value.substr(0, comma)), option)) return true;
    if (comma == std::string_view::npos) return false;
    value.remove_prefix(comma + 1);
  }
}

// The last element of a comma-separated value, trimmed.
std::string_view LastOption(std::string_view value) {
  const size_t comma = value.rfind(',');
  return TrimOws(comma == std::string_view::npos ? value : value.substr(comma + 1));
}

}  // namespace

std::string HttpResponseHead::Field(std::string_view name) const {
  for (const auto& [n, v] : fields) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return "";
}

HttpResponseParse ParseResponseHead(std::string_view buffer, const HttpResponseLimits& limits,
                                    std::string_view request_method) {
  const bool truncated = buffer.size() > limits.max_head_bytes;
  const std::string_view buf = buffer.substr(0, limits.max_head_bytes);
  auto incomplete = [&] {
    if (!truncated && buf.size() < limits.max_head_bytes) return HttpResponseParse{};
    return ResponseError("response head over " + std::to_string(limits.max_head_bytes) + " bytes");
  };

  // status-line = HTTP-version SP status-code SP [ reason-phrase ]
  const Line line = NextLine(buf, 0);
  if (line.state == LineState::kIncomplete) return incomplete();
  if (line.state == LineState::kBareCr) return ResponseError("bare CR in the status line");
  const std::string_view text = line.text;
  if (text.size() < 12 || text.substr(0, 7) != "HTTP/1." || (text[7] != '0' && text[7] != '1') ||
      text[8] != ' ') {
    return ResponseError("the status line is not 'HTTP/1.x NNN reason'");
  }
  int status = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (std::isdigit(static_cast<unsigned char>(text[i])) == 0) {
      return ResponseError("the status code is not three digits");
    }
    status = status * 10 + (text[i] - '0');
  }
  if (status < 100) return ResponseError("status code " + std::to_string(status) + " is below 100");
  if (text.size() > 12 && text[12] != ' ')
    return ResponseError("the status code is not three digits");
  for (char c : text.substr(12)) {
    if (!IsValueChar(static_cast<unsigned char>(c)))
      return ResponseError("a control byte in the reason");
  }

  HttpResponseParse result;
  HttpResponseHead& head = result.head;
  head.status = status;
  head.minor_version = text[7] - '0';
  bool close = false, keep_alive = false, have_length = false;
  std::string transfer_encoding;
  size_t pos = line.next;
  while (true) {
    const Line field = NextLine(buf, pos);
    if (field.state == LineState::kIncomplete) return incomplete();
    if (field.state == LineState::kBareCr) return ResponseError("bare CR in a header field");
    pos = field.next;
    if (field.text.empty()) break;
    if (head.fields.size() == limits.max_headers) {
      return ResponseError("more than " + std::to_string(limits.max_headers) + " header fields");
    }
    if (field.text.front() == ' ' || field.text.front() == '\t') {
      return ResponseError("obsolete line folding in a header field");
    }
    const size_t colon = field.text.find(':');
    if (colon == std::string_view::npos) return ResponseError("a header field without ':'");
    const std::string_view name = field.text.substr(0, colon);
    if (!IsToken(name)) return ResponseError("a header field name is not a token");
    const std::string_view value = TrimOws(field.text.substr(colon + 1));
    for (char c : value) {
      if (!IsValueChar(static_cast<unsigned char>(c))) {
        return ResponseError("a control byte in the value of " + std::string(name));
      }
    }
    if (EqualsIgnoreCase(name, "connection")) {
      close = close || HasOption(value, "close");
      keep_alive = keep_alive || HasOption(value, "keep-alive");
    } else if (EqualsIgnoreCase(name, "content-length")) {
      uint64_t length = 0;
      if (!ParseContentLength(value, &length) || (have_length && length != head.content_length)) {
        return ResponseError("bad or conflicting Content-Length");
      }
      head.content_length = length;
      have_length = true;
    } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
      transfer_encoding += (transfer_encoding.empty() ? "" : ",") + std::string(value);
    }
    head.fields.emplace_back(std::string(name), std::string(value));
  }
  head.keep_alive = !close && (head.minor_version == 1 || keep_alive);
  head.head_bytes = pos;
  // RFC 9112 6.3, in its order.
  if (request_method == "HEAD" || status < 200 || status == 204 || status == 304) {
    head.body = BodyKind::kNone;
    head.content_length = 0;
  } else if (!transfer_encoding.empty()) {
    if (have_length) return ResponseError("Content-Length and Transfer-Encoding together");
    if (!EqualsIgnoreCase(LastOption(transfer_encoding), "chunked")) {
      return ResponseError("a Transfer-Encoding that does not end in chunked");
    }
    head.body = BodyKind::kChunked;
  } else if (have_length) {
    head.body = BodyKind::kLength;
  } else {
    head.body = BodyKind::kUntilClose;
    head.keep_alive = false;
  }
  result.state = HttpParse::kComplete;
  return result;
}

base::Status ChunkedDecoder::Fail(const std::string& why) {
  failed_ = true;
  return base::UnavailableError("malformed chunked body: " + why, "response");
}

base::Status ChunkedDecoder::Feed(std::string_view& in, std::string* out) {
  if (failed_) return base::UnavailableError("malformed chunked body", "response");
  while (!in.empty() && state_ != State::kDone) {
    if (state_ == State::kData) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(left_, in.size()));
      out->append(in.substr(0, take));
      in.remove_prefix(take);
      left_ -= take;
      if (left_ == 0) state_ = State::kDataEnd;
      continue;
    }
    // The other states read lines: gather one, bounded.
    const size_t lf = in.find('\n');
    const size_t take = lf == std::string_view::npos ? in.size() : lf + 1;
    if (line_.size() + take > max_line_ + 2) {
      return Fail("a line over " + std::to_string(max_line_) + " bytes");
    }
    line_.append(in.substr(0, take));
    in.remove_prefix(take);
    if (lf == std::string_view::npos) break;  // the line goes on in the next piece
    std::string_view l = line_;
    l.remove_suffix(1);                                      // LF
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);  // CRLF
    if (l.find('\r') != std::string_view::npos) return Fail("a bare CR");
    switch (state_) {
      case State::kDataEnd:
        if (!l.empty()) return Fail("chunk data longer than its size");
        state_ = State::kSize;
        break;
      case State::kSize: {
        // chunk-size [ chunk-ext ]: hex digits, then optional ";..." extensions (ignored).
        const std::string_view size = TrimOws(l.substr(0, l.find(';')));
        if (size.empty()) return Fail("an empty chunk size");
        uint64_t n = 0;
        for (char c : size) {
          const int d = std::isdigit(static_cast<unsigned char>(c)) != 0 ? c - '0'
                        : (c >= 'a' && c <= 'f')                         ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F')                         ? c - 'A' + 10
                                                                         : -1;
          if (d < 0) return Fail("a chunk size that is not hexadecimal");
          if (n >> 56 != 0) return Fail("a chunk size past 2^60");
          n = n * 16 + static_cast<uint64_t>(d);
        }
        if (n == 0) {
          state_ = State::kTrailer;
        } else {
          left_ = n;
          state_ = State::kData;
        }
        break;
      }
      case State::kTrailer:
        if (l.empty()) {
          state_ = State::kDone;
        } else if (++trailers_ > max_trailers_) {
          return Fail("more than " + std::to_string(max_trailers_) + " trailer fields");
        }
        break;
      default:
        break;
    }
    line_.clear();
  }
  return base::OkStatus();
}

}  // namespace seedance::net
