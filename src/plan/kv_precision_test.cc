#include "seedance/plan/kv_precision.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "seedance/plan/model_figures.h"
#include "seedance/plan/serving.h"

namespace seedance::plan {
namespace {

// Each format's bits against its own definition: Seedance's codes in 32-bit words plus 64 bits
// of FP32 minimum and scale per group of 32; ggml's q8_0 block is 32 int8 codes and an fp16
// scale (34 bytes), q4_0 16 bytes of nibbles and an fp16 scale (18 bytes); vLLM's fp8 one byte.
TEST(KvPrecisionTest, BitsPerValueAreEachFormatsOwn) {
  using base::NumericFormat;
  const auto bits = [](ServingEngine e, const char* name, NumericFormat w) {
    return KvBitsPerValue(*FindKvPrecision(e, name, ""), w);
  };
  const auto packed = [](int b) { return (std::ceil(32.0 / (32 / b)) * 32 + 64) / 32; };
  for (const auto& [name, b] : {std::pair{"int8", 8}, std::pair{"fp8", 8}, std::pair{"int6", 6},
                                std::pair{"int5", 5}, std::pair{"int4", 4}, std::pair{"int2", 2}}) {
    EXPECT_DOUBLE_EQ(bits(ServingEngine::kSeedance, name, NumericFormat::kBf16), packed(b)) << name;
  }
  EXPECT_DOUBLE_EQ(bits(ServingEngine::kSeedance, "int5", NumericFormat::kBf16), 8);
  EXPECT_DOUBLE_EQ(bits(ServingEngine::kLlamaCpp, "q8_0", NumericFormat::kBf16), 34.0 * 8 / 32);
  EXPECT_DOUBLE_EQ(bits(ServingEngine::kLlamaCpp, "q4_0", NumericFormat::kBf16), 18.0 * 8 / 32);
  EXPECT_DOUBLE_EQ(bits(ServingEngine::kVllm, "fp8", NumericFormat::kBf16), 8);
  // Unquantized: the activations' format, bf16 beside 8- and 16-bit weights.
  for (ServingEngine e :
       {ServingEngine::kVllm, ServingEngine::kSeedance, ServingEngine::kLlamaCpp}) {
    EXPECT_DOUBLE_EQ(bits(e, "weights", NumericFormat::kFp8), 16);
    EXPECT_DOUBLE_EQ(bits(e, "weights", NumericFormat::kBf16), 16);
    EXPECT_DOUBLE_EQ(bits(e, "weights", NumericFormat::kFp32), 32);
  }
}

// An engine offers its own formats only; the error lists them.
TEST(KvPrecisionTest, EachEngineOffersItsOwnFormats) {
  auto bad = FindKvPrecision(ServingEngine::kLlamaCpp, "int5", "s.yaml:4: serving.kv_precision");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "s.yaml:4: serving.kv_precision");
  EXPECT_NE(bad.status().message().find("q4_0"), std::string::npos);
  EXPECT_NE(bad.status().message().find("llama.cpp"), std::string::npos);
  EXPECT_FALSE(FindKvPrecision(ServingEngine::kVllm, "int4", "").ok());
  EXPECT_TRUE(FindKvPrecision(ServingEngine::kSeedance, "int4", "").ok());
  // The measurement ranks each engine's integer formats: fewer bits, larger KL.
  const auto kl = [](ServingEngine e, const char* name) {
    return FindKvPrecision(e, name, "")->kl_mean;
  };
  using E = ServingEngine;
  EXPECT_LT(kl(E::kSeedance, "int8"), kl(E::kSeedance, "int6"));
  EXPECT_LT(kl(E::kSeedance, "int6"), kl(E::kSeedance, "int5"));
  EXPECT_LT(kl(E::kSeedance, "int5"), kl(E::kSeedance, "int4"));
  EXPECT_LT(kl(E::kSeedance, "int4"), kl(E::kSeedance, "int2"));
  EXPECT_LT(kl(E::kLlamaCpp, "q8_0"), kl(E::kLlamaCpp, "q4_0"));
  for (const KvPrecision& p : MeasuredKvPrecisions()) {
    EXPECT_EQ(p.kl_mean == 0, p.name == "weights") << p.name;
    EXPECT_GT(p.top1_agreement, 0.5) << p.name;
  }
}

JobSpec KvServingJob(const std::string& serving) {
  const std::string yaml =
      "name: chat\n"
      "model: {family: llama, layers: 32, hidden_size: 4096, attention_heads: 32, kv_heads: 8,\n"
      "        ffn_size: 14336, vocab_size: 128256, sequence_length: 8192}\n"
      "serving: " +
      serving +
      "\n"
      "hardware: {gpu: H100-SXM, gpus_per_node: 8}\n";
  auto spec = ParseJobSpec(yaml, "s.yaml", cost::GpuCatalog::BuiltIn());
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

// Auto admits exactly the widths under the bound; the search returns the fastest, and at a
// memory-bound decode that is the one with the fewest bits (a brute force over the table).
TEST(KvPrecisionTest, AutoChoosesTheFewestBitsUnderTheBound) {
  const cost::GpuSpec& gpu = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  for (const char* engine : {"vllm", "seedance", "llama.cpp"}) {
    for (double bound : {0.0, 1e-5, 1e-4, 5e-4, 2e-3, 1e-2, 1.0}) {
      JobSpec spec = KvServingJob(
          "{context_length: 8192, concurrent_requests: 256, engine: " + std::string(engine) +
          ", max_kv_kl: " + std::to_string(bound) + "}");
      const std::vector<KvPrecision> admitted = AdmittedKvPrecisions(spec.serving);
      double fewest = 1e9;
      for (const KvPrecision& p : MeasuredKvPrecisions()) {
        const bool in = std::any_of(admitted.begin(), admitted.end(), [&](const KvPrecision& a) {
          return a.engine == p.engine && a.name == p.name;
        });
        EXPECT_EQ(in, ServingEngineName(p.engine) == engine && p.kl_mean <= bound)
            << p.name << " at " << bound;
        if (in) fewest = std::min(fewest, KvBitsPerValue(p, spec.serving.precision));
      }
      const std::vector<ServingEvaluation> all = SearchServing(spec, gpu);
      ASSERT_FALSE(all.empty());
      ASSERT_TRUE(all.front().fits);
      EXPECT_DOUBLE_EQ(all.front().kv_bits_per_value, fewest) << engine << " " << bound;
      EXPECT_EQ(all.size(), admitted.size() * 4);  // TP 1, 2, 4, 8
    }
  }
}

// A named width is the only one searched; "weights" is the unquantized cache of the old model.
TEST(KvPrecisionTest, NamedWidthIsKept) {
  const cost::GpuSpec& gpu = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  JobSpec spec = KvServingJob(
      "{context_length: 8192, concurrent_requests: 16, engine: seedance, kv_precision: weights}");
  const std::vector<ServingEvaluation> all = SearchServing(spec, gpu);
  ASSERT_EQ(all.size(), 4u);
  for (const ServingEvaluation& e : all) EXPECT_EQ(e.kv.name, "weights");
  // TP 1: 8 replicas, 2 requests each, of 8192 tokens x 128 KiB per token (bf16).
  const ServingEvaluation one = EvaluateServing(spec, gpu, 1, all.front().kv);
  const ServingEvaluation int4 =
      EvaluateServing(spec, gpu, 1, *FindKvPrecision(ServingEngine::kSeedance, "int4", ""));
  ASSERT_EQ(one.requests_per_replica, 2);
  const double kv_bf16 = 2.0 * 8192 * KvCacheBytesPerToken(spec.model, base::NumericFormat::kBf16);
  const double fragmentation = 1 + MemorySettings{}.fragmentation_fraction;
  EXPECT_NEAR(static_cast<double>(one.memory_bytes_per_gpu - int4.memory_bytes_per_gpu),
              kv_bf16 * (1 - 6.0 / 16) * fragmentation, 2.0);
  EXPECT_GT(int4.tokens_per_s, one.tokens_per_s);
  // An unknown name is an error naming the key.
  auto bad = ParseJobSpec(
      "name: x\nmodel: {family: llama, layers: 2, hidden_size: 64, attention_heads: 4, kv_heads: 4,"
      " ffn_size: 128, vocab_size: 100, sequence_length: 32}\n"
      "serving: {context_length: 32, concurrent_requests: 1, kv_precision: int3}\n"
      "hardware: {gpu: H100-SXM, gpus_per_node: 1}\n",
      "s.yaml", cost::GpuCatalog::BuiltIn());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "s.yaml:3: serving.kv_precision");
}

// The context is the model's at most: a longer one is an error, and the largest context that
// fits is capped there however much memory is left.
TEST(KvPrecisionTest, ContextStopsAtTheModels) {
  const cost::GpuSpec& gpu = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  auto longer = ParseJobSpec(
      "name: x\nmodel: {family: llama, layers: 2, hidden_size: 64, attention_heads: 4, kv_heads: 4,"
      " ffn_size: 128, vocab_size: 100, sequence_length: 32}\n"
      "serving: {context_length: 33, concurrent_requests: 1}\n"
      "hardware: {gpu: H100-SXM, gpus_per_node: 1}\n",
      "s.yaml", cost::GpuCatalog::BuiltIn());
  ASSERT_FALSE(longer.ok());
  EXPECT_EQ(longer.status().where(), "s.yaml:3: serving.context_length");
  JobSpec spec = KvServingJob("{context_length: 4096, concurrent_requests: 1}");
  for (const ServingEvaluation& e : SearchServing(spec, gpu)) {
    EXPECT_EQ(e.max_context_length, spec.model.sequence_length);
  }
}

// Prefill against its formula: compute-bound at long prompts, so the time grows as
// 2 x parameters x p + 2 x layers x p^2 x h, and TP divides it.
TEST(KvPrecisionTest, PrefillGrowsWithThePromptsFlops) {
  const cost::GpuSpec& gpu = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  const auto prefill = [&](int64_t prompt, int64_t tensor) {
    JobSpec spec = KvServingJob("{context_length: 8192, concurrent_requests: 8, prompt_length: " +
                                std::to_string(prompt) + "}");
    return EvaluateServing(spec, gpu, tensor,
                           *FindKvPrecision(ServingEngine::kVllm, "weights", ""));
  };
  const JobSpec spec = KvServingJob("{context_length: 8192, concurrent_requests: 8}");
  EXPECT_EQ(spec.serving.prompt_length, 4096);  // half the context unless stated
  const double params = static_cast<double>(ComputeModelFigures(spec.model).parameters);
  const auto flops = [&](double p) { return 2 * params * p + 2 * 32 * p * p * 4096; };
  const ServingEvaluation a = prefill(2048, 1), b = prefill(8192, 1);
  const double fixed = 32 * 10 * HardwareModel{}.coefficients[Coef::kKernelGap];
  EXPECT_NEAR((b.prefill_s - fixed) / (a.prefill_s - fixed), flops(8192) / flops(2048), 1e-9);
  EXPECT_LT(prefill(8192, 2).prefill_s, b.prefill_s);
  EXPECT_NEAR(b.prefill_tokens_per_s_per_gpu, 8192 / b.prefill_s, 1e-6 * 8192 / b.prefill_s);
}

}  // namespace
}  // namespace seedance::plan
