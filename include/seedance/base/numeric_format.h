// The numeric formats that the GPU catalog, job specs and the precision
// engine talk about, with their names and storage sizes: the one family of
// format names in Seedance. Encoding adds the bit encodings of stored values
// (fp8 has two, E4M3 and E5M2; FamilyOf maps each back to its format): the
// precision engine's scalar reference (precision::Format is this enum), the
// AVX2 kernels and the CUDA kernels of port all take it. The precision policy
// chooses among fp8, fp16, bf16 and fp32 of NumericFormat.
#pragma once

#include <array>
#include <string_view>

#include "seedance/base/status.h"

namespace seedance::base {

enum class NumericFormat { kFp64, kFp32, kTf32, kBf16, kFp16, kFp8, kInt8 };

inline constexpr std::array<NumericFormat, 7> kAllNumericFormats = {
    NumericFormat::kFp64, NumericFormat::kFp32, NumericFormat::kTf32, NumericFormat::kBf16,
    NumericFormat::kFp16, NumericFormat::kFp8,  NumericFormat::kInt8};

// "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8".
std::string_view NumericFormatName(NumericFormat format);
// The inverse of NumericFormatName (lower case only); an error listing the names otherwise.
StatusOr<NumericFormat> ParseNumericFormat(std::string_view name,
                                           std::string_view where = "format");
// Bytes one value occupies in memory. TF32 is a compute mode: it is stored as FP32.
int NumericFormatBytes(NumericFormat format);

// The bit encodings of stored floating-point values: IEEE binary32 and binary16, bfloat16,
// and the two 8-bit formats of the OCP OFP8 specification.
enum class Encoding { kFp32, kFp16, kBf16, kE4M3, kE5M2 };

// fp32, fp16, bf16, or fp8 for both 8-bit encodings.
constexpr NumericFormat FamilyOf(Encoding encoding) {
  switch (encoding) {
    case Encoding::kFp32:
      return NumericFormat::kFp32;
    case Encoding::kFp16:
      return NumericFormat::kFp16;
    case Encoding::kBf16:
      return NumericFormat::kBf16;
    case Encoding::kE4M3:
    case Encoding::kE5M2:
      break;
  }
  return NumericFormat::kFp8;
}

}  // namespace seedance::base
