// Private to seedance::net: the pieces of HTTP/1.1 syntax (RFC 9110, 9112) that the request and
// response readers share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace seedance::net::internal {

// A token (RFC 9110 5.6.2): one or more tchar.
bool IsToken(std::string_view s);

// field-value bytes (RFC 9110 5.5): VCHAR, obs-text, SP and HTAB.
inline bool IsValueChar(unsigned char c) {
  return c == '\t' || c == ' ' || (c >= 0x21 && c != 0x7f);
}

// Without leading and trailing SP and HTAB.
std::string_view TrimOws(std::string_view s);

// One line starting at `pos`: its text without the terminator (CRLF, or a bare LF, which
// recipients may accept, RFC 9112 2.2) and the position after it. A CR not followed by LF is
// kBareCr.
enum class LineState { kLine, kIncomplete, kBareCr };
struct Line {
  LineState state;
  std::string_view text;
  size_t next = 0;
};
Line NextLine(std::string_view buf, size_t pos);

// Content-Length: 1*DIGIT, possibly a list of identical values (RFC 9110 8.6), at most 18 digits.
bool ParseContentLength(std::string_view value, uint64_t* out);

}  // namespace seedance::net::internal
