#include "seedance/kv/llama.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <queue>
#include <unordered_map>

#include "seedance/kv/attend.h"
#include "seedance/port/simd.h"
#include "seedance/port/simd_kv.h"

namespace seedance::kv {
namespace {

void RmsNorm(std::span<float> out, std::span<const float> x, const float* w, float eps) {
  double ss = 0;
  for (float v : x) ss += static_cast<double>(v) * v;
  const float inv = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(x.size())) + eps);
  for (size_t i = 0; i < x.size(); ++i) out[i] = w[i] * (x[i] * inv);
}

// out[b][rows] = w[rows][cols] . x[b][cols] for b < batch: each weight row is
// read once and applied to every sequence of the batch.
// With AVX2 (port::UseAvx2) each dot product runs port::Avx2DotF32, else the sequential sum.
void MatMul(float* out, const float* x, const float* w, int rows, int cols, int batch) {
  const bool avx2 = port::UseAvx2();
  for (int r = 0; r < rows; ++r) {
    const float* row = w + static_cast<size_t>(r) * cols;
    for (int b = 0; b < batch; ++b) {
      const float* xb = x + static_cast<size_t>(b) * cols;
      float s = 0;
      if (avx2) {
        s = port::Avx2DotF32(row, xb, cols);
      } else {
        for (int c = 0; c < cols; ++c) s += row[c] * xb[c];
      }
      out[static_cast<size_t>(b) * rows + r] = s;
    }
  }
}

void Rope(float* v, int n, int head_size, int pos, float theta) {
  for (int i = 0; i < n; i += 2) {
    const int hd = i % head_size;
    const float freq = 1.0f / std::pow(theta, static_cast<float>(hd) / head_size);
    const float a = static_cast<float>(pos) * freq;
    const float c = std::cos(a), s = std::sin(a);
    const float x0 = v[i], x1 = v[i + 1];
    v[i] = x0 * c - x1 * s;
    v[i + 1] = x0 * s + x1 * c;
  }
}

}  // namespace

base::StatusOr<LlamaModel> LlamaModel::Load(base::Env& env, const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(std::string bytes, env.ReadFile(path));
  if (bytes.starts_with("GGUF")) {
    SEEDANCE_ASSIGN_OR_RETURN(const GgufFile file, GgufFile::Parse(bytes, path));
    return FromGguf(file);
  }
  return FromBytes(bytes, path);
}

