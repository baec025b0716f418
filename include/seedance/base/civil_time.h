// Calendar date and time (UTC, proleptic Gregorian) to seconds since the Unix
// epoch, for the time stamps of traces and logs. Header-only, no time zones.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace seedance::base {

// Days from 1970-01-01 to year-month-day (Howard Hinnant's days_from_civil).
constexpr int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

constexpr int64_t UnixSeconds(int64_t y, int mo, int d, int h, int mi, int64_t s) {
  return DaysFromCivil(y, mo, d) * 86400 + int64_t{h} * 3600 + int64_t{mi} * 60 + s;
}

// "YYYY-MM-DD HH:MM:SS" exactly (digits where the pattern has them: no signs, no spaces), year
// 1970-9999, month 1-12, day 1-31, hour 0-23, minute 0-59, second 0-60, to UnixSeconds; nullopt
// otherwise. Bytes after the 19 characters are the caller's (a fraction, a bracket). The ranges
// keep every accepted stamp far from int64 overflow.
inline std::optional<int64_t> ParseCivilSeconds(std::string_view text) {
  static constexpr std::string_view kShape = "dddd-dd-dd dd:dd:dd";
  if (text.size() < kShape.size()) return std::nullopt;
  for (size_t i = 0; i < kShape.size(); ++i) {
    const bool digit = text[i] >= '0' && text[i] <= '9';
    if (kShape[i] == 'd' ? !digit : text[i] != kShape[i]) return std::nullopt;
  }
  auto field = [text](size_t at, size_t n) {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  const int y = field(0, 4), mo = field(5, 2), d = field(8, 2), h = field(11, 2), mi = field(14, 2),
            s = field(17, 2);
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) {
    return std::nullopt;
  }
  return UnixSeconds(y, mo, d, h, mi, s);
}

static_assert(UnixSeconds(1970, 1, 1, 0, 0, 0) == 0);
static_assert(UnixSeconds(2000, 3, 1, 0, 0, 0) == 951868800);
static_assert(UnixSeconds(2017, 10, 9, 7, 1, 55) == 1507532515);

}  // namespace seedance::base
