// Full-precision and quantized KV caches (see seedance/kv/cache.h).
#include "seedance/kv/cache.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seedance/kv/adaptive.h"
#include "seedance/port/simd_kv.h"
#include "seedance/precision/convert.h"
#include "seedance/precision/formats.h"

namespace seedance::kv {
namespace {

base::Status CheckFinite(std::span<const float> x, const char* what, int layer, int pos) {
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) {
      return base::InvalidArgumentError(std::string("non-finite ") + what,
                                        "layer " + std::to_string(layer) + ", token " +
                                            std::to_string(pos) + ", channel " + std::to_string(i));
    }
  }
  return base::OkStatus();
}

class FullCache final : public KvCache {
 public:
  // Storage for max_tokens tokens per layer is reserved up front; a layer grows past it on demand
  // (max_tokens 0: a cache whose length is not known in advance, as in Transformers' generate()).
  explicit FullCache(const CacheShape& s) : s_(s), k_(s.layers), v_(s.layers), len_(s.layers, 0) {
    for (int l = 0; l < s.layers; ++l) {
      k_[l].reserve(static_cast<size_t>(s.max_tokens) * s.kv_dim);
      v_[l].reserve(k_[l].capacity());
    }
  }

  base::Status Append(int layer, int pos, std::span<const float> k,
                      std::span<const float> v) override {
    SEEDANCE_RETURN_IF_ERROR(CheckFinite(k, "key", layer, pos));
    SEEDANCE_RETURN_IF_ERROR(CheckFinite(v, "value", layer, pos));
    const size_t end = static_cast<size_t>(pos + 1) * s_.kv_dim;
    if (k_[layer].size() < end) {
      k_[layer].resize(end);
      v_[layer].resize(end);
    }
    std::copy(k.begin(), k.end(), At(k_, layer, pos));
    std::copy(v.begin(), v.end(), At(v_, layer, pos));
    len_[layer] = pos + 1;
    return base::OkStatus();
  }

  void Scores(int layer, int head, std::span<const float> q, int len,
              std::span<float> out) const override {
    const int h0 = head * s_.head_size;
    for (int t = 0; t < len; ++t) {
      const float* k = At(k_, layer, t) + h0;
      float s = 0;
      for (int c = 0; c < s_.head_size; ++c) s += q[c] * k[c];
      out[t] = s;
    }
  }

  void WeightedSum(int layer, int head, std::span<const float> w, int len,
                   std::span<float> out) const override {
    const int h0 = head * s_.head_size;
    std::fill(out.begin(), out.end(), 0.0f);
    for (int t = 0; t < len; ++t) {
      const float* v = At(v_, layer, t) + h0;
      for (int c = 0; c < s_.head_size; ++c) out[c] += w[t] * v[c];
    }
  }

  void ReadBack(int layer, int pos, std::span<float> k, std::span<float> v) const override {
    std::copy_n(At(k_, layer, pos), s_.kv_dim, k.begin());
    std::copy_n(At(v_, layer, pos), s_.kv_dim, v.begin());
  }

  int64_t Bytes() const override {
    int64_t tokens = 0;
    for (int n : len_) tokens += n;
    return tokens * s_.kv_dim * 2 * 4;
  }
  int64_t PackedValues() const override { return 0; }
  int64_t PackedBits() const override { return 0; }

 private:
  float* At(std::vector<std::vector<float>>& a, int layer, int pos) {
    return a[layer].data() + static_cast<size_t>(pos) * s_.kv_dim;
  }
  const float* At(const std::vector<std::vector<float>>& a, int layer, int pos) const {
    return a[layer].data() + static_cast<size_t>(pos) * s_.kv_dim;
  }
  CacheShape s_;
  std::vector<std::vector<float>> k_, v_;  // [layer][token * kv_dim + channel]
  std::vector<int> len_;
};

// One packed group: parameters, width and where its codes start.
struct Group {
  float min = 0;    // unused for fp8
  float scale = 0;  // 0: every value equals min
  uint32_t word = 0;
  uint8_t bits = 8;
  bool fp8 = false;
  // 4-bit key groups of 32 in the channel-pair layout (PairUp): which channel
  // of the pair this is (0 or 1), `word` being the pair's first word; -1: the
  // plain layout.
  int8_t lane = -1;
};