base::StatusOr<LlamaModel> LlamaModel::FromBytes(std::string_view bytes, const std::string& src) {
  if (bytes.size() < 28) return base::InvalidArgumentError("shorter than the 28-byte header", src);
  int32_t h[7];
  std::memcpy(h, bytes.data(), 28);
  static const char* kNames[7] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                                  "n_kv_heads", "vocab_size", "seq_len"};
  for (int i = 0; i < 7; ++i) {
    if ((i == 5 ? std::abs(h[i]) : h[i]) <= 0 || std::abs(h[i]) > (1 << 20)) {
      return base::InvalidArgumentError("header field out of range: " + std::to_string(h[i]),
                                        src + ": " + kNames[i]);
    }
  }
  LlamaModel m;
  LlamaConfig& c = m.c_;
  c.dim = h[0], c.hidden_dim = h[1], c.n_layers = h[2], c.n_heads = h[3], c.n_kv_heads = h[4];
  c.shared_classifier = h[5] > 0;
  c.vocab_size = std::abs(h[5]), c.seq_len = h[6];
  if (c.dim % c.n_heads != 0 || c.head_size() % 2 != 0 || c.n_heads % c.n_kv_heads != 0) {
    return base::InvalidArgumentError("dim, n_heads and n_kv_heads do not fit together",
                                      src + ": n_heads");
  }
  const size_t L = c.n_layers, D = c.dim, H = c.hidden_dim, KV = c.kv_dim(), V = c.vocab_size;
  const size_t hs = c.head_size();
  size_t floats = V * D + L * D + L * D * D + 2 * L * D * KV + L * D * D + L * D + 3 * L * D * H +
                  D + c.seq_len * hs;  // freq_cis_real + imag: seq_len * head_size/2 each
  if (!c.shared_classifier) floats += V * D;
  const size_t have = (bytes.size() - 28) / 4;
  if ((bytes.size() - 28) % 4 != 0 || have != floats) {
    return base::InvalidArgumentError("the header implies " + std::to_string(floats) +
                                          " float32 values but the file holds " +
                                          std::to_string((bytes.size() - 28) / 4.0),
                                      src);
  }
  m.weights_.resize(floats);
  std::memcpy(m.weights_.data(), bytes.data() + 28, floats * 4);
  // The tensors in file order (llama2.c's run.c layout), each checked to hold finite values: a
  // NaN or infinite weight would surface later as a non-finite activation with no file to blame.
  struct Tensor {
    const char* name;
    size_t count;
    const float** into;
  };
  const float* rope = nullptr;  // legacy RoPE tables, recomputed instead
  const float* wcls = nullptr;
  std::vector<Tensor> tensors = {
      {"token_embedding_table", V * D, &m.emb_},
      {"rms_att_weight", L * D, &m.rms_att_},
      {"wq", L * D * D, &m.wq_},
      {"wk", L * D * KV, &m.wk_},
      {"wv", L * D * KV, &m.wv_},
      {"wo", L * D * D, &m.wo_},
      {"rms_ffn_weight", L * D, &m.rms_ffn_},
      {"w1", L * D * H, &m.w1_},
      {"w2", L * H * D, &m.w2_},
      {"w3", L * D * H, &m.w3_},
      {"rms_final_weight", D, &m.rms_final_},
      {"freq_cis", c.seq_len * hs, &rope},
  };
  if (!c.shared_classifier) tensors.push_back({"wcls", V * D, &wcls});
  const float* p = m.weights_.data();
  for (const Tensor& t : tensors) {
    for (size_t i = 0; i < t.count; ++i) {
      if (!std::isfinite(p[i])) {
        const size_t offset = 28 + 4 * static_cast<size_t>(p + i - m.weights_.data());
        return base::InvalidArgumentError(
            std::string("weight ") + t.name + "[" + std::to_string(i) + "] at byte " +
                std::to_string(offset) + " is " + (std::isnan(p[i]) ? "NaN" : "infinite"),
            src);
      }
    }
    *t.into = p;
    p += t.count;
  }
  m.wcls_ = c.shared_classifier ? m.emb_ : wcls;
  return m;
}

base::Status LlamaModel::Forward(int token, int pos, KvCache& cache, std::span<float> logits,
                                 std::vector<float>* trace) const {
  KvCache* caches[1] = {&cache};
  float* out[1] = {logits.data()};
  const int tokens[1] = {token};
  return ForwardBatch(tokens, pos, caches, out, trace);
}

base::Status LlamaModel::ForwardBatch(std::span<const int> tokens, int pos,
                                      std::span<KvCache* const> caches,
                                      std::span<float* const> logits,
                                      std::vector<float>* trace) const {
  const std::vector<int> positions(tokens.size(), pos);
  return ForwardBatch(tokens, positions, caches, logits, trace);
}

