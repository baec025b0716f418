#include "seedance/base/numeric_format.h"

namespace seedance::base {

std::string_view NumericFormatName(NumericFormat format) {
  switch (format) {
    case NumericFormat::kFp64:
      return "fp64";
    case NumericFormat::kFp32:
      return "fp32";
    case NumericFormat::kTf32:
      return "tf32";
    case NumericFormat::kBf16:
      return "bf16";
    case NumericFormat::kFp16:
      return "fp16";
    case NumericFormat::kFp8:
      return "fp8";
    case NumericFormat::kInt8:
      return "int8";
  }
  return "unknown";
}

std::optional<NumericFormat> ParseNumericFormat(std::string_view name) {
  for (NumericFormat f : kAllNumericFormats) {
    if (NumericFormatName(f) == name) return f;
  }
  return std::nullopt;
}

int NumericFormatBytes(NumericFormat format) {
  switch (format) {
    case NumericFormat::kFp64:
      return 8;
    case NumericFormat::kFp32:
    case NumericFormat::kTf32:
      return 4;
    case NumericFormat::kBf16:
    case NumericFormat::kFp16:
      return 2;
    case NumericFormat::kFp8:
    case NumericFormat::kInt8:
      return 1;
  }
  return 0;
}

}  // namespace seedance::base
