// The tensor lifecycle of one training step (feature MEM-1): which buffers a
// transformer training step needs on one GPU, and when each is live, as
// Buffers the planner can place.
//
// Time runs over one micro-batch: forward through the blocks (t = 1..L), the
// loss (t = L+1), backward in reverse (t = L+2..2L+1), the optimizer step
// (t = 2L+2). Persistent state — weights, fp32 master weights, optimizer
// moments and gradients (kept across micro-batches while they accumulate) —
// lives over the whole step [0, 2L+3). Per block i:
//   activations kept for backward:  [i, backward(i) + 1)
//   the activation gradient flowing back:  [backward(i), backward(i) + 1)
//   the logits and their gradient (fp32):  [L+1, L+3)
// where backward(i) = 2L + 2 - i.
//
// Activation bytes per block follow Korthikanti et al., "Reducing Activation
// Recomputation in Large Transformer Models" (2022), eq. 2 (no recomputation,
// no tensor parallelism): s·b·h·(34 + 5·a·s/h) bytes in 16-bit training,
// scaled by bytes-per-element / 2 for other precisions.
#pragma once

#include <cstdint>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/mem/lifetime.h"

namespace seedance::mem {

struct TrainingStepShape {
  int64_t layers = 0;
  int64_t layer_parameters = 0;
  int64_t embedding_parameters = 0;
  int64_t head_parameters = 0;   // 0 when tied to the embedding
  int64_t other_parameters = 0;  // outside the blocks: the final norm
  int64_t hidden_size = 0;
  int64_t attention_heads = 0;
  int64_t sequence_length = 0;
  int64_t micro_batch = 0;
  int64_t vocab_size = 0;
  int bytes_per_element = 2;          // compute precision (weights, activations, gradients)
  bool fp32_master_weights = true;    // mixed precision keeps an fp32 copy
  int optimizer_bytes_per_param = 8;  // Adam: two fp32 moments
};

// The buffers of one step. Sizes are computed without overflow; InvalidArgument
// (naming the buffer) when one exceeds kMaxBufferSize, e.g. the activations of
// a sequence of 10^8 tokens.
base::StatusOr<std::vector<Buffer>> TrainingStepLifetimes(const TrainingStepShape& shape);

// Korthikanti et al. eq. 2, scaled to the precision (see above); the same
// InvalidArgument past kMaxBufferSize.
base::StatusOr<int64_t> ActivationBytesPerLayer(const TrainingStepShape& shape);

}  // namespace seedance::mem
