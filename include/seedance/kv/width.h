// The width of a KV cache: the one vocabulary of kv (the cache, the engine, kv eval and kv serve)
// and plan (the serving planner's measured precisions). A width is named as the CLI's `--bits` and
// `--kv-bits` and the Python API's `bits=` take it: "32" (the FP32 cache, not quantized), "8",
// "fp8", "6", "5", "4", "2" (integer codes of that many bits, or FP8 E4M3 codes) and "adaptive"
// (each block's width chosen from its statistics, adaptive.h).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/enum_names.h"
#include "seedance/base/status.h"

namespace seedance::kv {

enum class KvWidth { kFp32, kInt8, kFp8, kInt6, kInt5, kInt4, kInt2, kAdaptive };

inline constexpr base::EnumTable<KvWidth, 8> kKvWidthNames = {{{KvWidth::kFp32, "32"},
                                                               {KvWidth::kInt8, "8"},
                                                               {KvWidth::kFp8, "fp8"},
                                                               {KvWidth::kInt6, "6"},
                                                               {KvWidth::kInt5, "5"},
                                                               {KvWidth::kInt4, "4"},
                                                               {KvWidth::kInt2, "2"},
                                                               {KvWidth::kAdaptive, "adaptive"}}};

std::string_view KvWidthName(KvWidth width);
// The names of the table, in its order; without "32" when `quantized_only` (what a quantized
// cache and `kv eval --bits` take).
std::vector<std::string> KvWidthNames(bool quantized_only);
// "8, fp8, 6, 5, 4, 2 or adaptive": the quantized names, for messages.
std::string QuantizedKvWidthList();
// Exactly a name of kKvWidthNames; otherwise an error at `where` listing them.
base::StatusOr<KvWidth> ParseKvWidth(std::string_view text, std::string_view where = "bits");

// Bits of one stored code: 32 for the FP32 cache; 8 for int8, fp8 and adaptive (adaptive blocks
// are never wider than 8-bit codes); n for the n-bit integer widths.
int KvCodeBits(KvWidth width);

}  // namespace seedance::kv
