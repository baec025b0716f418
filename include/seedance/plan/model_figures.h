// Figures derived from a model's shape alone: parameter counts, FLOPs per
// token, KV-cache bytes. Pure functions.
#pragma once

#include <cstdint>

#include "seedance/base/numeric_format.h"
#include "seedance/plan/job_spec.h"

namespace seedance::plan {

struct ModelFigures {
  int64_t parameters = 0;            // everything that is trained
  int64_t embedding_parameters = 0;  // token (+ position, for gpt) embeddings
  int64_t layer_parameters = 0;      // one transformer block
  int64_t lm_head_parameters = 0;    // 0 when tied to the embedding
  // Weights that take part in a matrix multiply per token: every block's
  // projections plus the LM head (tied or not); not the embedding lookup,
  // norms or biases.
  int64_t matmul_parameters = 0;
};

// Llama: per block 2h (RMSNorm) + h*h (q) + 2*h*kv_dim (k, v) + h*h (o)
//        + 3*h*ffn (SwiGLU); embedding V*h; final norm h; head V*h unless tied.
// GPT (GPT-2 style): per block 4h (two LayerNorms) + h*(h+2kv_dim) + (h+2kv_dim)
//        (qkv with bias) + h*h + h (proj) + 2*h*ffn + ffn + h (MLP);
//        embeddings V*h + s*h; final LayerNorm 2h; head tied unless untied.
// Nemotron: per block 4h (two LayerNorms) + h*(h+2kv_dim) + h*h + 2*h*ffn (squared-ReLU MLP,
//        no biases); embedding V*h; final LayerNorm 2h; head V*h unless tied.
ModelFigures ComputeModelFigures(const ModelSpec& model);

// Training FLOPs per token, the PaLM paper's model-FLOPs formula (appendix B):
// 6 * matmul_parameters + 12 * layers * hidden_size * sequence_length.
double TrainingFlopsPerToken(const ModelSpec& model, const ModelFigures& figures);

// Bytes of K and V cached per token over all layers: 2 * layers * kv_heads *
// head_dim * bytes(format); ...AtBits for packed widths (bits_per_value / 8 bytes a value).
int64_t KvCacheBytesPerToken(const ModelSpec& model, base::NumericFormat format);
double KvCacheBytesPerTokenAtBits(const ModelSpec& model, double bits_per_value);

}  // namespace seedance::plan
