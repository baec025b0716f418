// Scalar reference encoders and decoders for the floating-point formats of
// mixed-precision training (feature PREC-1): FP16 (IEEE binary16), BF16, and the
// two 8-bit formats of the OCP "OFP8" specification, E4M3 and E5M2.
//
// Every encoder rounds to nearest, ties to even. Out-of-range values follow
// the format's rules unless `saturate` is set:
//
//   format  exp/man bias  max finite  overflow (no saturation)  NaN code
//   FP16     5/10    15   65504       +-inf (0x7C00)            0x7FFF
//   BF16     8/7    127   3.3895e38   +-inf (0x7F80)            0x7FFF
//   E4M3     4/3      7   448         NaN (0x7F / 0xFF)         0x7F
//   E5M2     5/2     15   57344       +-inf (0x7C)              0x7F
//
// With `saturate` (NVIDIA's __NV_SATFINITE), finite overflow and infinities
// map to the largest finite value of the same sign; NaN stays NaN. A NaN input
// always encodes to the canonical code in the last column, whatever its sign
// and payload, as NVIDIA's host conversions do (tests check every code and
// 10^7 random values bit for bit against cuda_fp16.h / cuda_bf16.h /
// cuda_fp8.h). Note that 464 is the exact midpoint between 448 and the next
// E4M3 step (480, which would be the NaN code); ties go to the even mantissa,
// so 464 encodes to 448 even without saturation, and 464.0001 to NaN.
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "seedance/base/numeric_format.h"
#include "seedance/base/status.h"

namespace seedance::precision {

// The bit encodings of stored values (base::Encoding, shared with port's kernels). Each belongs
// to one base::NumericFormat (the name the catalog, job specs and the precision policy use):
// E4M3 and E5M2 are the two encodings of fp8 (base::FamilyOf).
using Format = base::Encoding;
using base::FamilyOf;

inline constexpr std::array<Format, 4> kNarrowFormats = {Format::kFp16, Format::kBf16,
                                                         Format::kE4M3, Format::kE5M2};

struct FormatInfo {
  std::string_view name;  // "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp32"
  int bits;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_infinity;
  uint32_t max_finite_code;  // positive
  uint32_t nan_code;         // what NaN inputs encode to
  uint32_t infinity_code;    // positive infinity; 0 when the format has none
};

const FormatInfo& Info(Format format);
// Accepts the names above plus "e4m3" and "e5m2"; an error listing them otherwise.
base::StatusOr<Format> ParseFormat(std::string_view name, std::string_view where = "format");

// The code of `x` in `format` (in the low `bits` bits). For kFp32 the float's bits.
uint32_t Encode(Format format, float x, bool saturate = false);
// The exact value of `code` (low bits only) in `format`.
float Decode(Format format, uint32_t code);

inline uint16_t FloatToHalf(float x, bool saturate = false) {
  return static_cast<uint16_t>(Encode(Format::kFp16, x, saturate));
}
inline uint16_t FloatToBf16(float x, bool saturate = false) {
  return static_cast<uint16_t>(Encode(Format::kBf16, x, saturate));
}
inline uint8_t FloatToE4M3(float x, bool saturate = false) {
  return static_cast<uint8_t>(Encode(Format::kE4M3, x, saturate));
}
inline uint8_t FloatToE5M2(float x, bool saturate = false) {
  return static_cast<uint8_t>(Encode(Format::kE5M2, x, saturate));
}
inline float HalfToFloat(uint16_t h) { return Decode(Format::kFp16, h); }
inline float Bf16ToFloat(uint16_t b) { return Decode(Format::kBf16, b); }
inline float E4M3ToFloat(uint8_t c) { return Decode(Format::kE4M3, c); }
inline float E5M2ToFloat(uint8_t c) { return Decode(Format::kE5M2, c); }

}  // namespace seedance::precision
