// Softmax attention read straight from a KvCache (features KV-1, KV-3): the scores come from the
// cache's packed keys and the output from its packed values, with no dequantized copy of the
// history. The engine (llama.h) and Transformers' attention hook (python/seedance/hf) both call
// it, so one routine decides what a quantized cache's attention computes.
//
// Thread safety: reads the cache only; concurrent calls need their own scratch.
#pragma once

#include <span>

#include "seedance/base/status.h"
#include "seedance/kv/cache.h"

namespace seedance::kv {

// Grouped-query attention heads: query head h reads KV head h / (n_heads / n_kv_heads).
struct HeadLayout {
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_size = 0;
};

// out = sum_t softmax_t(scale * q . k_t + bias_t) v_t over the first `len` tokens of `layer`'s
// `kv_head`. `bias` is empty or `len` additive terms (-inf: a token not attended to); when every
// term is -inf the output is zero. `scratch` holds at least `len` floats.
void AttendHead(const KvCache& cache, int layer, int kv_head, std::span<const float> q, int len,
                float scale, std::span<const float> bias, std::span<float> scratch,
                std::span<float> out);

// Every head of `n_queries` queries, the last n_queries of the `cache_len` tokens the cache holds
// for `layer` (query i at position cache_len - n_queries + i). q and out are
// [n_queries][n_heads][head_size]. `bias` empty: causal (query i sees tokens 0 .. its position);
// else [n_queries][cache_len] additive terms that replace the causal rule (a Transformers
// attention mask). InvalidArgument names the size that does not match.
base::Status AttendQueries(const KvCache& cache, int layer, const HeadLayout& heads,
                           std::span<const float> q, int n_queries, int cache_len, float scale,
                           std::span<const float> bias, std::span<float> out);

}  // namespace seedance::kv
