// One generic round-to-nearest-even encoder, parameterised by the format's
// exponent and mantissa widths. See formats.h for the rules.
//
// A finite float is sig * 2^(e - 23) with sig < 2^24 (implicit bit included
// for normals). In the target format the last mantissa bit is worth
// 2^(max(e, emin) - M), emin = 1 - bias; so the value in units of that
// quantum is sig >> s with s = max(e, emin) - M - e + 23 (>= 23 - M > 0),
// rounded to nearest even. For a normal result the code is
// ((e + bias) << M) + n - 2^M, where n in [2^M, 2^(M+1)] and the carry of
// n = 2^(M+1) moves into the exponent field by itself; for a subnormal
// result the code is n (n = 2^M is the smallest normal, also by itself).
#include "seedance/precision/formats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "seedance/base/enum_names.h"

namespace seedance::precision {
namespace {

constexpr FormatInfo kFp32Info{"fp32", 32, 8, 23, 127, true, 0x7F7FFFFFu, 0x7FC00000u, 0x7F800000u};
constexpr FormatInfo kFp16Info{"fp16", 16, 5, 10, 15, true, 0x7BFFu, 0x7FFFu, 0x7C00u};
constexpr FormatInfo kBf16Info{"bf16", 16, 8, 7, 127, true, 0x7F7Fu, 0x7FFFu, 0x7F80u};
constexpr FormatInfo kE4M3Info{"fp8_e4m3", 8, 4, 3, 7, false, 0x7Eu, 0x7Fu, 0u};
constexpr FormatInfo kE5M2Info{"fp8_e5m2", 8, 5, 2, 15, true, 0x7Bu, 0x7Fu, 0x7Cu};

// Rounds sig / 2^s to the nearest integer, ties to even.
uint64_t ShiftRoundEven(uint64_t sig, int s) {
  if (s >= 40) return 0;  // sig < 2^24: far below one half
  const uint64_t q = sig >> s;
  const uint64_t rem = sig & ((uint64_t{1} << s) - 1);
  const uint64_t half = uint64_t{1} << (s - 1);
  return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
}

uint32_t EncodeNarrow(const FormatInfo& f, float x, bool saturate) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t sign = (bits >> 31) << (f.bits - 1);
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return f.nan_code;
  const uint32_t overflow =
      saturate ? f.max_finite_code : (f.has_infinity ? f.infinity_code : f.nan_code);
  if (abs == 0x7F800000u) return overflow | sign;

  const int exp_field = static_cast<int>(abs >> 23);
  const int e = exp_field == 0 ? -126 : exp_field - 127;
  const uint64_t sig = (abs & 0x7FFFFFu) | (exp_field == 0 ? 0u : 0x800000u);
  const int m = f.mantissa_bits;
  const int emin = 1 - f.bias;
  const int s = std::max(e, emin) - m - e + 23;
  const uint64_t n = ShiftRoundEven(sig, s);
  uint64_t code;
  if (e >= emin) {
    code = (static_cast<uint64_t>(e + f.bias) << m) + n - (uint64_t{1} << m);
  } else {
    code = n;
  }
  if (code > f.max_finite_code) return overflow | sign;
  return static_cast<uint32_t>(code) | sign;
}

float DecodeNarrow(const FormatInfo& f, uint32_t code) {
  code &= (f.bits == 32 ? 0xFFFFFFFFu : ((1u << f.bits) - 1));
  const bool negative = (code >> (f.bits - 1)) & 1;
  const uint32_t mag = code & ((1u << (f.bits - 1)) - 1);
  const int m = f.mantissa_bits;
  const uint32_t exp_field = mag >> m;
  const uint32_t man = mag & ((1u << m) - 1);
  const uint32_t exp_max = (1u << f.exponent_bits) - 1;
  float v;
  if (!f.has_infinity && mag == f.nan_code) {
    v = std::numeric_limits<float>::quiet_NaN();
  } else if (f.has_infinity && exp_field == exp_max) {
    v = man == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else if (exp_field == 0) {
    v = std::ldexp(static_cast<float>(man), 1 - f.bias - m);
  } else {
    v = std::ldexp(static_cast<float>(man | (1u << m)), static_cast<int>(exp_field) - f.bias - m);
  }
  return negative ? -v : v;
}

}  // namespace

const FormatInfo& Info(Format format) {
  switch (format) {
    case Format::kFp32:
      return kFp32Info;
    case Format::kFp16:
      return kFp16Info;
    case Format::kBf16:
      return kBf16Info;
    case Format::kE4M3:
      return kE4M3Info;
    case Format::kE5M2:
      return kE5M2Info;
  }
  return kFp32Info;
}

base::StatusOr<Format> ParseFormat(std::string_view name, std::string_view where) {
  // The FormatInfo names, then the short spellings of the FP8 formats.
  static constexpr base::EnumTable<Format, 7> kNames = {{{Format::kFp32, "fp32"},
                                                         {Format::kFp16, "fp16"},
                                                         {Format::kBf16, "bf16"},
                                                         {Format::kE4M3, "fp8_e4m3"},
                                                         {Format::kE5M2, "fp8_e5m2"},
                                                         {Format::kE4M3, "e4m3"},
                                                         {Format::kE5M2, "e5m2"}}};
  return base::ParseEnum(kNames, name, where);
}

uint32_t Encode(Format format, float x, bool saturate) {
  if (format == Format::kFp32) return std::bit_cast<uint32_t>(x);
  return EncodeNarrow(Info(format), x, saturate);
}

float Decode(Format format, uint32_t code) {
  if (format == Format::kFp32) return std::bit_cast<float>(code);
  return DecodeNarrow(Info(format), code);
}

}  // namespace seedance::precision
