#include "seedance/plan/kv_precision.h"

#include <string>

#include "seedance/kv/cache.h"

namespace seedance::plan {
namespace {

// `seedancectl kv eval --model tiny-llama/aidreams260K.bin --tokenizer tiny-llama/tok512.bin
// --bits B --window 0 -o json` (group 32, 128 tokens): kl_divergence_mean, top1_agreement, on a
// CPU with AVX2 (SEEDANCE_SIMD=auto; the scalar kernels sum in another order, which moves these
// small KLs by up to 3%).
constexpr KvPrecision kMeasured[] = {
    {"weights", std::nullopt, 0.0, 1.0},
    {"int8", kv::KvWidth::kInt8, 4.20e-06, 1.0},
    {"fp8", kv::KvWidth::kFp8, 1.80e-04, 125.0 / 127.0},
    {"int6", kv::KvWidth::kInt6, 8.36e-05, 125.0 / 127.0},
    {"int5", kv::KvWidth::kInt5, 4.29e-04, 125.0 / 127.0},
    {"int4", kv::KvWidth::kInt4, 1.69e-03, 124.0 / 127.0},
    {"int2", kv::KvWidth::kInt2, 3.90e-02, 112.0 / 127.0},
};

}  // namespace

std::span<const KvPrecision> MeasuredKvPrecisions() { return kMeasured; }

double KvBitsPerValue(const KvPrecision& p, base::NumericFormat weights) {
  if (!p.width) return 8.0 * base::NumericFormatBytes(weights);
  // fp8 codes pack like 8-bit integers, with the same group parameters.
  return kv::PackedBitsPerValue(kv::KvCodeBits(*p.width), kKvGroup);
}

base::StatusOr<KvPrecision> FindKvPrecision(std::string_view name, std::string_view where) {
  std::string names;
  for (const KvPrecision& p : kMeasured) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  return base::InvalidArgumentError(
      "unknown KV precision '" + std::string(name) + "'; expected auto, " + names,
      std::string(where));
}

}  // namespace seedance::plan
