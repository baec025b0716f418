// Attention over a KvCache (see seedance/kv/attend.h).
#include "seedance/kv/attend.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace seedance::kv {

void AttendHead(const KvCache& cache, int layer, int kv_head, std::span<const float> q, int len,
                float scale, std::span<const float> bias, std::span<float> scratch,
                std::span<float> out) {
  const std::span<float> att = scratch.first(static_cast<size_t>(len));
  cache.Scores(layer, kv_head, q, len, att);
  float mx = -INFINITY;
  for (int t = 0; t < len; ++t) {
    att[t] = att[t] * scale + (bias.empty() ? 0.0f : bias[t]);
    mx = std::max(mx, att[t]);
  }
  if (mx == -INFINITY) {  // nothing to attend to
    std::fill(out.begin(), out.end(), 0.0f);
    return;
  }
  float sum = 0;
  for (float& a : att) {
    a = std::exp(a - mx);
    sum += a;
  }
  for (float& a : att) a /= sum;
  cache.WeightedSum(layer, kv_head, att, len, out);
}

base::Status AttendQueries(const KvCache& cache, int layer, const HeadLayout& heads,
                           std::span<const float> q, int n_queries, int cache_len, float scale,
                           std::span<const float> bias, std::span<float> out) {
  if (heads.n_kv_heads < 1 || heads.n_heads % heads.n_kv_heads != 0 || heads.head_size < 1) {
    return base::InvalidArgumentError("n_heads must be a positive multiple of n_kv_heads", "heads");
  }
  if (n_queries < 1 || n_queries > cache_len) {
    return base::InvalidArgumentError("must be 1 .. the cache's length " +
                                          std::to_string(cache_len) + ", got " +
                                          std::to_string(n_queries),
                                      "n_queries");
  }
  const size_t row = static_cast<size_t>(heads.n_heads) * heads.head_size;
  if (q.size() != row * n_queries || out.size() != q.size()) {
    return base::InvalidArgumentError(
        "expected " + std::to_string(row * n_queries) + " floats (queries x heads x head size)",
        "q");
  }
  if (!bias.empty() && bias.size() != static_cast<size_t>(n_queries) * cache_len) {
    return base::InvalidArgumentError(
        "expected queries x cache length terms, got " + std::to_string(bias.size()), "bias");
  }
  const int group = heads.n_heads / heads.n_kv_heads;
  std::vector<float> scratch(static_cast<size_t>(cache_len));
  for (int i = 0; i < n_queries; ++i) {
    const int len = bias.empty() ? cache_len - n_queries + i + 1 : cache_len;
    const std::span<const float> b =
        bias.empty() ? std::span<const float>()
                     : bias.subspan(static_cast<size_t>(i) * cache_len, cache_len);
    for (int h = 0; h < heads.n_heads; ++h) {
      const size_t at = static_cast<size_t>(i) * row + static_cast<size_t>(h) * heads.head_size;
      AttendHead(cache, layer, h / group, q.subspan(at, heads.head_size), len, scale, b, scratch,
                 out.subspan(at, heads.head_size));
    }
  }
  return base::OkStatus();
}

}  // namespace seedance::kv
