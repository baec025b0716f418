// KV caches for attention (feature KV-1, KV-3): a full-precision one and a
// quantized one that scores queries and sums values straight from its packed
// storage, without writing dequantized copies.
//
// Quantized layout (per layer; kv_dim channels; group size G, default 32):
//   keys   quantized per channel (as KIVI does): for each channel, groups of
//          G consecutive tokens share (min, scale); a group is packed when all
//          G tokens have left the full-precision window;
//   values quantized per token: each token's channels in groups of G share
//          (min, scale); a token is packed when it leaves the window;
//   window the most recent `window` tokens (default 128) stay FP32, and so do
//          keys of a group not yet complete.
// Codes are asymmetric: q = rne((x - min) / scale), scale = (max - min) /
// (2^b - 1), so |x - (min + q * scale)| <= scale / 2 — the KV-6 bound
// ||e||inf <= alpha / (2^b - 1) with alpha the group's range. Codes of b bits
// are packed into 32-bit words, floor(32 / b) per word, low bits first (8 and
// 4 bits fill a word; 6 bits: 5 per word; 5 bits: 6 per word; 2 bits: 16), each
// group starting on a word: one 32-bit load yields several codes with shifts
// and a mask. `fp8` stores E4M3 codes with a per-group scale (amax / 448).
// (min, scale) are FP32. `adaptive` picks each key group's width (and that of
// the values packed after it) with the rule of adaptive.h and logs why.
//
// Thread safety: a cache belongs to one sequence; no internal locking.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/kv/adaptive.h"
#include "seedance/kv/width.h"
#include "seedance/port/simd.h"

namespace seedance::kv {

struct CacheShape {
  int layers = 0;
  int kv_dim = 0;
  int head_size = 0;
  int max_tokens = 0;  // the FP32 cache reserves this many tokens a layer (0: grows as it goes)
};

class KvCache {
 public:
  virtual ~KvCache() = default;
  // Stores token `pos`'s keys and values (kv_dim each) for `layer`. Tokens
  // arrive in order, pos = 0, 1, ... per layer. Non-finite input is an error.
  virtual base::Status Append(int layer, int pos, std::span<const float> k,
                              std::span<const float> v) = 0;
  // out[t] = q . k_t over the head's channels [head * head_size, +head_size), t < len.
  virtual void Scores(int layer, int kv_head, std::span<const float> q, int len,
                      std::span<float> out) const = 0;
  // out[c] = sum_t w[t] * v_t[c] over the head's channels, t < len.
  virtual void WeightedSum(int layer, int kv_head, std::span<const float> w, int len,
                           std::span<float> out) const = 0;
  // Token `pos`'s keys and values (kv_dim each) as Scores and WeightedSum read them: decoded from
  // the packed codes, or the FP32 window's copy. pos < the layer's length.
  virtual void ReadBack(int layer, int pos, std::span<float> k, std::span<float> v) const = 0;
  // Bytes held now (codes, scales, FP32 window and staging).
  virtual int64_t Bytes() const = 0;
  // Values stored in packed form, and the bits they take (codes plus group parameters).
  virtual int64_t PackedValues() const = 0;
  virtual int64_t PackedBits() const = 0;
  // The adaptive mode's decisions, one per packed key group and layer, in order.
  virtual std::vector<BitDecision> Decisions() const { return {}; }
};

// Bits per value of a full group in the packed form: ceil(group / floor(32 / bits)) 32-bit words
// of codes plus an FP32 minimum and scale (64 bits), over `group` values.
double PackedBitsPerValue(int bits, int group);

struct QuantConfig {
  KvWidth width = KvWidth::kInt8;  // any but kFp32 (NewFullCache is the FP32 cache)
  int group = 32;
  int window = 128;
  AdaptiveRule rule;  // "adaptive": the width of each block (adaptive.h)
  // kScalar: always the scalar paths (tests and benchmarks compare); kAuto: the process's
  // choice (port/simd.h).
  port::SimdKernel kernel = port::SimdKernel::kAuto;

  static QuantConfig Of(KvWidth width, int group, int window) {
    QuantConfig c;
    c.width = width;
    c.group = group;
    c.window = window;
    return c;
  }

  base::Status Validate() const;
};

std::unique_ptr<KvCache> NewFullCache(const CacheShape& shape);
base::StatusOr<std::unique_ptr<KvCache>> NewQuantizedCache(const CacheShape& shape,
                                                           const QuantConfig& config);

}  // namespace seedance::kv
