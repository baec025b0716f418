// Fused 4-bit attention scores against this machine's read bandwidth,
// measured in the same run (features KV-*).
//
//   BM_ReadBandwidth       AVX2 loads over a buffer as large as the packed keys
//   BM_Scores4Bit/simd     q . k_t for every cached token, straight from 4-bit codes (AVX2)
//   BM_Scores4Bit/scalar   the same through the plain scalar path
//   BM_ScoresOneGroupCached  the AVX2 kernel on one group of codes held in L1: its
//                          compute speed alone, no memory traffic
//   BM_Dequant4Bit         the scalar dequantization loop (codes -> FP32)
//   BM_TokenizerEncode/N   the tiny llama's BPE encoder on an N-byte prompt (issue 40 class 8:
//                          it was quadratic; now O(n log n)); needs SEEDANCE_DATA_DIR's tiny-llama
//
// Bytes per second count the packed key codes read (tokens x channels / 2);
// read_Bps also counts the group parameters the kernel reads beside them.
// Run with --benchmark_enable_random_interleaving=true: the read-bandwidth
// reference of a shared machine drifts, and interleaving compares like with like.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "seedance/kv/cache.h"
#include "seedance/kv/estimate.h"
#include "seedance/kv/llama.h"
#include "seedance/port/simd_kv.h"

namespace {

using namespace seedance;

constexpr int kTokens = 1 << 20;  // 64 MiB of 4-bit codes at 128 channels: beyond the caches
constexpr int kChannels = 128;

std::unique_ptr<kv::KvCache> MakeCache(bool simd) {
  const kv::CacheShape shape{1, kChannels, kChannels, kTokens};
  kv::QuantConfig c = kv::QuantConfig::Of(kv::KvWidth::kInt4, 32, 0);
  c.kernel = simd ? port::SimdKernel::kAuto : port::SimdKernel::kScalar;
  auto cache = std::move(*kv::NewQuantizedCache(shape, c));
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> k(kChannels), v(kChannels, 0.0f);
  for (int t = 0; t < kTokens; ++t) {
    for (float& x : k) x = g(rng);
    (void)cache->Append(0, t, k, v);
  }
  return cache;
}

void BM_ReadBandwidth(benchmark::State& state) {
  std::vector<uint8_t> buf(static_cast<size_t>(kTokens) * kChannels / 2, 1);
  for (auto _ : state) benchmark::DoNotOptimize(port::Avx2ReadBytes(buf.data(), buf.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(buf.size()));
}
BENCHMARK(BM_ReadBandwidth);

void BM_Scores4Bit(benchmark::State& state) {
  static auto simd = MakeCache(true);
  static auto scalar = MakeCache(false);
  const auto& cache = state.range(0) ? simd : scalar;
  std::vector<float> q(kChannels, 0.5f), out(kTokens);
  for (auto _ : state) {
    cache->Scores(0, 0, q, kTokens, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kTokens * kChannels / 2);
  // Everything the kernel must read: the codes plus each group's FP32 scale
  // and min per channel (8 bytes per 16 bytes of codes).
  state.counters["read_Bps"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kTokens * kChannels / 2 * 1.5,
                         benchmark::Counter::kIsRate, benchmark::Counter::OneK::kIs1024);
  state.SetLabel(state.range(0) ? "simd" : "scalar");
}
BENCHMARK(BM_Scores4Bit)->Arg(1)->Arg(0);

void BM_ScoresOneGroupCached(benchmark::State& state) {
  std::mt19937 rng(2);
  std::vector<uint8_t> codes(static_cast<size_t>(kChannels) * 16);  // 32 tokens x 128 channels
  for (auto& c : codes) c = static_cast<uint8_t>(rng());
  std::vector<float> q(kChannels, 0.5f), scale(kChannels, 0.1f), min(kChannels, -1.0f), out(32);
  for (auto _ : state) {
    port::Avx2Scores4BitPairs(codes.data(), kChannels, q.data(), scale.data(), min.data(),
                              out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(codes.size()));
}
BENCHMARK(BM_ScoresOneGroupCached);

void BM_Dequant4Bit(benchmark::State& state) {
  double gbytes_per_s = 0;
  for (auto _ : state) gbytes_per_s = kv::MeasureCpuDequant(4, int64_t{kTokens} * kChannels / 8);
  state.counters["fp32_out_gbytes_per_s"] = gbytes_per_s;
}
BENCHMARK(BM_Dequant4Bit)->Iterations(1);

void BM_TokenizerEncode(benchmark::State& state) {
  const char* data = std::getenv("SEEDANCE_DATA_DIR");
  const std::string path =
      std::string(data != nullptr ? data : "../shared/data") + "/tiny-llama/tok512.bin";
  auto tok = kv::Tokenizer::Load(*base::Env::Default(), path, 512);
  if (!tok.ok()) {
    state.SkipWithError(("no tokenizer: " + tok.status().ToString()).c_str());
    return;
  }
  const std::vector<std::string> words = {
      "the ",  "a ",      "gentle ", "hum ", "once upon a time ",
      "Lily ", "played ", "with ",   "her ", "dog. "};
  std::mt19937 rng(3);
  std::string prompt;
  while (prompt.size() < static_cast<size_t>(state.range(0))) prompt += words[rng() % words.size()];
  size_t tokens = 0;
  for (auto _ : state) {
    const std::vector<int> ids = tok->Encode(prompt);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.counters["tokens"] = static_cast<double>(tokens);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(prompt.size()));
}
BENCHMARK(BM_TokenizerEncode)
    ->Arg(4 << 10)
    ->Arg(16 << 10)
    ->Arg(64 << 10)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
