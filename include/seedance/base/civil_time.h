// Calendar date and time (UTC, proleptic Gregorian) to seconds since the Unix
// epoch, for the time stamps of traces and logs. Header-only, no time zones.
#pragma once

#include <cstdint>

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
  return DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

static_assert(UnixSeconds(1970, 1, 1, 0, 0, 0) == 0);
static_assert(UnixSeconds(2000, 3, 1, 0, 0, 0) == 951868800);
static_assert(UnixSeconds(2017, 10, 9, 7, 1, 55) == 1507532515);

}  // namespace seedance::base
