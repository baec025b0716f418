// KV-cache precision for serving plans (feature CLI-1, serving half): the code widths of the KV
// engine (kv/cache.h) a serving job may keep its cache in, the bytes each takes, and how much each
// changes the model's predictions, as the engine measured it.
//
//   bytes per token = 2 x layers x kv_heads x head_dim x bits_per_value / 8
//   bits_per_value  = the weights' format x 8 (no quantization), or kv::PackedBitsPerValue(bits,
//                     group 32): the codes plus each group's FP32 minimum and scale
//
// Quality: the mean KL divergence of the next-token distribution from the FP32 cache's, and the
// share of positions whose argmax agrees, measured by `seedancectl kv eval` on the tiny Llama of
// the shared data (docs/benchmarks.md, "KV cache: quantized caches"; kv_precision_test re-runs
// the engine and checks the table). A 260K-parameter model is a proxy for a large one: the table
// ranks the widths, it does not promise a large model's figures.
//
// A serving job picks its width with `serving.kv_precision` (a name below, or `auto`: the
// fewest bytes whose measured KL is at most `serving.max_kv_kl`).
//
// Thread safety: constant data and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "seedance/base/numeric_format.h"
#include "seedance/base/status.h"
#include "seedance/kv/width.h"

namespace seedance::plan {

struct KvPrecision {
  std::string_view name;  // "weights" (the weights' format, not quantized), "int8", "fp8", ...
  std::optional<kv::KvWidth> width;  // the cache's width (`kv eval --bits`); none for "weights"
  double kl_mean = 0;                // measured, group 32, no FP32 window
  double top1_agreement = 1;
};

// The measured widths, widest first; "weights" (no error) first of all.
std::span<const KvPrecision> MeasuredKvPrecisions();

// The group the table was measured with, and that the bytes assume.
inline constexpr int kKvGroup = 32;

// Bits per cached value of `p` when the weights are in `weights` format.
double KvBitsPerValue(const KvPrecision& p, base::NumericFormat weights);

// The entry named `name` (a name of the table), or an error listing the names.
base::StatusOr<KvPrecision> FindKvPrecision(std::string_view name, std::string_view where);

}  // namespace seedance::plan
