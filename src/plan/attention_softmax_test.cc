// The materialized attention's softmax: Megatron's kernel-availability rule and the bytes each
// path moves, checked against tables worked by hand from Megatron's fused_softmax.py and
// scaled_masked_softmax.h and from each PyTorch operator's reads and writes.
#include "seedance/plan/attention_softmax.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace seedance::plan {
namespace {

TEST(AttentionSoftmaxTest, RowsPerBlockFollowTheKernelsWarpLayout) {
  // get_batch_per_block: next power of two >= keys; warp = min(it, 32); two rows a warp up to
  // 128 keys; 128 threads a block.
  const std::vector<std::pair<int64_t, int64_t>> table = {
      {1, 256}, {2, 128}, {3, 64},  {4, 64},  {8, 32},  {9, 16},   {16, 16},  {17, 8},  {32, 8},
      {33, 8},  {64, 8},  {128, 8}, {129, 4}, {256, 4}, {2047, 4}, {2048, 4}, {4096, 4}};
  for (const auto& [keys, rows] : table) EXPECT_EQ(SoftmaxRowsPerBlock(keys), rows) << keys;
}

// Megatron's is_kernel_available, case by case: 16-bit input, 16 < keys <= 4096, queries and
// keys multiples of 4, b x heads-per-partition a multiple of 4 and of the rows per block.
TEST(AttentionSoftmaxTest, MegatronsKernelTakesTheShapesItsCheckAccepts) {
  struct Case {
    int64_t heads, tensor, micro_batch, sequence;
    base::NumericFormat precision;
    std::string attention;
    std::optional<Framework> framework;
    SoftmaxPath want;
  };
  using base::NumericFormat;
  const auto kFused = SoftmaxPath::kFusedKernel, kFallback = SoftmaxPath::kFallback;
  const std::vector<Case> cases = {
      // BLOOM's 64 heads on TP 8: 8 a partition, b = 1 or 2 -> 8, 16 rows: both multiples of 4.
      {64, 8, 1, 2048, NumericFormat::kFp16, "eager", Framework::kDeepSpeed, kFused},
      {64, 8, 2, 2048, NumericFormat::kBf16, "eager", Framework::kDeepSpeed, kFused},
      // 108 heads on TP 4: 27 a partition; b = 2 -> 54 rows, not a multiple of 4.
      {108, 4, 2, 2048, NumericFormat::kFp16, "eager", Framework::kDeepSpeed, kFallback},
      {108, 4, 4, 2048, NumericFormat::kFp16, "eager", Framework::kDeepSpeed, kFused},
      // Keys beyond 4096, fp32 scores: the fallback.
      {64, 8, 2, 8192, NumericFormat::kBf16, "eager", Framework::kMegatron, kFallback},
      {64, 8, 2, 4096, NumericFormat::kBf16, "eager", Framework::kMegatron, kFused},
      {64, 8, 2, 2048, NumericFormat::kFp32, "eager", Framework::kMegatron, kFallback},
      // 32 keys take 8 rows a block: 4 rows are not enough, 8 are.
      {4, 1, 1, 32, NumericFormat::kBf16, "eager", Framework::kMegatron, kFallback},
      {4, 1, 2, 32, NumericFormat::kBf16, "eager", Framework::kMegatron, kFused},
      // 16 keys: not above 16.
      {4, 1, 4, 16, NumericFormat::kBf16, "eager", Framework::kMegatron, kFallback},
      // Asked for (--no-masked-softmax-fusion), or no framework (Megatron-Core's code).
      {64, 8, 2, 2048, NumericFormat::kBf16, "eager-unfused", Framework::kMegatron, kFallback},
      {64, 8, 2, 2048, NumericFormat::kBf16, "eager", std::nullopt, kFused},
      // The PyTorch frameworks' eager attention is counted with the kernel's bytes.
      {108, 4, 2, 2048, NumericFormat::kBf16, "eager", Framework::kFsdp, kFused},
      {64, 8, 2, 2048, NumericFormat::kBf16, "flash", Framework::kMegatron, SoftmaxPath::kNoScores},
  };
  for (const Case& k : cases) {
    ModelSpec m;
    m.family = "gpt";
    m.attention_heads = k.heads;
    m.sequence_length = k.sequence;
    TrainingSpec t;
    t.precision = k.precision;
    t.attention = k.attention;
    ParallelConfig c{.tensor = k.tensor, .micro_batch = k.micro_batch};
    EXPECT_EQ(SoftmaxPathOf(m, t, c, k.framework), k.want)
        << k.heads << " heads, TP " << k.tensor << ", b " << k.micro_batch << ", s " << k.sequence
        << ", " << k.attention;
  }
}

TEST(AttentionSoftmaxTest, BytesPerScoreElementOperatorByOperator) {
  // Fused, 16-bit, with dropout: QK^T writes S (2); the kernel reads it and writes P (4);
  // dropout reads P, writes its output and a byte mask (5). Backward: dP written (2), dropout's
  // backward reads it and the mask and writes (5), the kernel reads P and the gradient and
  // writes dS (6). Kept: P, the mask, dropout's output.
  ScoreBytes b = ScoreBytesOf(SoftmaxPath::kFusedKernel, 2, true, false);
  EXPECT_EQ(b.forward, 11);
  EXPECT_EQ(b.backward, 13);
  EXPECT_EQ(b.saved, 5);
  // Megatron-DeepSpeed's fallback, 16-bit, scaled, with dropout: S written (2), cast up (2 + 4),
  // scale (8), mask (8), softmax (8), cast down (4 + 2), dropout (5). Backward: dP (2), dropout
  // (5), cast (2 + 4), softmax (12: its fp32 output, the gradient, dS), mask (8), scale (8),
  // cast (4 + 2). Kept: the fp32 probabilities, the mask, dropout's output.
  b = ScoreBytesOf(SoftmaxPath::kFallback, 2, true, true);
  EXPECT_EQ(b.forward, 43);
  EXPECT_EQ(b.backward, 47);
  EXPECT_EQ(b.saved, 7);
  // Megatron-Core's fallback (no scale), no dropout: the PV GEMM keeps the 16-bit copy beside
  // the softmax's fp32 output.
  b = ScoreBytesOf(SoftmaxPath::kFallback, 2, false, false);
  EXPECT_EQ(b.forward, 2 + 6 + 8 + 8 + 6);
  EXPECT_EQ(b.backward, 2 + 6 + 12 + 8 + 6);
  EXPECT_EQ(b.saved, 6);
  // fp32 scores: no casts, one tensor kept.
  b = ScoreBytesOf(SoftmaxPath::kFallback, 4, false, false);
  EXPECT_EQ(b.forward, 4 + 8 + 8);
  EXPECT_EQ(b.backward, 4 + 12 + 8);
  EXPECT_EQ(b.saved, 4);
  b = ScoreBytesOf(SoftmaxPath::kNoScores, 2, true, true);
  EXPECT_EQ(b.forward + b.backward + b.saved, 0);
}

}  // namespace
}  // namespace seedance::plan