base::Status LlamaModel::ForwardBatch(std::span<const int> tokens, std::span<const int> positions,
                                      std::span<KvCache* const> caches,
                                      std::span<float* const> logits,
                                      std::vector<float>* trace) const {
  const LlamaConfig& c = c_;
  if (trace) trace->clear();
  const int B = static_cast<int>(tokens.size());
  if (caches.size() != tokens.size() || logits.size() != tokens.size() ||
      positions.size() != tokens.size()) {
    return base::InvalidArgumentError("tokens, positions, caches and logits differ in number");
  }
  for (int token : tokens) {
    if (token < 0 || token >= c.vocab_size) {
      return base::OutOfRangeError("token " + std::to_string(token) + " outside the vocabulary");
    }
  }
  int max_pos = 0;
  for (int pos : positions) {
    if (pos < 0 || pos >= c.seq_len) {
      return base::OutOfRangeError("position " + std::to_string(pos) + " beyond seq_len " +
                                   std::to_string(c.seq_len));
    }
    max_pos = std::max(max_pos, pos);
  }
  const int D = c.dim, H = c.hidden_dim, KV = c.kv_dim(), hs = c.head_size();
  const int kv_mul = c.n_heads / c.n_kv_heads;
  // Activations are [B][width]; every weight row is read once per batch.
  std::vector<float> x(static_cast<size_t>(B) * D), xb(x.size()), xb2(x.size()), q(x.size());
  std::vector<float> k(static_cast<size_t>(B) * KV), v(k.size());
  std::vector<float> hb(static_cast<size_t>(B) * H), hb2(hb.size());
  std::vector<float> att_store(max_pos + 1);
  for (int b = 0; b < B; ++b) {
    std::copy(emb_ + static_cast<size_t>(tokens[b]) * D,
              emb_ + static_cast<size_t>(tokens[b] + 1) * D,
              x.begin() + static_cast<int64_t>(b) * D);
  }
  auto row = [](std::vector<float>& a, int b, int width) {
    return std::span<float>(a.data() + static_cast<size_t>(b) * width, static_cast<size_t>(width));
  };
  for (int l = 0; l < c.n_layers; ++l) {
    for (int b = 0; b < B; ++b)
      RmsNorm(row(xb, b, D), row(x, b, D), rms_att_ + static_cast<size_t>(l) * D, c.rms_eps);
    MatMul(q.data(), xb.data(), wq_ + static_cast<size_t>(l) * D * D, D, D, B);
    MatMul(k.data(), xb.data(), wk_ + static_cast<size_t>(l) * D * KV, KV, D, B);
    MatMul(v.data(), xb.data(), wv_ + static_cast<size_t>(l) * D * KV, KV, D, B);
    const float inv_sqrt = 1.0f / std::sqrt(static_cast<float>(hs));
    for (int b = 0; b < B; ++b) {
      const int pos = positions[b];
      const std::span<float> att(att_store.data(), static_cast<size_t>(pos) + 1);
      float* qb = q.data() + static_cast<size_t>(b) * D;
      float* kb = k.data() + static_cast<size_t>(b) * KV;
      Rope(qb, D, hs, pos, c.rope_theta);
      Rope(kb, KV, hs, pos, c.rope_theta);
      SEEDANCE_RETURN_IF_ERROR(caches[b]->Append(l, pos, row(k, b, KV), row(v, b, KV)));
      for (int h = 0; h < c.n_heads; ++h) {
        const int kvh = h / kv_mul;
        AttendHead(
            *caches[b], l, kvh, std::span<const float>(qb + static_cast<ptrdiff_t>(h) * hs, hs),
            pos + 1, inv_sqrt, {}, att,
            std::span<float>(xb).subspan(static_cast<size_t>(b) * D + static_cast<size_t>(h) * hs,
                                         static_cast<size_t>(hs)));
      }
    }
    MatMul(xb2.data(), xb.data(), wo_ + static_cast<size_t>(l) * D * D, D, D, B);
    for (size_t i = 0; i < x.size(); ++i) x[i] += xb2[i];
    for (int b = 0; b < B; ++b)
      RmsNorm(row(xb, b, D), row(x, b, D), rms_ffn_ + static_cast<size_t>(l) * D, c.rms_eps);
    MatMul(hb.data(), xb.data(), w1_ + static_cast<size_t>(l) * D * H, H, D, B);
    MatMul(hb2.data(), xb.data(), w3_ + static_cast<size_t>(l) * D * H, H, D, B);
    for (size_t i = 0; i < hb.size(); ++i) {
      const float s = hb[i] / (1.0f + std::exp(-hb[i]));  // SiLU
      hb[i] = s * hb2[i];
    }
    MatMul(xb.data(), hb.data(), w2_ + static_cast<size_t>(l) * H * D, D, H, B);
    for (size_t i = 0; i < x.size(); ++i) x[i] += xb[i];
    if (trace) trace->insert(trace->end(), x.begin(), x.begin() + D);
  }
  for (int b = 0; b < B; ++b) {
    std::vector<float> normed(D);
    RmsNorm(normed, row(x, b, D), rms_final_, c.rms_eps);
    MatMul(logits[b], normed.data(), wcls_, c.vocab_size, D, 1);
  }
  return base::OkStatus();
}

