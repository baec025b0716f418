// LlamaModel::FromGguf: a Llama-architecture GGUF's metadata and tensors into the engine's FP32
// layout (llama2.c's tensor order, every layer's matrix of a kind contiguous).
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "seedance/kv/llama.h"

namespace seedance::kv {
namespace {

// An integer key within [lo, hi].
base::StatusOr<int> Dimension(const GgufFile& f, const std::string& key, int64_t lo, int64_t hi) {
  SEEDANCE_ASSIGN_OR_RETURN(const int64_t v, f.Integer(key));
  if (v < lo || v > hi) {
    return base::InvalidArgumentError(key + " is " + std::to_string(v) + " (" + std::to_string(lo) +
                                          " to " + std::to_string(hi) + " expected)",
                                      f.source());
  }
  return static_cast<int>(v);
}

}  // namespace

base::StatusOr<LlamaModel> LlamaModel::FromGguf(const GgufFile& f) {
  SEEDANCE_ASSIGN_OR_RETURN(const std::string arch, f.Text("general.architecture"));
  if (arch != "llama") {
    return base::InvalidArgumentError(
        "general.architecture is \"" + arch + "\" (this engine runs \"llama\" models)", f.source());
  }
  LlamaModel m;
  LlamaConfig& c = m.c_;
  constexpr int64_t kBig = 1 << 20;
  SEEDANCE_ASSIGN_OR_RETURN(c.dim, Dimension(f, "llama.embedding_length", 2, kBig));
  SEEDANCE_ASSIGN_OR_RETURN(c.hidden_dim, Dimension(f, "llama.feed_forward_length", 1, kBig));
  SEEDANCE_ASSIGN_OR_RETURN(c.n_layers, Dimension(f, "llama.block_count", 1, 4096));
  SEEDANCE_ASSIGN_OR_RETURN(c.n_heads, Dimension(f, "llama.attention.head_count", 1, 4096));
  c.n_kv_heads = c.n_heads;
  if (f.Has("llama.attention.head_count_kv")) {
    SEEDANCE_ASSIGN_OR_RETURN(c.n_kv_heads,
                              Dimension(f, "llama.attention.head_count_kv", 1, c.n_heads));
  }
  SEEDANCE_ASSIGN_OR_RETURN(c.seq_len, Dimension(f, "llama.context_length", 1, kBig));
  if (f.Has("llama.rope.freq_base")) {
    SEEDANCE_ASSIGN_OR_RETURN(const double theta, f.Real("llama.rope.freq_base"));
    if (!(theta > 1 && theta < 1e12)) {
      return base::InvalidArgumentError(
          "llama.rope.freq_base " + std::to_string(theta) + " (above 1 expected)", f.source());
    }
    c.rope_theta = static_cast<float>(theta);
  }
  if (f.Has("llama.attention.layer_norm_rms_epsilon")) {
    SEEDANCE_ASSIGN_OR_RETURN(const double eps, f.Real("llama.attention.layer_norm_rms_epsilon"));
    if (!(eps > 0 && eps < 1)) {
      return base::InvalidArgumentError(
          "llama.attention.layer_norm_rms_epsilon " + std::to_string(eps) + " (0 to 1 expected)",
          f.source());
    }
    c.rms_eps = static_cast<float>(eps);
  }
  if (c.dim % c.n_heads != 0 || c.head_size() % 2 != 0 || c.n_heads % c.n_kv_heads != 0) {
    return base::InvalidArgumentError(
        "llama.embedding_length, head_count and head_count_kv do not fit together", f.source());
  }
  if (f.Has("llama.rope.dimension_count")) {
    SEEDANCE_ASSIGN_OR_RETURN(const int64_t rot, f.Integer("llama.rope.dimension_count"));
    if (rot != c.head_size()) {
      return base::InvalidArgumentError(
          "llama.rope.dimension_count " + std::to_string(rot) + " rotates part of each " +
              std::to_string(c.head_size()) + "-wide head (partial rotary is not supported)",
          f.source());
    }
  }
  if (f.Has("llama.rope.scaling.type")) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::string scaling, f.Text("llama.rope.scaling.type"));
    if (scaling != "none") {
      return base::InvalidArgumentError(
          "llama.rope.scaling.type is \"" + scaling + "\" (RoPE scaling is not supported)",
          f.source());
    }
  }
  SEEDANCE_ASSIGN_OR_RETURN(const GgufTensor* embedding, f.Tensor("token_embd.weight"));
  if (embedding->shape.size() != 2 || embedding->shape[0] != c.dim || embedding->shape[1] > kBig) {
    return base::InvalidArgumentError("token_embd.weight is not [embedding_length, vocabulary]",
                                      f.source());
  }
  c.vocab_size = static_cast<int>(embedding->shape[1]);
  const auto classifier = f.Tensor("output.weight");
  c.shared_classifier = !classifier.ok();

  const int64_t D = c.dim, H = c.hidden_dim, KV = c.kv_dim(), V = c.vocab_size;
  // Each kind of tensor: its name under blk.N (or alone), its shape, where it goes.
  struct Kind {
    std::string name;
    std::vector<int64_t> shape;
    bool per_layer;
    const float** into;
  };
  const float* wcls = nullptr;
  std::vector<Kind> kinds = {
      {"token_embd.weight", {D, V}, false, &m.emb_},
      {"attn_norm.weight", {D}, true, &m.rms_att_},
      {"attn_q.weight", {D, D}, true, &m.wq_},
      {"attn_k.weight", {D, KV}, true, &m.wk_},
      {"attn_v.weight", {D, KV}, true, &m.wv_},
      {"attn_output.weight", {D, D}, true, &m.wo_},
      {"ffn_norm.weight", {D}, true, &m.rms_ffn_},
      {"ffn_gate.weight", {D, H}, true, &m.w1_},
      {"ffn_down.weight", {H, D}, true, &m.w2_},
      {"ffn_up.weight", {D, H}, true, &m.w3_},
      {"output_norm.weight", {D}, false, &m.rms_final_},
  };
  if (!c.shared_classifier) kinds.push_back({"output.weight", {D, V}, false, &wcls});
  // Every tensor is found and its shape checked before anything is allocated, so the weights'
  // size comes from tensors the file holds (bounded by its bytes), never from the metadata alone.
  std::vector<std::pair<const GgufTensor*, std::string>> found;
  std::vector<size_t> starts;
  size_t floats = 0;
  for (const Kind& k : kinds) {
    starts.push_back(floats);
    const int copies = k.per_layer ? c.n_layers : 1;
    for (int l = 0; l < copies; ++l) {
      std::string name = k.per_layer ? "blk." + std::to_string(l) + "." + k.name : k.name;
      SEEDANCE_ASSIGN_OR_RETURN(const GgufTensor* t, f.Tensor(name));
      if (t->shape != k.shape) {
        std::string want;
        for (int64_t d : k.shape) want += (want.empty() ? "" : ", ") + std::to_string(d);
        return base::InvalidArgumentError(
            name + " has another shape than the metadata implies ([" + want + "] expected)",
            f.source());
      }
      floats += static_cast<size_t>(t->elements());
      found.emplace_back(t, std::move(name));
    }
  }
  m.weights_.resize(floats);
  size_t at = 0;
  for (const auto& [t, name] : found) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::vector<float> values, f.Dequantize(*t));
    for (size_t i = 0; i < values.size(); ++i) {
      if (!std::isfinite(values[i])) {
        return base::InvalidArgumentError(
            name + "[" + std::to_string(i) + "] is " + (std::isnan(values[i]) ? "NaN" : "infinite"),
            f.source());
      }
    }
    std::copy(values.begin(), values.end(), m.weights_.begin() + static_cast<int64_t>(at));
    at += values.size();
  }
  for (size_t i = 0; i < kinds.size(); ++i) *kinds[i].into = m.weights_.data() + starts[i];
  m.wcls_ = c.shared_classifier ? m.emb_ : wcls;
  return m;
}

}  // namespace seedance::kv