// Packing and unpacking of b-bit codes, floor(32 / b) per 32-bit word.
class Codec {
 public:
  // Packs n values x[static_cast<ptrdiff_t>(i) * stride] into words (appended) with `bits` (or
  // E4M3).
  static Group Pack(const float* x, int stride, int n, int bits, bool fp8,
                    std::vector<uint32_t>& words) {
    Group g;
    g.bits = static_cast<uint8_t>(fp8 ? 8 : bits);
    g.fp8 = fp8;
    g.word = static_cast<uint32_t>(words.size());
    const int per_word = 32 / g.bits;
    words.resize(words.size() + (n + per_word - 1) / per_word, 0);
    uint32_t* w = words.data() + g.word;
    if (fp8) {
      float amax = 0;
      for (int i = 0; i < n; ++i)
        amax = std::max(amax, std::fabs(x[static_cast<ptrdiff_t>(i) * stride]));
      g.scale = amax > 0 ? amax / 448.0f : 1.0f;
      for (int i = 0; i < n; ++i) {
        const uint32_t code =
            precision::FloatToE4M3(x[static_cast<ptrdiff_t>(i) * stride] / g.scale, true);
        w[i / per_word] |= code << ((i % per_word) * g.bits);
      }
      return g;
    }
    float lo = x[0], hi = x[0];
    for (int i = 1; i < n; ++i) {
      lo = std::min(lo, x[static_cast<ptrdiff_t>(i) * stride]);
      hi = std::max(hi, x[static_cast<ptrdiff_t>(i) * stride]);
    }
    const float levels = static_cast<float>((1u << g.bits) - 1);
    g.min = lo;
    g.scale = (hi - lo) / levels;
    const float inv = g.scale > 0 ? 1.0f / g.scale : 0.0f;
    for (int i = 0; i < n; ++i) {
      const float q = std::clamp(std::nearbyint((x[static_cast<ptrdiff_t>(i) * stride] - lo) * inv),
                                 0.0f, levels);
      w[i / per_word] |= static_cast<uint32_t>(q) << ((i % per_word) * g.bits);
    }
    return g;
  }

  // Code i of a group.
  static uint32_t Code(const Group& g, const uint32_t* words, int i) {
    if (g.lane >= 0) return (words[g.word + i / 4] >> (4 * (i % 4) + 16 * g.lane)) & 0xF;
    const int per_word = 32 / g.bits;
    const uint32_t mask = (1u << g.bits) - 1;
    return (words[g.word + i / per_word] >> ((i % per_word) * g.bits)) & mask;
  }

  // The value of code i of a group.
  static float Value(const Group& g, const uint32_t* words, int i) {
    const uint32_t code = Code(g, words, i);
    if (g.fp8) return precision::E4M3ToFloat(static_cast<uint8_t>(code)) * g.scale;
    return g.min + g.scale * static_cast<float>(code);
  }

  // Rewrites two plain 4-bit groups of 32 codes (a's 4 words, then b's) as
  // one pair: word i holds tokens 4i .. 4i + 3, token 4i + k of a in bits
  // 4k .. 4k + 3 and of b in bits 16 + 4k .. 16 + 4k + 3 (the layout of
  // port::Avx2Scores4BitPairs). The pair takes a's and b's 8 words.
  static void PairUp(Group& a, Group& b, std::vector<uint32_t>& words) {
    uint32_t pair[8] = {};
    for (int t = 0; t < 32; ++t) {
      pair[t / 4] |= Code(a, words.data(), t) << (4 * (t % 4));
      pair[t / 4] |= Code(b, words.data(), t) << (16 + 4 * (t % 4));
    }
    std::copy(pair, pair + 8, words.begin() + a.word);
    b.word = a.word;
    a.lane = 0;
    b.lane = 1;
  }
};

// out[j] += a * code(first + j) + b for j < n, the codes of one plain group of B-bit codes
// (floor(32 / B) a word, low bits first) starting at `words`: the inner loop of the scalar scores
// and value sums, with the width a compile-time constant so the shifts and masks unroll.
template <int B>
void AccumulateCodes(const uint32_t* words, int first, int n, float a, float b, float* out) {
  constexpr int kPerWord = 32 / B;
  constexpr uint32_t kMask = (1u << B) - 1;
  for (int j = 0; j < n; ++j) {
    const int i = first + j;
    const uint32_t code = (words[i / kPerWord] >> ((i % kPerWord) * B)) & kMask;
    out[j] += a * static_cast<float>(code) + b;
  }
}

