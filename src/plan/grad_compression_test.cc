#include "seedance/plan/grad_compression.h"

#include <gtest/gtest.h>

#include <cmath>

#include "seedance/plan/search.h"

namespace seedance::plan {
namespace {

// The payloads the engine writes for one shard of the hook, against the wire format's arithmetic
// (docs/design/comm.md): a quantizer sends a byte (int8) or half a byte (int4) a value and an
// FP32 scale per 256 values; top-k 1% sends about 2,621 indices as LEB128 gaps (1 byte for a gap
// under 128, 2 above) and FP16 values; each adds a small header. bench/comm/compress_speed.py
// measured 25.4%, 12.9% and (FP32 values, 2 bytes more per kept value) 1.32% of 4n.
TEST(GradCompressionTest, PayloadsAreTheEnginesOwn) {
  EXPECT_NEAR(FiguresOf(GradCompression::kInt8).payload_bytes_per_value, 1 + 4.0 / 256, 0.002);
  EXPECT_NEAR(FiguresOf(GradCompression::kInt4).payload_bytes_per_value, 0.5 + 4.0 / 256, 0.002);
  EXPECT_GT(FiguresOf(GradCompression::kTopK).payload_bytes_per_value, 0.01 * (1 + 2));
  EXPECT_LT(FiguresOf(GradCompression::kTopK).payload_bytes_per_value, 0.01 * (2 + 2) + 0.001);
  EXPECT_NEAR(FiguresOf(GradCompression::kInt8).payload_bytes_per_value / 4, 0.254, 0.003);
  EXPECT_NEAR(FiguresOf(GradCompression::kInt4).payload_bytes_per_value / 4, 0.129, 0.003);
  EXPECT_NEAR(FiguresOf(GradCompression::kTopK).payload_bytes_per_value, 0.0132 * 4 - 0.01 * 2,
              0.001);
}

TEST(GradCompressionTest, ExchangeSecondsFollowTheFormula) {
  const double n = 1e8, d = 16, host = 50e9, pcie = 25e9, link = 10e9;
  const CompressedExchange e =
      CompressedExchangeSeconds(GradCompression::kInt4, n, 2, d, host, pcie, link, 0.8, 1e-5);
  const CompressionFigures f = FiguresOf(GradCompression::kInt4);
  EXPECT_DOUBLE_EQ(e.pcie_s, 2 * 2 * n / pcie);
  EXPECT_DOUBLE_EQ(e.host_s, 8 * n / (host * f.compress_vs_memcpy) +
                                 d * 8 * n / (host * f.decompress_vs_memcpy));
  EXPECT_DOUBLE_EQ(e.network_s, (d - 1) * f.payload_bytes_per_value * n / (link * 0.8) + 1e-5);
  EXPECT_DOUBLE_EQ(e.total(), e.pcie_s + e.host_s + e.network_s);
}

JobSpec CompressionJob(const std::string& hardware) {
  auto spec = ParseJobSpec(
      "name: c\n"
      "model: {family: llama, layers: 24, hidden_size: 1024, attention_heads: 16, kv_heads: 16,\n"
      "        ffn_size: 2816, vocab_size: 32000, sequence_length: 2048}\n"
      "training: {global_batch: 64, micro_batch: 1, precision: bf16}\n"
      "hardware: " +
          hardware + "\n",
      "c.yaml", cost::GpuCatalog::BuiltIn());
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

constexpr const char* kCompressionHost =
    "host: {memory_gbytes: 1000, memory_gbytes_per_s: 400, "
    "pcie_gbytes_per_s: 50}";

// Over a slow network the exchange dominates a small model's step: the plan compresses, and
// faster than any uncompressed layout. On one NVLink node it does not pay, and is not chosen.
TEST(GradCompressionTest, SearchCompressesWhereTheNetworkDominates) {
  const cost::GpuSpec& gpu = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  const JobSpec slow =
      CompressionJob(std::string("{gpu: H100-SXM, gpus_per_node: 1, nodes: 8, ") +
                     "interconnect: {inter_node: ethernet, inter_node_gbytes_per_s: 1.25}, " +
                     kCompressionHost + "}");
  const SearchResult r = Search(slow, gpu);
  ASSERT_FALSE(r.fitting.empty());
  const Evaluation& best = r.fitting.front();
  EXPECT_NE(best.config.gradient_compression, GradCompression::kNone);
  EXPECT_LE(best.config.zero_stage, 1);
  double fastest_plain = 1e30;
  for (const Evaluation& e : r.fitting) {
    if (e.config.gradient_compression == GradCompression::kNone) {
      fastest_plain = std::min(fastest_plain, e.time.step_s);
    }
  }
  EXPECT_LT(best.time.step_s, fastest_plain);
  // The same layout uncompressed: only the data-parallel exchange differs.
  ParallelConfig plain = best.config;
  plain.gradient_compression = GradCompression::kNone;
  const Evaluation u = Evaluate(slow, gpu, plain);
  EXPECT_GT(u.time.dp_comm_s, best.time.dp_comm_s);
  EXPECT_DOUBLE_EQ(u.time.compute_s, best.time.compute_s);

  const JobSpec fast =
      CompressionJob(std::string("{gpu: H100-SXM, gpus_per_node: 8, ") + kCompressionHost + "}");
  const SearchResult f = Search(fast, gpu);
  ASSERT_FALSE(f.fitting.empty());
  EXPECT_EQ(f.fitting.front().config.gradient_compression, GradCompression::kNone);
}

TEST(GradCompressionTest, LayoutRulesNameTheKey) {
  const JobSpec spec =
      CompressionJob(std::string("{gpu: H100-SXM, gpus_per_node: 8, ") + kCompressionHost + "}");
  ParallelConfig c{
      .zero_stage = 2, .micro_batch = 1, .gradient_compression = GradCompression::kTopK};
  EXPECT_EQ(CheckParallelism(c, spec).where(), "parallelism.gradient_compression");
  c.zero_stage = 1;
  EXPECT_TRUE(CheckParallelism(c, spec).ok());
  c.tensor = 8;  // d = 1
  EXPECT_EQ(CheckParallelism(c, spec).where(), "parallelism.gradient_compression");
  c.tensor = 1;
  EXPECT_EQ(CheckParallelism(c, CompressionJob("{gpu: H100-SXM, gpus_per_node: 8}")).where(),
            "parallelism.gradient_compression");
  EXPECT_EQ(ParseGradCompression("sign", "k").status().where(), "k");
}

}  // namespace
}  // namespace seedance::plan
