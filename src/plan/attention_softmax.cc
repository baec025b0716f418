#include "seedance/plan/attention_softmax.h"

namespace seedance::plan {

bool MaterializesScores(const TrainingSpec& training) {
  return training.attention == "eager" || training.attention == "eager-unfused";
}

int64_t SoftmaxRowsPerBlock(int64_t keys) {
  int64_t power = 1;
  while (power < keys) power *= 2;
  const int64_t warp = power < 32 ? power : 32;
  const int64_t rows_per_warp = power <= 128 ? 2 : 1;
  return 128 / warp * rows_per_warp;
}

SoftmaxPath SoftmaxPathOf(const ModelSpec& model, const TrainingSpec& training,
                          const ParallelConfig& c, std::optional<Framework> framework) {
  if (!MaterializesScores(training)) return SoftmaxPath::kNoScores;
  const Framework f = framework.value_or(Framework::kMegatron);
  if (f != Framework::kMegatron && f != Framework::kDeepSpeed) return SoftmaxPath::kFusedKernel;
  if (training.attention == "eager-unfused") return SoftmaxPath::kFallback;
  // fp8 training keeps the attention in bf16.
  const bool sixteen_bit = training.precision == base::NumericFormat::kBf16 ||
                           training.precision == base::NumericFormat::kFp16 ||
                           training.precision == base::NumericFormat::kFp8;
  const int64_t keys = model.sequence_length;
  const int64_t queries = model.sequence_length / c.context_parallel;
  // Heads divide evenly over the tensor-parallel ranks (parallelism.cc refuses layouts where
  // they do not).
  const int64_t rows = c.micro_batch * (model.attention_heads / c.tensor);
  const int64_t per_block = SoftmaxRowsPerBlock(keys);
  // What both checks ask, then each its own.
  const bool common = sixteen_bit && keys > 16 && queries % 4 == 0 && rows % 4 == 0;
  // Megatron-DeepSpeed's megatron/model/fused_softmax.py from 1cb76a64, as Megatron-LM's
  // megatron/core/fusions/fused_softmax.py: the rows a multiple of the rows per block.
  // Megatron-Core on Transformer Engine (--attention-backend unfused): TE's FusedScaleMaskSoftmax
  // (transformer_engine/pytorch/attention/dot_product_attention/softmax.py), causal: a square of
  // scores, the queries a multiple of the rows per block.
  const bool own =
      f == Framework::kDeepSpeed
          ? keys <= 4096 && keys % 4 == 0 && rows % per_block == 0
          : keys < 16384 && keys % 8 == 0 && queries == keys && queries % per_block == 0;
  return common && own ? SoftmaxPath::kFusedKernel : SoftmaxPath::kFallback;
}

ScoreBytes ScoreBytesOf(SoftmaxPath path, double e, bool dropout, bool scaled) {
  if (path == SoftmaxPath::kNoScores) return {};
  // Dropout reads the probabilities and writes its output and a one-byte mask; its backward
  // reads the gradient and the mask and writes. The PV GEMM keeps the output, dropout the mask.
  const double drop = dropout ? 2 * e + 1 : 0;
  ScoreBytes b;
  if (path == SoftmaxPath::kFusedKernel) {
    // QK^T writes S; the causal kernel reads each row's lower triangle and writes the whole
    // row of probabilities (zeros above the diagonal), which the backward pass keeps; the
    // gradient GEMM writes dP; the kernel's backward reads the probabilities and the gradient
    // in the lower triangle and writes the whole of dS (scaled_upper_triang_masked_softmax.h:
    // a row's local_seq is its index + 1).
    b.forward = e + e / 2 + e + drop;
    b.backward = e + drop + e / 2 + e / 2 + e;
    b.saved = e + (dropout ? e + 1 : 0);
    return b;
  }
  // The fallback in fp32 (w = 4 bytes): cast up (read e, write w) and back (read w, write e)
  // when the scores are 16-bit, the scale, the mask and the softmax each reading and writing w;
  // backward, each in reverse, the softmax's reading its fp32 output and the gradient. The
  // softmax keeps its fp32 output; without dropout the PV GEMM keeps the 16-bit copy too.
  const double w = 4;
  const double cast = e < w ? e + w : 0;
  const double scale = scaled ? 2 * w : 0;
  b.forward = e + cast + scale + 2 * w + 2 * w + cast + drop;
  b.backward = e + drop + cast + 3 * w + 2 * w + scale + cast;
  b.saved = w + (dropout ? e + 1 : (e < w ? e : 0));
  return b;
}

bool FallbackScales(std::optional<Framework> framework) {
  return framework == Framework::kDeepSpeed;
}

}  // namespace seedance::plan