// The same for any group: plain integer widths through the template, E4M3 codes through a table,
// channel-paired 4-bit groups through Codec::Code.
void Accumulate(const Group& g, const uint32_t* words, int first, int n, float weight, float* out,
                bool avx2) {
  if (g.fp8) {
    static const float* const kE4M3 = precision::Fp8DecodeTable(precision::Format::kE4M3);
    const float a = weight * g.scale;
    for (int j = 0; j < n; ++j) {
      const uint32_t code = (words[g.word + (first + j) / 4] >> (((first + j) % 4) * 8)) & 0xFF;
      out[j] += a * kE4M3[code];
    }
    return;
  }
  const float a = weight * g.scale, b = weight * g.min;
  if (g.lane >= 0) {
    for (int j = 0; j < n; ++j)
      out[j] += a * static_cast<float>(Codec::Code(g, words, first + j)) + b;
    return;
  }
  const uint32_t* w = words + g.word;
  if (avx2 && (g.bits == 8 || (g.bits == 4 && first % 2 == 0))) {
    // Little-endian words, low bits first: 8-bit codes are bytes, 4-bit codes nibbles.
    const auto* bytes = reinterpret_cast<const uint8_t*>(w);
    if (g.bits == 8) return port::Avx2AccumulateCodes8(bytes + first, n, a, b, out);
    return port::Avx2AccumulateCodes4(bytes + first / 2, n, a, b, out);
  }
  switch (g.bits) {
    case 8:
      return AccumulateCodes<8>(w, first, n, a, b, out);
    case 6:
      return AccumulateCodes<6>(w, first, n, a, b, out);
    case 5:
      return AccumulateCodes<5>(w, first, n, a, b, out);
    case 4:
      return AccumulateCodes<4>(w, first, n, a, b, out);
    default:
      return AccumulateCodes<2>(w, first, n, a, b, out);
  }
}

class QuantizedCache final : public KvCache {
 public:
  QuantizedCache(const CacheShape& s, const QuantConfig& c)
      : s_(s),
        c_(c),
        fp8_(c.width == KvWidth::kFp8),
        adaptive_(c.width == KvWidth::kAdaptive),
        bits_(KvCodeBits(c.width)),
        ring_(c.window + c.group),
        layers_(s.layers) {
    // 4-bit key groups of 32 are stored in channel pairs (Codec::PairUp),
    // when the pairs stay within heads; the AVX2 kernel reads that layout.
    pair_4bit_ = c.group == 32 && s.head_size % 2 == 0 && !fp8_;
    avx2_ = port::UseAvx2(c.kernel);
    simd_4bit_ = pair_4bit_ && avx2_ && s.head_size % 8 == 0 && s.head_size <= 256;
    for (auto& l : layers_) {
      l.bits = adaptive_ ? c.rule.default_bits : bits_;
      l.k_ring.assign(static_cast<size_t>(ring_) * s.kv_dim, 0.0f);
      l.v_ring.assign(l.k_ring.size(), 0.0f);
    }
  }

  base::Status Append(int layer, int pos, std::span<const float> k,
                      std::span<const float> v) override {
    SEEDANCE_RETURN_IF_ERROR(CheckFinite(k, "key", layer, pos));
    SEEDANCE_RETURN_IF_ERROR(CheckFinite(v, "value", layer, pos));
    Layer& l = layers_[layer];
    std::copy(k.begin(), k.end(), Ring(l.k_ring, pos));
    std::copy(v.begin(), v.end(), Ring(l.v_ring, pos));
    l.len = pos + 1;
    const int out = pos - c_.window;  // newest token outside the window
    // Keys: a group of G tokens is packed per channel once all of it is out.
    // In adaptive mode the group's statistics decide its width first.
    while (l.k_packed + c_.group - 1 <= out) {
      if (adaptive_) l.bits = Decide(layer, pos, l);
      for (int c = 0; c < s_.kv_dim; ++c) {
        // Gather the channel across the group's tokens (they may wrap in the ring).
        float column[256];
        for (int i = 0; i < c_.group; ++i) column[i] = Ring(l.k_ring, l.k_packed + i)[c];
        l.k_groups.push_back(Codec::Pack(column, 1, c_.group, l.bits, fp8_, l.k_words));
        l.k_scale.push_back(l.k_groups.back().scale);
        l.k_min.push_back(l.k_groups.back().min);
      }
      if (pair_4bit_ && l.bits == 4) {
        Group* row = &l.k_groups[l.k_groups.size() - s_.kv_dim];
        for (int c = 0; c < s_.kv_dim; c += 2) Codec::PairUp(row[c], row[c + 1], l.k_words);
      }
      l.k_row_bits.push_back(static_cast<uint8_t>(l.bits));
      l.k_row_word.push_back(l.k_groups[l.k_groups.size() - s_.kv_dim].word);
      l.k_packed += c_.group;
    }
    // Values: the token leaving the window is packed, per token, at the
    // width of the newest key decision.
    while (l.v_packed <= out) {
      const float* src = Ring(l.v_ring, l.v_packed);
      for (int c0 = 0; c0 < s_.kv_dim; c0 += c_.group) {
        const int n = std::min(c_.group, s_.kv_dim - c0);
        l.v_groups.push_back(Codec::Pack(src + c0, 1, n, l.bits, fp8_, l.v_words));
      }
      ++l.v_packed;
    }
    return base::OkStatus();
  }

