#include "seedance/plan/kv_precision.h"

#include <gtest/gtest.h>

#include <cmath>

#include "seedance/base/env.h"
#include "seedance/base/testing/data.h"
#include "seedance/kv/eval.h"
#include "seedance/plan/serving.h"

namespace seedance::plan {
namespace {

// The table is the engine's measurement: re-run `kv eval` on the tiny Llama for every width and
// compare (the evaluation is deterministic for one kernel choice; the table keeps three
// significant digits, and the scalar and AVX2 kernels' summation orders move these small KLs by
// up to 3%).
TEST(KvPrecisionTest, TableIsWhatTheEngineMeasures) {
  const std::string dir = (base::testing::DataDir() / "tiny-llama").string();
  SEEDANCE_REQUIRE_DATA(dir);
  for (const KvPrecision& p : MeasuredKvPrecisions()) {
    if (!p.width) continue;
    kv::EvalRequest request;
    request.model_path = dir + "/aidreams260K.bin";
    request.bits = std::string(kv::KvWidthName(*p.width));
    request.group = kKvGroup;
    request.window = 0;
    auto run = kv::RunKvEval(*base::Env::Default(), request);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    const double kl = run->report["kl_divergence_mean"].get<double>();
    EXPECT_NEAR(p.kl_mean, kl, 0.03 * kl) << p.name;
    EXPECT_NEAR(p.top1_agreement, run->report["top1_agreement"].get<double>(), 1e-9) << p.name;
    EXPECT_DOUBLE_EQ(KvBitsPerValue(p, base::NumericFormat::kBf16),
                     run->report["bits_per_value"].get<double>())
        << p.name;
  }
}

TEST(KvPrecisionTest, BitsPerValueCountTheGroupParameters) {
  using base::NumericFormat;
  // Codes packed in 32-bit words plus 64 bits of FP32 minimum and scale per 32 values.
  EXPECT_DOUBLE_EQ(KvBitsPerValue(*FindKvPrecision("int8", ""), NumericFormat::kBf16), 10);
  EXPECT_DOUBLE_EQ(KvBitsPerValue(*FindKvPrecision("fp8", ""), NumericFormat::kBf16), 10);
  EXPECT_DOUBLE_EQ(KvBitsPerValue(*FindKvPrecision("int6", ""), NumericFormat::kBf16), 9);
  EXPECT_DOUBLE_EQ(KvBitsPerValue(*FindKvPrecision("int5", ""), NumericFormat::kBf16), 8);
  EXPECT_DOUBLE_EQ(KvBitsPerValue(*FindKvPrecision("int4", ""), NumericFormat::kBf16), 6);
  EXPECT_DOUBLE_EQ(KvBitsPerValue(*FindKvPrecision("int2", ""), NumericFormat::kBf16), 4);
  EXPECT_DOUBLE_EQ(KvBitsPerValue(*FindKvPrecision("weights", ""), NumericFormat::kBf16), 16);
  EXPECT_DOUBLE_EQ(KvBitsPerValue(*FindKvPrecision("weights", ""), NumericFormat::kFp32), 32);
  auto bad = FindKvPrecision("int3", "s.yaml:4: serving.kv_precision");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "s.yaml:4: serving.kv_precision");
  EXPECT_NE(bad.status().message().find("int8"), std::string::npos);
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
  for (double bound : {0.0, 1e-5, 1e-4, 5e-4, 2e-3, 1.0}) {
    JobSpec spec = KvServingJob("{context_length: 32768, concurrent_requests: 64, max_kv_kl: " +
                                std::to_string(bound) + "}");
    const std::vector<KvPrecision> admitted = AdmittedKvPrecisions(spec.serving);
    double fewest = 1e9;
    for (const KvPrecision& p : MeasuredKvPrecisions()) {
      const bool in = std::any_of(admitted.begin(), admitted.end(),
                                  [&](const KvPrecision& a) { return a.name == p.name; });
      EXPECT_EQ(in, p.kl_mean <= bound) << p.name << " at " << bound;
      if (in) fewest = std::min(fewest, KvBitsPerValue(p, spec.serving.precision));
    }
    const std::vector<ServingEvaluation> all = SearchServing(spec, gpu);
    ASSERT_FALSE(all.empty());
    ASSERT_TRUE(all.front().fits);
    EXPECT_DOUBLE_EQ(all.front().kv_bits_per_value, fewest) << bound;
    // Every admitted width at every TP degree was evaluated.
    EXPECT_EQ(all.size(), admitted.size() * 4);  // TP 1, 2, 4, 8
  }
}

// A named width is the only one searched; "weights" is the unquantized cache of the old model.
TEST(KvPrecisionTest, NamedWidthIsKept) {
  const cost::GpuSpec& gpu = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  JobSpec spec =
      KvServingJob("{context_length: 8192, concurrent_requests: 16, kv_precision: weights}");
  const std::vector<ServingEvaluation> all = SearchServing(spec, gpu);
  ASSERT_EQ(all.size(), 4u);
  for (const ServingEvaluation& e : all) EXPECT_EQ(e.kv.name, "weights");
  // TP 1: 8 replicas, 2 requests each, of 8192 tokens x 128 KiB per token (bf16).
  const ServingEvaluation one = EvaluateServing(spec, gpu, 1, all.front().kv);
  const ServingEvaluation int4 = EvaluateServing(spec, gpu, 1, *FindKvPrecision("int4", ""));
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

}  // namespace
}  // namespace seedance::plan
