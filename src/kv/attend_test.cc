// Attention over a cache against a brute-force reference in double precision on the values the
// cache reads back, and ReadBack against the fused Scores / WeightedSum paths with one-hot
// queries and weights.
#include "seedance/kv/attend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

namespace seedance::kv {
namespace {

constexpr HeadLayout kHeads{4, 2, 16};
constexpr CacheShape kAttendShape{2, 32, 16, 0};  // kv_dim = 2 KV heads x 16; grows as it goes

std::unique_ptr<KvCache> Filled(KvWidth width, int len, unsigned seed) {
  std::unique_ptr<KvCache> cache =
      width == KvWidth::kFp32 ? NewFullCache(kAttendShape)
                              : *NewQuantizedCache(kAttendShape, QuantConfig::Of(width, 8, 5));
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> k(kAttendShape.kv_dim), v(kAttendShape.kv_dim);
  for (int layer = 0; layer < kAttendShape.layers; ++layer) {
    for (int t = 0; t < len; ++t) {
      for (int c = 0; c < kAttendShape.kv_dim; ++c) {
        k[c] = g(rng) * (1 + c % 3);
        v[c] = g(rng);
      }
      EXPECT_TRUE(cache->Append(layer, t, k, v).ok());
    }
  }
  return cache;
}

std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> x(n);
  for (float& a : x) a = g(rng);
  return x;
}

// softmax(scale q.k + bias) v in double over the read-back keys and values.
std::vector<double> Reference(const KvCache& cache, int layer, std::span<const float> q,
                              int n_queries, int cache_len, float scale,
                              std::span<const float> bias) {
  std::vector<std::vector<float>> k(cache_len, std::vector<float>(kAttendShape.kv_dim)),
      v(cache_len, std::vector<float>(kAttendShape.kv_dim));
  for (int t = 0; t < cache_len; ++t) cache.ReadBack(layer, t, k[t], v[t]);
  const int hs = kHeads.head_size, group = kHeads.n_heads / kHeads.n_kv_heads;
  std::vector<double> out(q.size(), 0.0);
  for (int i = 0; i < n_queries; ++i) {
    for (int h = 0; h < kHeads.n_heads; ++h) {
      const float* qh = q.data() + (static_cast<size_t>(i) * kHeads.n_heads + h) * hs;
      const int c0 = (h / group) * hs;
      std::vector<double> logit(cache_len, -INFINITY);
      double mx = -INFINITY;
      for (int t = 0; t < cache_len; ++t) {
        const bool seen = bias.empty() ? t <= cache_len - n_queries + i : true;
        if (!seen) continue;
        double s = 0;
        for (int c = 0; c < hs; ++c) s += static_cast<double>(qh[c]) * k[t][c0 + c];
        logit[t] = s * scale + (bias.empty() ? 0.0 : bias[static_cast<size_t>(i) * cache_len + t]);
        mx = std::max(mx, logit[t]);
      }
      if (mx == -INFINITY) continue;
      double sum = 0;
      for (double& l : logit) sum += (l = std::exp(l - mx));
      for (int t = 0; t < cache_len; ++t) {
        for (int c = 0; c < hs; ++c) {
          out[(static_cast<size_t>(i) * kHeads.n_heads + h) * hs + c] +=
              logit[t] / sum * v[t][c0 + c];
        }
      }
    }
  }
  return out;
}

class AttendTest : public ::testing::TestWithParam<KvWidth> {};

TEST_P(AttendTest, ReadBackIsWhatTheFusedPathsRead) {
  const int len = 37;  // packed groups of 8, a partial group and the FP32 window
  const std::unique_ptr<KvCache> cache = Filled(GetParam(), len, 1);
  std::vector<float> k(kAttendShape.kv_dim), v(kAttendShape.kv_dim), q(kAttendShape.head_size),
      w(len), scores(len), out(kAttendShape.head_size);
  for (int t = 0; t < len; ++t) {
    cache->ReadBack(1, t, k, v);
    for (int head = 0; head < kAttendShape.kv_dim / kAttendShape.head_size; ++head) {
      for (int c = 0; c < kAttendShape.head_size; ++c) {
        std::fill(q.begin(), q.end(), 0.0f);
        q[c] = 1;
        cache->Scores(1, head, q, len, scores);
        EXPECT_NEAR(scores[t], k[head * kAttendShape.head_size + c],
                    1e-6 * (1 + std::fabs(scores[t])));
      }
      std::fill(w.begin(), w.end(), 0.0f);
      w[t] = 1;
      cache->WeightedSum(1, head, w, len, out);
      for (int c = 0; c < kAttendShape.head_size; ++c)
        EXPECT_NEAR(out[c], v[head * kAttendShape.head_size + c], 1e-6 * (1 + std::fabs(out[c])));
    }
  }
}

TEST_P(AttendTest, CausalQueriesMatchTheReference) {
  const int len = 41, n = 6;
  const std::unique_ptr<KvCache> cache = Filled(GetParam(), len, 2);
  const std::vector<float> q =
      Random(static_cast<size_t>(n) * kHeads.n_heads * kHeads.head_size, 3);
  std::vector<float> out(q.size());
  ASSERT_TRUE(AttendQueries(*cache, 0, kHeads, q, n, len, 0.25f, {}, out).ok());
  const std::vector<double> want = Reference(*cache, 0, q, n, len, 0.25f, {});
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], want[i], 1e-5) << i;
}

