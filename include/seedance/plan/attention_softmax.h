// The softmax of a materialized attention (feature CLI-1): which code runs it, and the bytes it
// streams and keeps per element of the s x s score tensor. The time model (time_model.h) streams
// those bytes at the elementwise kernels' bandwidth; the memory model (memory_model.h) keeps them.
//
// Megatron's model code runs a FusedScaleMaskSoftmax: its causal CUDA kernel where its
// is_kernel_available accepts the shape, PyTorch operators in fp32 otherwise
// (forward_torch_softmax: cast up, scale by 1/layer under query-key layer scaling, mask, softmax,
// cast back). Two checks: DeepSpeed's Megatron-DeepSpeed (megatron/model/fused_softmax.py, as
// Megatron-LM's megatron/core/fusions/fused_softmax.py) takes 16-bit scores, 16 < s <= 4096, s a
// multiple of 4, and the micro-batch's heads on this GPU, b a / t, a multiple of 4 and of the
// kernel's rows per block; Megatron-Core on Transformer Engine (--attention-backend unfused, the
// layer the planner's Megatron counts and --emit writes) takes 16-bit scores, 16 < s < 16384, s a
// multiple of 8 and of the rows per block, and b a / t a multiple of 4. `attention: eager-unfused`
// is the fallback whatever the shape (Megatron-DeepSpeed's --no-masked-softmax-fusion, or a release
// whose check refused the shape: BLOOM's benchmarks of February 2022, docs/design/plan.md).
// Megatron's materialized attention runs without context parallelism (framework.cc refuses it).
//
// The PyTorch frameworks' model code (FSDP, torchtitan, Accelerate) is counted with the fused
// kernel's bytes: Hugging Face's eager softmax runs in fp32 operators too, not yet counted.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "seedance/plan/framework.h"
#include "seedance/plan/job_spec.h"

namespace seedance::plan {

enum class SoftmaxPath {
  kNoScores,     // a fused attention kernel (flash, flash2, cudnn): no s x s tensor
  kFusedKernel,  // Megatron's fused scale-mask-softmax kernel
  kFallback,     // the same softmax in PyTorch operators, in fp32
};

// Whether `attention` keeps the s x s scores ("eager", "eager-unfused").
bool MaterializesScores(const TrainingSpec& training);

// Rows of the score tensor one block of Megatron's softmax kernel takes for keys of length
// `keys` (get_batch_per_block in scaled_masked_softmax.h): 128 threads, a warp of
// min(next power of two >= keys, 32) lanes per row, two rows a warp up to 128 keys.
int64_t SoftmaxRowsPerBlock(int64_t keys);

// The path `training.attention` takes for `model` under layout `c` and `framework`.
SoftmaxPath SoftmaxPathOf(const ModelSpec& model, const TrainingSpec& training,
                          const ParallelConfig& c, std::optional<Framework> framework);

// Bytes per score element of a causal attention, `e` the activations' bytes (2 or 4). forward
// and backward: what the kernels outside the two batched GEMMs read and write (the GEMMs' own
// writes of S and dP included); saved: what the backward pass keeps. GPT's attention dropout
// (`dropout`) adds its one-byte mask and output. `scaled`: the fallback multiplies by 1/layer
// (Megatron-LM's query-key layer scaling, on by default in the 2021-2022 code DeepSpeed's Megatron
// fork carries; off in Megatron-Core).
struct ScoreBytes {
  double forward = 0, backward = 0, saved = 0;
};
ScoreBytes ScoreBytesOf(SoftmaxPath path, double e, bool dropout, bool scaled);

// Whether the fallback under `framework` scales the scores (ScoreBytesOf's `scaled`).
bool FallbackScales(std::optional<Framework> framework);

}  // namespace seedance::plan
