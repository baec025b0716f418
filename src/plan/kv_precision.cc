#include "seedance/plan/kv_precision.h"

#include <string>

#include "seedance/base/parse.h"
#include "seedance/kv/cache.h"

namespace seedance::plan {
namespace {

// `seedancectl kv eval --model tiny-llama/aidreams260K.bin --tokenizer tiny-llama/tok512.bin
// --bits B --window 0 -o json` (group 32, 128 tokens): kl_divergence_mean, top1_agreement.
constexpr KvPrecision kMeasured[] = {
    {"weights", "", 0.0, 1.0},
    {"int8", "8", 4.21e-06, 1.0},
    {"fp8", "fp8", 1.80e-04, 125.0 / 127.0},
    {"int6", "6", 8.36e-05, 125.0 / 127.0},
    {"int5", "5", 4.18e-04, 125.0 / 127.0},
    {"int4", "4", 1.69e-03, 124.0 / 127.0},
    {"int2", "2", 3.90e-02, 112.0 / 127.0},
};

}  // namespace

std::span<const KvPrecision> MeasuredKvPrecisions() { return kMeasured; }

double KvBitsPerValue(const KvPrecision& p, base::NumericFormat weights) {
  if (p.kv_bits.empty()) return 8.0 * base::NumericFormatBytes(weights);
  // fp8 codes pack like 8-bit integers, with the same group parameters.
  const int bits =
      p.kv_bits == "fp8" ? 8 : static_cast<int>(base::ParseInt64(p.kv_bits).value_or(8));
  return kv::PackedBitsPerValue(bits, kKvGroup);
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
