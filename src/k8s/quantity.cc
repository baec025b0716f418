#include "seedance/k8s/quantity.h"

#include <array>
#include <cstddef>
#include <utility>

namespace seedance::k8s {
namespace {

__extension__ typedef __int128 Int;  // a GCC and clang extension; -Wpedantic accepts it so marked

constexpr Int kLimit = Int{INT64_MAX};

// value = mantissa × 10^exp10 × 2^exp2, mantissa >= 0.
struct Parsed {
  bool negative = false;
  Int mantissa = 0;
  int exp10 = 0;
  int exp2 = 0;
};

base::Status Bad(std::string_view text, std::string_view where, std::string_view why) {
  return base::InvalidArgumentError(
      "\"" + std::string(text.substr(0, 40)) + "\": " + std::string(why) +
          " (a Kubernetes quantity: a number with an optional suffix such as m, k, M, Ki, Gi, e3)",
      std::string(where));
}

base::StatusOr<Parsed> Parse(std::string_view text, std::string_view where) {
  Parsed p;
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) p.negative = text[i++] == '-';
  int digits = 0, fraction = 0;
  bool dot = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (++digits > 30) return Bad(text, where, "too many digits");
    p.mantissa = p.mantissa * 10 + (c - '0');
    if (dot) ++fraction;
  }
  if (digits == 0) return Bad(text, where, "expected a number");
  p.exp10 = -fraction;
  const std::string_view suffix = text.substr(i);
  static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary = {
      {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}}};
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDecimal = {{{"", 0},
                                                                                 {"n", -9},
                                                                                 {"u", -6},
                                                                                 {"m", -3},
                                                                                 {"k", 3},
                                                                                 {"M", 6},
                                                                                 {"G", 9},
                                                                                 {"T", 12},
                                                                                 {"P", 15},
                                                                                 {"E", 18}}};
  for (const auto& [s, e] : kBinary) {
    if (suffix == s) {
      p.exp2 = e;
      return p;
    }
  }
  for (const auto& [s, e] : kDecimal) {
    if (suffix == s) {
      p.exp10 += e;
      return p;
    }
  }
  if (suffix[0] == 'e' || suffix[0] == 'E') {  // a decimal exponent: e3, E-2
    size_t j = 1;
    bool negative = false;
    if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) negative = suffix[j++] == '-';
    if (j == suffix.size()) return Bad(text, where, "expected digits after the exponent");
    int e = 0;
    for (; j < suffix.size(); ++j) {
      if (suffix[j] < '0' || suffix[j] > '9' || e > 1000) {
        return Bad(text, where, "expected a whole-number exponent");
      }
      e = e * 10 + (suffix[j] - '0');
    }
    p.exp10 += negative ? -e : e;
    return p;
  }
  return Bad(text, where, "unknown suffix \"" + std::string(suffix.substr(0, 8)) + "\"");
}

// ceil(p × 10^scale10) as int64.
base::StatusOr<int64_t> Scaled(std::string_view text, std::string_view where, int scale10) {
  SEEDANCE_ASSIGN_OR_RETURN(Parsed p, Parse(text, where));
  Int value = p.mantissa;
  int exp10 = p.exp10 + scale10;
  for (int k = 0; k < p.exp2; ++k) {
    value *= 2;
    if (value > kLimit * Int{1000000000} * Int{1000000000}) return Bad(text, where, "too large");
  }
  if (value == 0) return int64_t{0};
  for (; exp10 > 0; --exp10) {
    value *= 10;
    if (value > kLimit * Int{1000000000}) return Bad(text, where, "too large");
  }
  // One decimal place at a time: ceil(ceil(a / 10^j) / 10^k) = ceil(a / 10^(j+k)), and the same
  // for the floor, so the value never needs a divisor it cannot hold (a long mantissa with a
  // large negative exponent once rounded to 1 whatever it was). Rounding up a negative value
  // moves toward zero. Stops once the value is 1 (or 0): further places leave it so.
  for (; exp10 < 0 && value > 1; ++exp10) value = p.negative ? value / 10 : (value + 9) / 10;
  if (exp10 < 0 && value == 1 && p.negative) value = 0;  // -0.001 of a unit rounds up to 0
  const Int result = p.negative ? -value : value;
  if (result > kLimit || result < -kLimit) return Bad(text, where, "too large");
  return static_cast<int64_t>(result);
}

}  // namespace

base::StatusOr<int64_t> ParseQuantity(std::string_view text, std::string_view where) {
  return Scaled(text, where, 0);
}

base::StatusOr<int64_t> ParseQuantityMilli(std::string_view text, std::string_view where) {
  return Scaled(text, where, 3);
}

}  // namespace seedance::k8s