base::StatusOr<Tokenizer> Tokenizer::Load(base::Env& env, const std::string& path, int vocab_size) {
  // Encode falls back to the byte tokens 3..258 (<0x00>..<0xFF> after <unk>, <s>, </s>).
  if (vocab_size < 259) {
    return base::InvalidArgumentError(
        "a llama2.c tokenizer needs at least 259 pieces (3 special "
        "and 256 byte tokens); the model's vocabulary has " +
            std::to_string(vocab_size),
        path);
  }
  SEEDANCE_ASSIGN_OR_RETURN(std::string b, env.ReadFile(path));
  Tokenizer t;
  size_t at = 4;  // max_token_length (unused)
  if (b.size() < 4) return base::InvalidArgumentError("truncated header", path);
  for (int i = 0; i < vocab_size; ++i) {
    float score;
    int32_t len;
    if (at + 8 > b.size()) {
      return base::InvalidArgumentError("truncated at token " + std::to_string(i), path);
    }
    std::memcpy(&score, b.data() + at, 4);
    std::memcpy(&len, b.data() + at + 4, 4);
    at += 8;
    if (len < 0 || at + static_cast<size_t>(len) > b.size()) {
      return base::InvalidArgumentError("bad length of token " + std::to_string(i), path);
    }
    t.scores_.push_back(score);
    t.pieces_.emplace_back(b.data() + at, static_cast<size_t>(len));
    at += static_cast<size_t>(len);
  }
  // The piece -> id index Encode looks merges up in; the first of duplicate pieces wins.
  for (size_t i = 0; i < t.pieces_.size(); ++i) t.index_.emplace(t.pieces_[i], static_cast<int>(i));
  return t;
}

std::vector<int> Tokenizer::Encode(std::string_view text) const {
  const std::unordered_map<std::string, int>& index = index_;
  std::vector<int> tokens;
  // llama2.c adds a dummy space prefix, then one token per UTF-8 byte sequence.
  const std::string s = text.empty() ? std::string() : " " + std::string(text);
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    while (i + len < s.size() && (static_cast<unsigned char>(s[i + len]) & 0xC0) == 0x80) ++len;
    const auto it = index.find(s.substr(i, len));
    if (it != index.end()) {
      tokens.push_back(it->second);
    } else {
      for (size_t j = 0; j < len; ++j) tokens.push_back(static_cast<unsigned char>(s[i + j]) + 3);
    }
    i += len;
  }
  // Merge the best-scoring adjacent pair until none is in the vocabulary (ties: the leftmost),
  // as llama2.c's loop does, but in O(n log n): the tokens are a linked list and the candidate
  // pairs a heap, an entry being stale once either side has merged since it was pushed. A node
  // keeps its index, so left-to-right order is index order and "leftmost" is the smaller index.
  const size_t n = tokens.size();
  if (n < 2) return tokens;
  std::vector<size_t> next(n), prev(n);
  std::vector<uint32_t> version(n, 0);
  std::vector<char> alive(n, 1);
  for (size_t i = 0; i < n; ++i) {
    next[i] = i + 1;
    prev[i] = i == 0 ? n : i - 1;  // n: none
  }
  struct Candidate {
    float score;
    size_t left, right;
    uint32_t left_version, right_version;
    int merged;
  };
  const auto worse = [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score < b.score : a.left > b.left;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> heap(worse);
  const auto offer = [&](size_t left) {
    if (left >= n || next[left] >= n) return;
    const size_t right = next[left];
    const auto it = index.find(pieces_[tokens[left]] + pieces_[tokens[right]]);
    if (it == index.end() || !(scores_[it->second] > -1e10f)) return;
    heap.push({scores_[it->second], left, right, version[left], version[right], it->second});
  };
  for (size_t i = 0; i + 1 < n; ++i) offer(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    if (!alive[c.left] || !alive[c.right] || next[c.left] != c.right ||
        version[c.left] != c.left_version || version[c.right] != c.right_version) {
      continue;  // stale: a side merged with something else since
    }
    tokens[c.left] = c.merged;
    ++version[c.left];
    alive[c.right] = 0;
    next[c.left] = next[c.right];
    if (next[c.right] < n) prev[next[c.right]] = c.left;
    if (prev[c.left] < n) offer(prev[c.left]);
    offer(c.left);
  }
  std::vector<int> merged;
  for (size_t i = 0; i < n; i = next[i]) merged.push_back(tokens[i]);
  tokens = std::move(merged);
  return tokens;
}

std::string Tokenizer::Decode(int previous, int token) const {
  if (token < 0 || token >= static_cast<int>(pieces_.size())) return "";
  std::string p = pieces_[token];
  if (previous == 1 && !p.empty() && p[0] == ' ') p.erase(0, 1);
  unsigned byte;
  if (p.size() == 6 && std::sscanf(p.c_str(), "<0x%02X>", &byte) == 1) {
    return std::string(1, static_cast<char>(byte));
  }
  return p;
}

}  // namespace seedance::kv
