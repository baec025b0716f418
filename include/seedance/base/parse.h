// Strict number parsing: the one reader behind every number Seedance takes from text (CSV and
// trace fields, command-line values, sysfs files, key=value lists).
//
// Accepted: an optional '-', then decimal digits; for doubles also a fraction and an exponent
// ("1.5", "-2e-3", ".5", "5."). Rejected: an empty string, leading or trailing spaces, '+',
// hex ("0x10"), "nan", "inf", values out of the type's range (for doubles: beyond ±DBL_MAX, so
// every accepted double is finite), and any trailing character.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::base {

std::optional<int64_t> ParseInt64(std::string_view text);
std::optional<double> ParseFiniteDouble(std::string_view text);

// A duration in seconds: a finite, non-negative ParseFiniteDouble number followed by one of the
// units "ms", "s", "m", "h", or by nothing (seconds): "5s", "500ms", "1.5m", "10".
std::optional<double> ParseDurationSeconds(std::string_view text);

// The whitespace-separated fields of a line (space, tab, CR, LF, VT, FF), empty ones skipped:
// how /proc and sysfs files lay out their numbers. Views into `line`.
std::vector<std::string_view> SplitFields(std::string_view line);
// The lines of a text, without their '\n' or "\r\n"; a last line without '\n' counts, an empty
// text has none. Views into `text`.
std::vector<std::string_view> SplitLines(std::string_view text);

// "key=value,key=value": keys non-empty and unique, values as written (possibly empty). An empty
// text is an empty list. Errors quote the bad item and carry `where` (a flag or file:line).
StatusOr<std::vector<std::pair<std::string, std::string>>> ParseKeyValueList(
    std::string_view text, const std::string& where);

}  // namespace seedance::base