  void Scores(int layer, int head, std::span<const float> q, int len,
              std::span<float> out) const override {
    const Layer& l = layers_[layer];
    const int h0 = head * s_.head_size;
    const int packed = std::min(len, l.k_packed);
    // Packed keys: per group and channel, sum q_c * (min + scale * code)
    // without a copy. 4-bit rows take the AVX2 kernel when the shape allows.
    for (int t0 = 0; t0 < packed; t0 += c_.group) {
      const size_t row = static_cast<size_t>(t0 / c_.group);
      const size_t base = row * s_.kv_dim + h0;
      if (simd_4bit_ && l.k_row_bits[row] == 4) {
        // Channel pairs of 8 words from the row's first word: no group record read.
        const auto* codes = reinterpret_cast<const uint8_t*>(l.k_words.data() + l.k_row_word[row] +
                                                             static_cast<size_t>(4) * h0);
        port::Avx2Scores4BitPairs(codes, s_.head_size, q.data(), &l.k_scale[base], &l.k_min[base],
                                  out.data() + t0);
        continue;
      }
      const int n = std::min(c_.group, packed - t0);
      for (int i = 0; i < n; ++i) out[t0 + i] = 0;
      for (int c = 0; c < s_.head_size; ++c) {
        Accumulate(l.k_groups[base + c], l.k_words.data(), 0, n, q[c], out.data() + t0, avx2_);
      }
    }
    for (int t = packed; t < len; ++t) {
      const float* k = Ring(l.k_ring, t) + h0;
      float s = 0;
      for (int c = 0; c < s_.head_size; ++c) s += q[c] * k[c];
      out[t] = s;
    }
  }

  void WeightedSum(int layer, int head, std::span<const float> w, int len,
                   std::span<float> out) const override {
    const Layer& l = layers_[layer];
    const int h0 = head * s_.head_size;
    std::fill(out.begin(), out.end(), 0.0f);
    const int packed = std::min(len, l.v_packed);
    const int groups_per_token = (s_.kv_dim + c_.group - 1) / c_.group;
    for (int t = 0; t < packed; ++t) {
      // The head's channels, one value group (or the part of it inside the head) at a time.
      for (int ch = h0; ch < h0 + s_.head_size;) {
        const int g = ch / c_.group;
        const int end = std::min((g + 1) * c_.group, h0 + s_.head_size);
        const Group& grp = l.v_groups[static_cast<size_t>(t) * groups_per_token + g];
        Accumulate(grp, l.v_words.data(), ch - g * c_.group, end - ch, w[t], out.data() + (ch - h0),
                   avx2_);
        ch = end;
      }
    }
    for (int t = packed; t < len; ++t) {
      const float* v = Ring(l.v_ring, t) + h0;
      for (int c = 0; c < s_.head_size; ++c) out[c] += w[t] * v[c];
    }
  }

  void ReadBack(int layer, int pos, std::span<float> k, std::span<float> v) const override {
    const Layer& l = layers_[layer];
    if (pos < l.k_packed) {
      const size_t row = static_cast<size_t>(pos / c_.group) * s_.kv_dim;
      for (int c = 0; c < s_.kv_dim; ++c)
        k[c] = Codec::Value(l.k_groups[row + c], l.k_words.data(), pos % c_.group);
    } else {
      std::copy_n(Ring(l.k_ring, pos), s_.kv_dim, k.begin());
    }
    if (pos < l.v_packed) {
      const int groups_per_token = (s_.kv_dim + c_.group - 1) / c_.group;
      const size_t first = static_cast<size_t>(pos) * groups_per_token;
      for (int c = 0; c < s_.kv_dim; ++c)
        v[c] = Codec::Value(l.v_groups[first + c / c_.group], l.v_words.data(), c % c_.group);
    } else {
      std::copy_n(Ring(l.v_ring, pos), s_.kv_dim, v.begin());
    }
  }

