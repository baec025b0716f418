#include "src/net/http_syntax.h"

#include <algorithm>
#include <cctype>

namespace seedance::net::internal {

// RFC 9110 5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" /
// "`" / "|" / "~" / DIGIT / ALPHA.
namespace {

bool IsTokenChar(unsigned char c) {
  if (std::isalnum(c) != 0) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

}  // namespace

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return IsTokenChar(static_cast<unsigned char>(c));
  });
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Line NextLine(std::string_view buf, size_t pos) {
  const size_t lf = buf.find('\n', pos);
  const size_t cr = buf.find('\r', pos);
  if (cr != std::string_view::npos && (lf == std::string_view::npos || cr < lf)) {
    if (cr + 1 >= buf.size()) return {LineState::kIncomplete, {}, 0};
    if (buf[cr + 1] != '\n' || cr + 1 != lf) return {LineState::kBareCr, {}, 0};
    return {LineState::kLine, buf.substr(pos, cr - pos), lf + 1};
  }
  if (lf == std::string_view::npos) return {LineState::kIncomplete, {}, 0};
  return {LineState::kLine, buf.substr(pos, lf - pos), lf + 1};
}

bool ParseContentLength(std::string_view value, uint64_t* out) {
  bool first = true;
  uint64_t result = 0;
  while (true) {
    const size_t comma = value.find(',');
    const std::string_view item = TrimOws(value.substr(0, comma));
    if (item.empty() || item.size() > 18) return false;  // 10^18 > any body we would take
    uint64_t v = 0;
    for (char c : item) {
      if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!first && v != result) return false;
    result = v;
    first = false;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  *out = result;
  return true;
}

}  // namespace seedance::net::internal
