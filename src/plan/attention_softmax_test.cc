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

// The two checks, case by case. Megatron-DeepSpeed's (as megatron/core/fusions): 16-bit input,
// 16 < keys <= 4096, queries and keys multiples of 4, b x heads-per-partition a multiple of 4 and
// of the rows per block. Transformer Engine's (Megatron-Core, the default): 16-bit, 16 < keys <
// 16384, keys a multiple of 8, b x heads a multiple of 4, queries a multiple of the rows per
// block.
TEST(AttentionSoftmaxTest, EachCheckTakesTheShapesItAccepts) {
  struct Case {
    int64_t heads, tensor, micro_batch, sequence;
    base::NumericFormat precision;
    std::string attention;
    std::optional<Framework> framework;
    SoftmaxPath want;
  };
  using base::NumericFormat;
  const auto kFused = SoftmaxPath::kFusedKernel, kFallback = SoftmaxPath::kFallback;
  const auto kDs = Framework::kDeepSpeed, kMeg = Framework::kMegatron;
  const auto fp16 = NumericFormat::kFp16, bf16 = NumericFormat::kBf16;
  const std::vector<Case> cases = {
      // BLOOM's 64 heads on TP 8: 8 a partition, b = 1 or 2 -> 8, 16 rows: multiples of 4.
      {64, 8, 1, 2048, fp16, "eager", kDs, kFused},
      {64, 8, 2, 2048, bf16, "eager", kDs, kFused},
      // 108 heads on TP 4: 27 a partition; b = 2 -> 54 rows, not a multiple of 4.
      {108, 4, 2, 2048, fp16, "eager", kDs, kFallback},
      {108, 4, 4, 2048, fp16, "eager", kDs, kFused},
      {108, 4, 2, 2048, fp16, "eager", kMeg, kFallback},
      // Keys: up to 4096 for the one, below 16384 and a multiple of 8 for the other.
      {64, 8, 2, 8192, bf16, "eager", kDs, kFallback},
      {64, 8, 2, 8192, bf16, "eager", kMeg, kFused},
      {64, 8, 2, 16384, bf16, "eager", kMeg, kFallback},
      {64, 8, 2, 2052, bf16, "eager", kDs, kFused},
      {64, 8, 2, 2052, bf16, "eager", kMeg, kFallback},
      {64, 8, 2, 2048, NumericFormat::kFp32, "eager", kMeg, kFallback},
      {4, 1, 4, 16, bf16, "eager", kMeg, kFallback},
      // 32 keys take 8 rows a block: 4 rows are not enough for the one, 32 queries do for the
      // other.
      {4, 1, 1, 32, bf16, "eager", kDs, kFallback},
      {4, 1, 2, 32, bf16, "eager", kDs, kFused},
      {4, 1, 1, 32, bf16, "eager", kMeg, kFused},
      {6, 1, 1, 2048, bf16, "eager", kMeg, kFallback},
      // Asked for, or no framework (Megatron-Core's).
      {64, 8, 2, 2048, bf16, "eager-unfused", kDs, kFallback},
      {64, 8, 2, 2048, bf16, "eager", std::nullopt, kFused},
      // The PyTorch frameworks' eager attention is counted with the kernel's bytes.
      {108, 4, 2, 2048, bf16, "eager", Framework::kFsdp, kFused},
      {64, 8, 2, 2048, bf16, "flash", kMeg, SoftmaxPath::kNoScores},
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
  // Fused, 16-bit, with dropout: QK^T writes S (2); the causal kernel reads its lower
  // triangle and writes all of P (1 + 2); dropout reads P, writes its output and a byte mask
  // (5). Backward: dP written (2), dropout's backward reads it and the mask and writes (5), the
  // kernel reads P and the gradient in the lower triangle and writes all of dS (1 + 1 + 2).
  // Kept: P, the mask, dropout's output.
  ScoreBytes b = ScoreBytesOf(SoftmaxPath::kFusedKernel, 2, true, false);
  EXPECT_EQ(b.forward, 10);
  EXPECT_EQ(b.backward, 11);
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
