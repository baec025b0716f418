#include "seedance/net/http_request.h"

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

HttpParseResult Error(int status, std::string reason) {
  HttpParseResult r;
  r.state = HttpParse::kError;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

// "HTTP/1.1" -> 1; -1 for another well-formed version (505), -2 for anything else (400).
int MinorVersion(std::string_view v) {
  if (v.size() != 8 || v.substr(0, 5) != "HTTP/" || v[6] != '.' ||
      std::isdigit(static_cast<unsigned char>(v[5])) == 0 ||
      std::isdigit(static_cast<unsigned char>(v[7])) == 0) {
    return -2;
  }
  if (v[5] != '1' || (v[7] != '0' && v[7] != '1')) return -1;
  return v[7] - '0';
}

// The path of an origin-form ("/a?b") or absolute-form ("http://host/a?b") target; "*" stays "*".
bool PathOf(std::string_view target, std::string* path) {
  if (target == "*") {
    *path = "*";
    return true;
  }
  std::string_view p = target;
  for (std::string_view scheme : {"http://", "https://"}) {
    if (p.size() > scheme.size() && EqualsIgnoreCase(p.substr(0, scheme.size()), scheme)) {
      p.remove_prefix(scheme.size());
      const size_t slash = p.find_first_of("/?#");
      p = slash == std::string_view::npos ? std::string_view("/") : p.substr(slash);
      if (p.front() != '/') p = "/";
      break;
    }
  }
  if (p.empty() || p.front() != '/') return false;
  *path = std::string(p.substr(0, p.find_first_of("?#")));
  return true;
}

}  // namespace

HttpParseResult ParseRequestHead(std::string_view buffer, const HttpLimits& limits) {
  // Never look past the limit: a head that does not end within it is refused.
  const bool truncated = buffer.size() > limits.max_head_bytes;
  const std::string_view buf = buffer.substr(0, limits.max_head_bytes);
  auto incomplete = [&](bool in_request_line) {
    if (!truncated && buf.size() < limits.max_head_bytes) return HttpParseResult{};
    if (in_request_line)
      return Error(414, "request line over " + std::to_string(limits.max_head_bytes) + " bytes");
    return Error(431, "request head over " + std::to_string(limits.max_head_bytes) + " bytes");
  };

  size_t pos = 0;
  for (int empty = 0;; ++empty) {
    if (pos >= buf.size()) return incomplete(true);
    if (buf[pos] != '\r' && buf[pos] != '\n') break;
    if (empty == kMaxLeadingEmptyLines)
      return Error(400, "too many empty lines before the request");
    Line l = NextLine(buf, pos);
    if (l.state == LineState::kIncomplete) return incomplete(true);
    if (l.state == LineState::kBareCr || !l.text.empty()) return Error(400, "bare CR");
    pos = l.next;
  }

  // request-line = method SP request-target SP HTTP-version
  Line line = NextLine(buf, pos);
  if (line.state == LineState::kIncomplete) return incomplete(true);
  if (line.state == LineState::kBareCr) return Error(400, "bare CR in the request line");
  pos = line.next;
  const size_t sp1 = line.text.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.text.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.text.find(' ', sp2 + 1) != std::string_view::npos) {
    return Error(400, "request line is not 'METHOD TARGET HTTP/1.x'");
  }
  const std::string_view method = line.text.substr(0, sp1);
  const std::string_view target = line.text.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.text.substr(sp2 + 1);
  if (!IsToken(method)) return Error(400, "method is not a token");
  if (target.size() > limits.max_target_bytes) {
    return Error(414, "request target over " + std::to_string(limits.max_target_bytes) + " bytes");
  }
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x21 && static_cast<unsigned char>(c) <= 0x7e;
      })) {
    return Error(400, "request target has a byte outside visible ASCII");
  }
  const int minor = MinorVersion(version);
  if (minor == -2) return Error(400, "not an HTTP version");
  if (minor == -1) return Error(505, "only HTTP/1.0 and HTTP/1.1 are served");

  HttpParseResult result;
  HttpRequestHead& head = result.head;
  head.method = std::string(method);
  head.target = std::string(target);
  head.minor_version = minor;
  if (!PathOf(target, &head.path)) return Error(400, "request target is not a path");

  size_t fields = 0;
  int hosts = 0;
  bool close = false;
  bool keep_alive = false;
  bool have_length = false;
  bool transfer_encoding = false;
  int authorizations = 0;
  while (true) {
    line = NextLine(buf, pos);
    if (line.state == LineState::kIncomplete) return incomplete(false);
    if (line.state == LineState::kBareCr) return Error(400, "bare CR in a header field");
    pos = line.next;
    if (line.text.empty()) break;  // end of the head
    if (++fields > limits.max_headers) {
      return Error(431, "more than " + std::to_string(limits.max_headers) + " header fields");
    }
    if (line.text.front() == ' ' || line.text.front() == '\t') {
      return Error(400, "obsolete line folding");
    }
    const size_t colon = line.text.find(':');
    if (colon == std::string_view::npos) return Error(400, "header field without ':'");
    const std::string_view name = line.text.substr(0, colon);
    if (!IsToken(name)) return Error(400, "header field name is not a token");
    const std::string_view value = TrimOws(line.text.substr(colon + 1));
    if (!std::all_of(value.begin(), value.end(),
                     [](char c) { return IsValueChar(static_cast<unsigned char>(c)); })) {
      return Error(400, "control byte in a header field value");
    }
    if (EqualsIgnoreCase(name, "host")) {
      ++hosts;
    } else if (EqualsIgnoreCase(name, "connection")) {
      std::string_view rest = value;
      while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string_view option = TrimOws(rest.substr(0, comma));
        if (EqualsIgnoreCase(option, "close")) close = true;
        if (EqualsIgnoreCase(option, "keep-alive")) keep_alive = true;
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
    } else if (EqualsIgnoreCase(name, "content-length")) {
      uint64_t length = 0;
      if (!ParseContentLength(value, &length) || (have_length && length != head.content_length)) {
        return Error(400, "bad or conflicting Content-Length");
      }
      head.content_length = length;
      have_length = true;
    } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
      transfer_encoding = true;
    } else if (EqualsIgnoreCase(name, "authorization")) {
      if (authorizations++ > 0) return Error(400, "more than one Authorization field");
      head.authorization = std::string(value);
    }
  }
  // Both framings at once is how requests are smuggled past a proxy (RFC 9112 6.1, 11.2).
  if (transfer_encoding && have_length) {
    return Error(400, "Content-Length and Transfer-Encoding together (conflicting framing)");
  }
  if (transfer_encoding) return Error(501, "Transfer-Encoding is not supported");
  if (minor == 1 && hosts != 1) return Error(400, "HTTP/1.1 needs exactly one Host field");
  if (hosts > 1) return Error(400, "more than one Host field");
  head.keep_alive = !close && (minor == 1 || keep_alive);
  head.head_bytes = pos;
  result.state = HttpParse::kComplete;
  return result;
}

}  // namespace seedance::net