TEST_P(AttendTest, AMaskReplacesTheCausalRule) {
  const int len = 19, n = 3;
  const std::unique_ptr<KvCache> cache = Filled(GetParam(), len, 4);
  const std::vector<float> q =
      Random(static_cast<size_t>(n) * kHeads.n_heads * kHeads.head_size, 5);
  // The causal rule written as a mask gives the causal result.
  std::vector<float> causal(static_cast<size_t>(n) * len, 0.0f);
  for (int i = 0; i < n; ++i)
    for (int t = len - n + i + 1; t < len; ++t)
      causal[static_cast<size_t>(i) * len + t] = -INFINITY;
  std::vector<float> a(q.size()), b(q.size());
  ASSERT_TRUE(AttendQueries(*cache, 1, kHeads, q, n, len, 0.5f, {}, a).ok());
  ASSERT_TRUE(AttendQueries(*cache, 1, kHeads, q, n, len, 0.5f, causal, b).ok());
  EXPECT_EQ(a, b);
  // Left padding (the first 4 tokens masked), a finite bias, and a row that sees nothing.
  std::vector<float> mask = causal;
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < 4; ++t) mask[static_cast<size_t>(i) * len + t] = -INFINITY;
  mask[static_cast<size_t>(1) * len + 6] = -1.5f;
  for (int t = 0; t < len; ++t) mask[static_cast<size_t>(2) * len + t] = -INFINITY;
  ASSERT_TRUE(AttendQueries(*cache, 1, kHeads, q, n, len, 0.5f, mask, b).ok());
  const std::vector<double> want = Reference(*cache, 1, q, n, len, 0.5f, mask);
  for (size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(b[i], want[i], 1e-5) << i;
  for (size_t i = 2 * kHeads.n_heads * kHeads.head_size; i < b.size(); ++i) EXPECT_EQ(b[i], 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Widths, AttendTest,
                         ::testing::Values(KvWidth::kFp32, KvWidth::kInt8, KvWidth::kInt6,
                                           KvWidth::kInt5, KvWidth::kInt4, KvWidth::kInt2,
                                           KvWidth::kFp8),
                         [](const ::testing::TestParamInfo<KvWidth>& p) {
                           return "w" + std::string(KvWidthName(p.param));
                         });

TEST(AttendQueriesTest, SizesThatDoNotMatchAreErrors) {
  const std::unique_ptr<KvCache> cache = Filled(KvWidth::kFp32, 4, 6);
  std::vector<float> q(static_cast<size_t>(kHeads.n_heads) * kHeads.head_size), out(q.size());
  EXPECT_EQ(AttendQueries(*cache, 0, kHeads, q, 5, 4, 1, {}, out).where(), "n_queries");
  EXPECT_EQ(AttendQueries(*cache, 0, kHeads, std::span<const float>(q).first(3), 1, 4, 1, {}, out)
                .where(),
            "q");
  std::vector<float> bias(3);
  EXPECT_EQ(AttendQueries(*cache, 0, kHeads, q, 1, 4, 1, bias, out).where(), "bias");
  EXPECT_EQ(AttendQueries(*cache, 0, {3, 2, 16}, q, 1, 4, 1, {}, out).where(), "heads");
}

}  // namespace
}  // namespace seedance::kv
