#include "seedance/plan/model_figures.h"

namespace seedance::plan {

ModelFigures ComputeModelFigures(const ModelSpec& m) {
  const int64_t h = m.hidden_size;
  const int64_t kv_dim = m.kv_heads * m.head_dim();
  const int64_t ffn = m.ffn_size;
  const int64_t vocab = m.vocab_size;
  ModelFigures f;
  int64_t block_matmul = 0;
  int64_t final_norm = 0;
  if (m.family == "gpt") {
    const int64_t qkv = h * (h + 2 * kv_dim) + (h + 2 * kv_dim);
    const int64_t proj = h * h + h;
    const int64_t mlp = h * ffn + ffn + ffn * h + h;
    f.layer_parameters = 4 * h + qkv + proj + mlp;
    block_matmul = h * (h + 2 * kv_dim) + h * h + 2 * h * ffn;
    f.embedding_parameters = vocab * h + m.sequence_length * h;
    final_norm = 2 * h;
  } else if (m.family == "nemotron") {  // LayerNorm, bias-free, squared-ReLU MLP, rotary
    f.layer_parameters = 4 * h + h * (h + 2 * kv_dim) + h * h + 2 * h * ffn;
    block_matmul = h * (h + 2 * kv_dim) + h * h + 2 * h * ffn;
    f.embedding_parameters = vocab * h;
    final_norm = 2 * h;
  } else {  // llama
    f.layer_parameters = 2 * h + h * h + 2 * h * kv_dim + h * h + 3 * h * ffn;
    block_matmul = h * h + 2 * h * kv_dim + h * h + 3 * h * ffn;
    f.embedding_parameters = vocab * h;
    final_norm = h;
  }
  f.lm_head_parameters = m.tie_embeddings ? 0 : vocab * h;
  f.parameters =
      f.embedding_parameters + m.layers * f.layer_parameters + final_norm + f.lm_head_parameters;
  f.matmul_parameters = m.layers * block_matmul + vocab * h;
  return f;
}

double TrainingFlopsPerToken(const ModelSpec& m, const ModelFigures& f) {
  return 6.0 * static_cast<double>(f.matmul_parameters) +
         12.0 * static_cast<double>(m.layers) * static_cast<double>(m.hidden_size) *
             static_cast<double>(m.sequence_length);
}

namespace {
int64_t KvValuesPerToken(const ModelSpec& m) { return 2 * m.layers * m.kv_heads * m.head_dim(); }
}  // namespace

int64_t KvCacheBytesPerToken(const ModelSpec& m, base::NumericFormat format) {
  return KvValuesPerToken(m) * base::NumericFormatBytes(format);
}

double KvCacheBytesPerTokenAtBits(const ModelSpec& m, double bits_per_value) {
  return static_cast<double>(KvValuesPerToken(m)) * bits_per_value / 8;
}

}  // namespace seedance::plan
