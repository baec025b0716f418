// The numeric formats that the GPU catalog, job specs and the precision
// engine talk about, with their names and storage sizes: the one family of
// format names in Seedance. precision::Format adds the bit encodings of stored
// values (fp8 has two, E4M3 and E5M2; precision::FamilyOf maps each back here),
// and the precision policy chooses among fp8, fp16, bf16 and fp32 of this enum.
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

}  // namespace seedance::base
