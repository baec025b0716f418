// KV-cache precision for serving plans (feature CLI-1, serving half): the KV-cache formats each
// serving engine runs, the bytes each takes, and how much each changes a real model's
// predictions.
//
//   bytes per token = 2 x layers x kv_heads x head_dim x bits_per_value / 8
//   bits_per_value  = unquantized ("weights"): the activations' format, 16 bits beside 8- and
//                     16-bit weights, 32 beside fp32 weights; otherwise the format's own:
//     seedance   kv::PackedBitsPerValue(bits, group 32): the codes plus each group's FP32 minimum
//                and scale (fp8 codes pack like 8-bit integers: 10 bits);
//     vllm       fp8 (kv_cache_dtype=fp8, E4M3 with a per-tensor scale): 8 bits;
//     llama.cpp  q8_0 and q4_0 (type_k/type_v): ggml's block sizes, 34 and 18 bytes a block of 32
//                values: 8.5 and 4.5 bits.
//
// Quality: the mean KL divergence of the next-token distribution from the unquantized cache's
// and the share of steps whose argmax agrees, measured on SmolLM2-135M-Instruct at a context of
// 8,128 tokens of real text by bench/kv/quality_real.py (docs/benchmarks.md, "KV cache on a real
// model: quality"), each engine against its own unquantized cache. A 135M-parameter model is one
// model: the table ranks the formats, it does not promise another model's figures.
//
// A serving job names its engine (`serving.engine`; only that engine's formats are weighed) and
// picks the format with `serving.kv_precision` (a name the engine offers, or `auto`: the fewest
// bytes whose measured KL is at most `serving.max_kv_kl`).
//
// Thread safety: constant data and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "seedance/base/enum_names.h"
#include "seedance/base/numeric_format.h"
#include "seedance/base/status.h"

namespace seedance::plan {

// The engine a serving job runs on. vLLM is the default: the engine a GPU deployment most often
// uses; `seedance` is `seedancectl kv serve`.
enum class ServingEngine { kVllm, kSeedance, kLlamaCpp };

inline constexpr base::EnumTable<ServingEngine, 3> kServingEngineNames = {
    {{ServingEngine::kVllm, "vllm"},
     {ServingEngine::kSeedance, "seedance"},
     {ServingEngine::kLlamaCpp, "llama.cpp"}}};

std::string_view ServingEngineName(ServingEngine engine);
base::StatusOr<ServingEngine> ParseServingEngine(std::string_view text, std::string_view where);

struct KvPrecision {
  ServingEngine engine = ServingEngine::kVllm;
  std::string_view name;      // the engine's name for it; "weights": unquantized
  double bits_per_value = 0;  // 0 for "weights" (KvBitsPerValue gives the weights' bits)
  double kl_mean = 0;         // measured (see above)
  double top1_agreement = 1;
};

// Every engine's formats, each engine's "weights" (no error) first, then widest first.
std::span<const KvPrecision> MeasuredKvPrecisions();

// Bits per cached value of `p` when the weights are in `weights` format.
double KvBitsPerValue(const KvPrecision& p, base::NumericFormat weights);

// `engine`'s format named `name`, or an error at `where` listing the names that engine offers.
base::StatusOr<KvPrecision> FindKvPrecision(ServingEngine engine, std::string_view name,
                                            std::string_view where);

}  // namespace seedance::plan
