// GPT-2's pre-tokenizer pattern, written out as a scanner over code points (the pattern's
// alternatives tried in order at each position, as a backtracking regex engine tries them).
#include <unicode/uchar.h>

#include <cstdint>

#include "seedance/kv/bpe_tokenizer.h"

namespace seedance::kv {
namespace {

enum class Class { kLetter, kNumber, kSpace, kOther };

struct CodePoint {
  size_t begin, end;  // its bytes in the text
  UChar32 c;
  Class cls;
};

Class ClassOf(UChar32 c) {
  if (c < 0) return Class::kOther;
  if (u_isUWhiteSpace(c)) return Class::kSpace;
  switch (u_charType(c)) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return Class::kLetter;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
      return Class::kNumber;
    default:
      return Class::kOther;
  }
}

// The text's code points; a byte that starts no valid UTF-8 sequence is one "character" of
// class other.
std::vector<CodePoint> Decode(std::string_view text) {
  std::vector<CodePoint> out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const uint8_t b = s[i];
    size_t len = b < 0x80           ? 1
                 : (b >> 5) == 0x6  ? 2
                 : (b >> 4) == 0xE  ? 3
                 : (b >> 3) == 0x1E ? 4
                                    : 0;
    UChar32 c = -1;
    if (len == 1) {
      c = b;
    } else if (len > 1 && i + len <= n) {
      c = b & (0xFF >> (len + 1));
      for (size_t k = 1; k < len; ++k) {
        if ((s[i + k] & 0xC0) != 0x80) {
          c = -1;
          break;
        }
        c = (c << 6) | (s[i + k] & 0x3F);
      }
      // Overlong forms, surrogates and values past U+10FFFF are not characters.
      static constexpr UChar32 kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      if (c >= 0 && (c < kMin[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))) c = -1;
    }
    if (c < 0) len = 1;
    out.push_back({i, i + len, c, ClassOf(c)});
    i += len;
  }
  return out;
}

}  // namespace

std::vector<std::string_view> SplitGpt2(std::string_view text) {
  const std::vector<CodePoint> cp = Decode(text);
  const size_t n = cp.size();
  std::vector<std::string_view> out;
  auto run = [&](size_t from, Class cls) {  // the end of the run of `cls` starting at from
    size_t j = from;
    while (j < n && cp[j].cls == cls) ++j;
    return j;
  };
  size_t i = 0;
  while (i < n) {
    size_t end = i;
    // 's|'t|'re|'ve|'m|'ll|'d
    if (cp[i].c == '\'' && i + 1 < n) {
      const UChar32 a = cp[i + 1].c, b = i + 2 < n ? cp[i + 2].c : 0;
      if (a == 's' || a == 't' || a == 'm' || a == 'd') {
        end = i + 2;
      } else if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
        end = i + 3;
      }
    }
    //  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+
    if (end == i) {
      const size_t k = cp[i].c == ' ' && i + 1 < n ? i + 1 : i;
      for (Class cls : {Class::kLetter, Class::kNumber, Class::kOther}) {
        if (cp[k].cls == cls) {
          end = run(k, cls);
          break;
        }
      }
    }
    // \s+(?!\S) | \s+
    if (end == i) {
      const size_t e = run(i, Class::kSpace);
      end = e == n || e - i == 1 ? e : e - 1;
    }
    out.push_back(text.substr(cp[i].begin, cp[end - 1].end - cp[i].begin));
    i = end;
  }
  return out;
}

}  // namespace seedance::kv
