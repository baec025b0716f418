#include "seedance/base/numeric_format.h"

#include "seedance/base/enum_names.h"

namespace seedance::base {

namespace {

constexpr EnumTable<NumericFormat, 7> kNames = {{{NumericFormat::kFp64, "fp64"},
                                                 {NumericFormat::kFp32, "fp32"},
                                                 {NumericFormat::kTf32, "tf32"},
                                                 {NumericFormat::kBf16, "bf16"},
                                                 {NumericFormat::kFp16, "fp16"},
                                                 {NumericFormat::kFp8, "fp8"},
                                                 {NumericFormat::kInt8, "int8"}}};

}  // namespace

std::string_view NumericFormatName(NumericFormat format) { return EnumName(kNames, format); }

StatusOr<NumericFormat> ParseNumericFormat(std::string_view name, std::string_view where) {
  return ParseEnum(kNames, name, where);
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