  int64_t Bytes() const override {
    int64_t bytes = 0;
    for (const Layer& l : layers_) {
      bytes += static_cast<int64_t>(l.k_words.size() + l.v_words.size()) * 4;
      bytes += static_cast<int64_t>(l.k_groups.size() + l.v_groups.size()) * 8;  // min, scale
      bytes += static_cast<int64_t>((l.len - l.k_packed) + (l.len - l.v_packed)) * s_.kv_dim * 4;
    }
    return bytes;
  }
  int64_t PackedValues() const override {
    int64_t n = 0;
    for (const Layer& l : layers_) n += static_cast<int64_t>(l.k_packed + l.v_packed) * s_.kv_dim;
    return n;
  }
  std::vector<BitDecision> Decisions() const override { return decisions_; }

  int64_t PackedBits() const override {
    int64_t bits = 0;
    for (const Layer& l : layers_) {
      bits += static_cast<int64_t>(l.k_words.size() + l.v_words.size()) * 32;
      bits += static_cast<int64_t>(l.k_groups.size() + l.v_groups.size()) * 64;
    }
    return bits;
  }

 private:
  struct Layer {
    std::vector<float> k_ring, v_ring;  // FP32 tokens not yet packed: slot t % ring
    std::vector<Group> k_groups;        // [key group][channel]
    // The same groups' scale and min as plain arrays, and each key group's
    // width: what the AVX2 score kernel reads.
    std::vector<float> k_scale, k_min;
    std::vector<uint8_t> k_row_bits;   // [key group]
    std::vector<uint32_t> k_row_word;  // [key group]: its first word
    std::vector<Group> v_groups;       // [token][channel group]
    std::vector<uint32_t> k_words, v_words;
    int len = 0, k_packed = 0, v_packed = 0;
    int bits = 8;  // width of the newest block
  };

  // The adaptive rule on the key group about to be packed.
  int Decide(int layer, int pos, const Layer& l) {
    std::vector<double> norms(c_.group);
    std::vector<float> all;
    all.reserve(static_cast<size_t>(c_.group) * s_.kv_dim);
    for (int i = 0; i < c_.group; ++i) {
      const float* k = Ring(l.k_ring, l.k_packed + i);
      double ss = 0;
      for (int c = 0; c < s_.kv_dim; ++c) {
        ss += static_cast<double>(k[c]) * k[c];
        all.push_back(k[c]);
      }
      norms[i] = std::sqrt(ss);
    }
    BitDecision d = DecideBits(c_.rule, pos, pos + 1, NormalisedEntropy(norms));
    d.layer = layer;
    d.laplace_b = LaplaceScale(all);
    decisions_.push_back(d);
    return d.target_bw;
  }
  float* Ring(std::vector<float>& r, int t) {
    return r.data() + static_cast<size_t>(t % ring_) * s_.kv_dim;
  }
  const float* Ring(const std::vector<float>& r, int t) const {
    return r.data() + static_cast<size_t>(t % ring_) * s_.kv_dim;
  }

  CacheShape s_;
  QuantConfig c_;
  bool fp8_, adaptive_;
  int bits_;
  bool pair_4bit_ = false;  // 4-bit key groups in the channel-pair layout
  bool simd_4bit_ = false;  // ... and scored by the AVX2 kernel
  bool avx2_ = false;       // the other 8- and 4-bit code sums through port's AVX2 loops
  int ring_;
  std::vector<Layer> layers_;
  std::vector<BitDecision> decisions_;
};

}  // namespace

base::Status QuantConfig::Validate() const {
  if (width == KvWidth::kFp32) {
    return base::InvalidArgumentError(
        "a quantized cache needs a width of " + QuantizedKvWidthList() + ", not 32", "bits");
  }
  for (int b : {rule.long_bits, rule.default_bits}) {
    if (b != 8 && b != 6 && b != 5 && b != 4 && b != 2) {
      return base::InvalidArgumentError("adaptive widths must be 8, 6, 5, 4 or 2", "rule");
    }
  }
  if (group < 1 || group > 256) return base::InvalidArgumentError("must be 1..256", "group");
  if (window < 0) return base::InvalidArgumentError("must be >= 0", "window");
  SEEDANCE_RETURN_IF_ERROR(port::CheckSimdKernel(kernel));
  return base::OkStatus();
}

std::unique_ptr<KvCache> NewFullCache(const CacheShape& shape) {
  return std::make_unique<FullCache>(shape);
}

base::StatusOr<std::unique_ptr<KvCache>> NewQuantizedCache(const CacheShape& shape,
                                                           const QuantConfig& config) {
  SEEDANCE_RETURN_IF_ERROR(config.Validate());
  return std::unique_ptr<KvCache>(new QuantizedCache(shape, config));
}

double PackedBitsPerValue(int bits, int group) {
  const int per_word = 32 / bits;
  const double words = std::ceil(static_cast<double>(group) / per_word);
  return (words * 32 + 64) / group;
}

}  // namespace seedance::kv
