#include "seedance/base/printable.h"

#include <cstdint>

namespace seedance::base {
namespace {

// The length of the valid, shortest-form UTF-8 sequence at text[i], or 0 (RFC 3629: no
// surrogates, nothing past U+10FFFF).
size_t Utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = byte(i);
  size_t n = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // the bounds of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

std::string Hex(uint8_t b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  return std::string("\\x") + kDigits[b >> 4] + kDigits[b & 15];
}

}  // namespace

std::string Printable(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const uint8_t b = static_cast<uint8_t>(text[i]);
    std::string piece;
    size_t used = 1;
    const size_t n = b < 0x80 ? 1 : Utf8Length(text, i);
    const bool c1 = n == 2 && b == 0xC2 && static_cast<uint8_t>(text[i + 1]) < 0xA0;
    if (b == '\n' || b == '\r' || b == '\t' || b == 0) {
      piece = b == '\n' ? "\\n" : b == '\r' ? "\\r" : b == '\t' ? "\\t" : "\\0";
    } else if (b < 0x20 || b == 0x7F || n == 0) {
      piece = Hex(b);  // another control, or a byte that starts no valid sequence
    } else if (c1) {
      piece = Hex(b) + Hex(static_cast<uint8_t>(text[i + 1]));  // a C1 control, U+0080..U+009F
      used = 2;
    } else {
      piece = std::string(text.substr(i, n));
      used = n;
    }
    if (out.size() + piece.size() > max_bytes) {
      out += "... (" + std::to_string(text.size() - i) + " more bytes)";
      return out;
    }
    out += piece;
    i += used;
  }
  return out;
}

}  // namespace seedance::base
