// What a value becomes in every format: the report behind
// `seedancectl precision show` (a tool to reach for when a loss goes NaN).
#pragma once

#include <string_view>

#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::precision {

// Parses a decimal, scientific or hexadecimal float ("1e-8", "0x1p-9"), or
// "nan", "inf", "-inf". The whole text must be a number.
base::StatusOr<float> ParseValue(std::string_view text);

// {"input", "fp32": value, "fp32_bits": "0x...", "formats": {name: {"code",
// "value", "abs_error", "saturated_code", "saturated_value"}}}. Values that are
// not finite appear as the strings "nan", "inf" and "-inf" (JSON has no such
// numbers); codes as hexadecimal strings.
base::Report DescribeValue(std::string_view input, float x);

}  // namespace seedance::precision
