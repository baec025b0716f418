#include "seedance/precision/inspect.h"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "seedance/precision/formats.h"

namespace seedance::precision {
namespace {

base::Report Number(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

std::string Hex(uint32_t code, int bits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", bits / 4, code);
  return buf;
}

}  // namespace

base::StatusOr<float> ParseValue(std::string_view text) {
  const std::string s(text);
  if (s.empty()) return base::InvalidArgumentError("empty value");
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(s.c_str(), &end);
  if (end != s.c_str() + s.size()) {
    return base::InvalidArgumentError("not a number: '" + s + "'");
  }
  // Overflow to infinity is a fact worth showing, not an error; strtof sets
  // ERANGE for it and for underflow alike.
  return v;
}

base::Report DescribeValue(std::string_view input, float x) {
  base::Report r;
  r["input"] = std::string(input);
  r["fp32"] = Number(x);
  r["fp32_bits"] = Hex(std::bit_cast<uint32_t>(x), 32);
  base::Report& formats = r["formats"];
  for (Format f : kNarrowFormats) {
    const FormatInfo& info = Info(f);
    const uint32_t code = Encode(f, x, false);
    const uint32_t sat = Encode(f, x, true);
    const float v = Decode(f, code);
    base::Report e;
    e["code"] = Hex(code, info.bits);
    e["value"] = Number(v);
    e["abs_error"] = Number(std::fabs(static_cast<double>(v) - x) <= 3.4e38
                                ? static_cast<float>(std::fabs(static_cast<double>(v) - x))
                                : INFINITY);
    e["saturated_code"] = Hex(sat, info.bits);
    e["saturated_value"] = Number(Decode(f, sat));
    formats[std::string(info.name)] = e;
  }
  return r;
}

}  // namespace seedance::precision
