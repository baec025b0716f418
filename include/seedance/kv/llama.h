// A compact inference engine for Llama-family models (features KV-*): the real models the
// KV-cache quantizers are measured on, read from llama2.c checkpoints or from GGUF files (the
// format of llama.cpp and of Transformers' `gguf_file=`; weights dequantized to FP32 at load).
// FP32; RMSNorm (eps from the file, 1e-5 for llama2.c), RoPE on q and k (theta from the file,
// 10000 for llama2.c; adjacent pairs, the layout both formats store q and k in), multi-head
// attention with grouped KV heads, SwiGLU, tied or separate classifier. Attention reads keys and
// values only through a KvCache, so any cache plugs in.
//
// Thread safety: a LlamaModel is immutable after Load; Forward may run from
// several threads with different caches and scratch.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/kv/cache.h"
#include "seedance/kv/gguf.h"
#include "seedance/kv/text_tokenizer.h"

namespace seedance::kv {

struct LlamaConfig {
  int dim = 0, hidden_dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, vocab_size = 0,
      seq_len = 0;
  bool shared_classifier = true;
  float rope_theta = 10000.0F;
  float rms_eps = 1e-5F;
  int head_size() const { return dim / n_heads; }
  int kv_dim() const { return head_size() * n_kv_heads; }
};

class LlamaModel {
 public:
  // Reads a llama2.c "legacy" checkpoint: 7 int32 header values (dim,
  // hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a negative
  // vocab_size means a separate classifier), then float32 tensors in the order
  // token embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final,
  // freq_cis and, if not shared, the classifier. The file size must
  // match the header exactly; errors name the file and the field.
  // A file that starts with "GGUF" is read as GGUF (FromGguf).
  static base::StatusOr<LlamaModel> Load(base::Env& env, const std::string& path);
  static base::StatusOr<LlamaModel> FromBytes(std::string_view bytes, const std::string& source);
  // A GGUF model of general.architecture "llama" (llama.cpp's tensor names: token_embd,
  // blk.N.attn_{norm,q,k,v,output}, blk.N.ffn_{norm,gate,up,down}, output_norm, and output unless
  // the classifier is tied). Errors name the file and the key or tensor: another architecture,
  // RoPE scaling or partial rotary dimensions, a shape that does not match the metadata, a
  // tensor type without a dequantizer, a non-finite weight.
  static base::StatusOr<LlamaModel> FromGguf(const GgufFile& file);

  const LlamaConfig& config() const { return c_; }
  CacheShape cache_shape() const { return {c_.n_layers, c_.kv_dim(), c_.head_size(), c_.seq_len}; }

  // Runs token `token` at position `pos` (0-based, < seq_len) and writes
  // vocab_size logits. The cache must hold positions 0..pos-1 of this sequence.
  base::Status Forward(int token, int pos, KvCache& cache, std::span<float> logits,
                       std::vector<float>* trace = nullptr) const;
  // The same for a batch of sequences at the same position, one cache and one
  // logits buffer (vocab_size floats) each; weights are read once per batch.
  // `trace`, when given, receives each layer's output (the residual stream,
  // n_layers x dim floats) of the first sequence, for error-propagation studies.
  base::Status ForwardBatch(std::span<const int> tokens, int pos, std::span<KvCache* const> caches,
                            std::span<float* const> logits,
                            std::vector<float>* trace = nullptr) const;
  // The same with each sequence at its own position (continuous batching: sequences join and
  // leave the running batch at token boundaries, so their positions differ).
  base::Status ForwardBatch(std::span<const int> tokens, std::span<const int> positions,
                            std::span<KvCache* const> caches, std::span<float* const> logits,
                            std::vector<float>* trace = nullptr) const;

 private:
  LlamaConfig c_;
  std::vector<float> weights_;  // the whole tensor area
  const float *emb_ = nullptr, *rms_att_ = nullptr, *wq_ = nullptr, *wk_ = nullptr, *wv_ = nullptr,
              *wo_ = nullptr, *rms_ffn_ = nullptr, *w1_ = nullptr, *w2_ = nullptr, *w3_ = nullptr,
              *rms_final_ = nullptr, *wcls_ = nullptr;
};

// The llama2.c tokenizer file: pieces with scores; encode by greedy BPE merges. BOS is 1 and
// </s> (2) ends a generation.
class Tokenizer : public TextTokenizer {
 public:
  static base::StatusOr<Tokenizer> Load(base::Env& env, const std::string& path, int vocab_size);
  // Token ids of `text` (BOS not included); unknown bytes fall back to byte tokens.
  std::vector<int> Encode(std::string_view text) const override;
  // The text of token `token` following `previous` (leading space stripped after BOS).
  std::string Decode(int previous, int token) const override;
  std::optional<int> Bos() const override { return 1; }
  std::vector<int> StopIds() const override { return {2}; }

 private:
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::unordered_map<std::string, int> index_;  // piece -> id, built once by Load
};

}  // namespace seedance::kv
