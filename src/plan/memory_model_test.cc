#include "seedance/plan/memory_model.h"

#include <gtest/gtest.h>

#include <cmath>

namespace seedance::plan {
namespace {

// The ZeRO paper (Rajbhandari et al. 2020, figure 1): a 7.5B-parameter model on 64 GPUs in
// mixed-precision Adam holds 120, 31.4, 16.6 and 1.9 GB per GPU at stages 0-3.
TEST(MemoryModel, ZeroPaperModelStates) {
  TrainingSpec t;
  t.precision = base::NumericFormat::kBf16;
  t.optimizer = "adamw";
  const StateBytes b = StateBytesFor(t);
  EXPECT_EQ(b.total(), 16);
  const double expected_gb[] = {120, 31.4, 16.6, 1.9};
  for (int stage = 0; stage <= 3; ++stage) {
    const double gb = static_cast<double>(ModelStateBytes(7'500'000'000, b, stage, 64)) / 1e9;
    EXPECT_NEAR(gb, expected_gb[stage], 0.05) << "stage " << stage;
  }
}

TEST(MemoryModel, StateBytesPerPrecisionAndOptimizer) {
  TrainingSpec t;
  t.precision = base::NumericFormat::kFp32;
  t.optimizer = "sgd";
  EXPECT_EQ(StateBytesFor(t).total(), 8);   // fp32 weights and gradients, no master, no state
  t.precision = base::NumericFormat::kFp8;  // 16-bit weights, fp32 master
  t.optimizer = "lion";
  const StateBytes b = StateBytesFor(t);
  EXPECT_EQ(b.weight, 2);
  EXPECT_EQ(b.total(), 2 + 2 + 4 + 4);
}

// Korthikanti et al. 2022, equations 2-5 for a GPT layer with eager attention and dropout
// (16-bit activations): 34 sbh + 5 a s^2 b without parallelism; 10 sbh + 24 sbh/t + 5 a s^2 b/t
// with TP; (34 sbh + 5 a s^2 b)/t with TP and SP; 34 sbh/t with SP and selective recompute;
// 2 sbh (/t with SP) with full recompute.
TEST(MemoryModel, KorthikantiActivationsPerLayer) {
  ModelSpec m;
  m.family = "gpt";
  m.layers = 96;
  m.hidden_size = 12288;
  m.attention_heads = 96;
  m.kv_heads = 96;
  m.ffn_size = 4 * 12288;
  m.vocab_size = 51200;
  m.sequence_length = 2048;
  TrainingSpec t;
  t.precision = base::NumericFormat::kBf16;
  t.attention = "eager";
  const double s = 2048, h = 12288, a = 96;
  for (int64_t b : {1, 4}) {
    for (int64_t tp : {1, 8}) {
      const double sbh = s * static_cast<double>(b) * h;
      const double scores = 5 * a * s * s * static_cast<double>(b);
      const double tt = static_cast<double>(tp);
      ParallelConfig c{.tensor = tp, .micro_batch = b};
      EXPECT_EQ(LayerActivationBytes(m, t, c),
                std::llround(10 * sbh + 24 * sbh / tt + scores / tt));
      if (tp > 1) {
        c.sequence_parallel = true;
        EXPECT_EQ(LayerActivationBytes(m, t, c), std::llround((34 * sbh + scores) / tt));
        c.recompute = Recompute::kSelective;
        EXPECT_EQ(LayerActivationBytes(m, t, c), std::llround(34 * sbh / tt));
        c.recompute = Recompute::kFull;
        EXPECT_EQ(LayerActivationBytes(m, t, c), std::llround(2 * sbh / tt));
      }
    }
  }
}

// A Llama layer (no dropout, SwiGLU, GQA) with fused attention: norms 4 e sbh, Q e sbh,
// K and V 2 e sb kv, attention output e sbh, SwiGLU 3 e sbf, log-sum-exp 4 a s b.
TEST(MemoryModel, LlamaLayerWithGqaAndFlashAttention) {
  ModelSpec m;
  m.family = "llama";
  m.layers = 32;
  m.hidden_size = 4096;
  m.attention_heads = 32;
  m.kv_heads = 8;
  m.ffn_size = 14336;
  m.vocab_size = 128256;
  m.sequence_length = 8192;
  TrainingSpec t;
  t.precision = base::NumericFormat::kBf16;
  const double s = 8192, b = 2, h = 4096, kv = 8 * 128, f = 14336, a = 32;
  const double expected = 2 * s * b * (4 * h + h + 2 * kv + h + 3 * f) + 4 * a * s * b;
  EXPECT_EQ(LayerActivationBytes(m, t, {.micro_batch = 2}), std::llround(expected));
}

}  // namespace
}  // namespace seedance::plan
