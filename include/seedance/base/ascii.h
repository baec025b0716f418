// ASCII case folding for identifiers and protocol tokens (GPU ids, HTTP field names): bytes
// outside A-Z are left alone, whatever the locale. Header-only.
#pragma once

#include <string>
#include <string_view>

namespace seedance::base {

constexpr char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

constexpr bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

static_assert(EqualsIgnoreCase("Content-Length", "content-LENGTH"));
static_assert(!EqualsIgnoreCase("a", "ab"));

}  // namespace seedance::base
