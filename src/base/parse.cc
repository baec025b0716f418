#include "seedance/base/parse.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace seedance::base {

std::optional<int64_t> ParseInt64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);  // base 10, no '+', no spaces
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<double> ParseFiniteDouble(std::string_view text) {
  if (text.empty()) return std::nullopt;
  // from_chars also reads "nan", "inf" and "infinity"; a finite number starts with a digit,
  // '-' or '.', and the result is checked to be finite below.
  const char c = text.front() == '-' && text.size() > 1 ? text[1] : text.front();
  if (!((c >= '0' && c <= '9') || c == '.')) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<double> ParseDurationSeconds(std::string_view text) {
  struct Unit {
    std::string_view suffix;
    double seconds;
  };
  // "ms" before "m" and "s": the longest suffix that matches wins.
  static constexpr Unit kUnits[] = {{"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
  double scale = 1;
  for (const Unit& u : kUnits) {
    if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
      text.remove_suffix(u.suffix.size());
      scale = u.seconds;
      break;
    }
  }
  const std::optional<double> v = ParseFiniteDouble(text);
  if (!v || *v < 0) return std::nullopt;
  const double seconds = *v * scale;
  if (!std::isfinite(seconds)) return std::nullopt;
  return seconds;
}

StatusOr<std::vector<std::pair<std::string, std::string>>> ParseKeyValueList(
    std::string_view text, const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  if (text.empty()) return out;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = text.find(',', i);
    if (j == std::string_view::npos) j = text.size();
    const std::string_view item = text.substr(i, j - i);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return InvalidArgumentError("expected KEY=VALUE, got '" + std::string(item) + "'", where);
    }
    std::string key(item.substr(0, eq));
    for (const auto& [k, v] : out) {
      if (k == key) return InvalidArgumentError("key '" + key + "' is given twice", where);
    }
    out.emplace_back(std::move(key), std::string(item.substr(eq + 1)));
    i = j + 1;
  }
  return out;
}

std::vector<std::string_view> SplitFields(std::string_view line) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && space(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !space(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    start = nl + 1;
  }
  return out;
}

}  // namespace seedance::base
