#include "seedance/mem/training_step.h"

#include <gtest/gtest.h>

#include "seedance/mem/planner.h"

namespace seedance::mem {
namespace {

TrainingStepShape Small() {
  return TrainingStepShape{.layers = 4,
                           .layer_parameters = 1000,
                           .embedding_parameters = 500,
                           .head_parameters = 500,
                           .hidden_size = 8,
                           .attention_heads = 2,
                           .sequence_length = 16,
                           .micro_batch = 2,
                           .vocab_size = 50};
}

TEST(TrainingStepTest, ActivationFormulaTable) {
  // s=16, b=2, h=8, a=2: 34·256 + 5·2·256·2 = 8704 + 5120 = 13824 bytes (16-bit).
  EXPECT_EQ(*ActivationBytesPerLayer(Small()), 13'824);
  TrainingStepShape fp32 = Small();
  fp32.bytes_per_element = 4;
  EXPECT_EQ(*ActivationBytesPerLayer(fp32), 27'648);
}

TEST(TrainingStepTest, PersistentStateAndLifetimes) {
  const TrainingStepShape t = Small();
  const auto buffers = *TrainingStepLifetimes(t);
  ASSERT_TRUE(ValidateBuffers(buffers, "step").ok());
  int64_t persistent = 0;
  for (const Buffer& b : buffers) {
    if (b.kind == BufferKind::kWeight || b.kind == BufferKind::kGradient ||
        b.kind == BufferKind::kOptimizerState) {
      persistent += b.size;
    }
  }
  // Per parameter: 2 (bf16 weight) + 2 (grad) + 4 (fp32 master) + 8 (Adam) = 16 bytes.
  EXPECT_EQ(persistent, (4 * 1000 + 500 + 500) * 16);
  // Peak at t = L+2, the backward of the last block: everything persistent,
  // all four blocks' activations, both logit buffers (fp32) and the last
  // block's input gradient (s·b·h·2 = 512 bytes).
  const int64_t logits = 16 * 2 * 50 * 4;
  EXPECT_EQ(MaxLiveBytes(buffers), persistent + 4 * 13'824 + 2 * logits + 512);
}

TEST(TrainingStepTest, PlannerReusesActivationMemory) {
  const auto buffers = *TrainingStepLifetimes(Small());
  auto plan = PlanOffsets(buffers, {.time_limit_s = 1});
  ASSERT_TRUE(plan.ok());
  int64_t sum = 0;
  for (const Buffer& b : buffers) sum += b.size;
  EXPECT_LT(plan->peak_bytes, sum);
  EXPECT_GE(plan->peak_bytes, plan->lower_bound_bytes);
}

}  // namespace
}  // namespace seedance::mem
