#include "seedance/kv/adaptive.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "seedance/kv/cache.h"

namespace seedance::kv {
namespace {

TEST(Adaptive, LaplaceFitRecoversTheScale) {
  std::mt19937 rng(1);
  std::exponential_distribution<float> e(0.5f);  // mean 2: a Laplace with b = 2 around 3
  std::bernoulli_distribution coin(0.5);
  std::vector<float> x(200000);
  for (auto& v : x) v = 3.0f + (coin(rng) ? e(rng) : -e(rng));
  EXPECT_NEAR(LaplaceScale(x), 2.0, 0.02);
  EXPECT_EQ(LaplaceScale(std::vector<float>(10, 4.0f)), 0.0);
}

TEST(Adaptive, NormalisedEntropyKnownValues) {
  EXPECT_DOUBLE_EQ(NormalisedEntropy(std::vector<double>{2, 2, 2, 2}), 1.0);
  EXPECT_DOUBLE_EQ(NormalisedEntropy(std::vector<double>{0, 5, 0, 0}), 0.0);
  // p = (1/4, 1/4, 1/2): H = 1.5 bits, over log2(3).
  EXPECT_NEAR(NormalisedEntropy(std::vector<double>{1, 1, 2}), 1.5 / std::log2(3.0), 1e-12);
}

TEST(Adaptive, RuleOfTheNote) {
  AdaptiveRule r;
  auto d = DecideBits(r, 98304, 127892, 0.912);  // an example decision log line
  EXPECT_EQ(d.target_bw, 4);
  EXPECT_EQ(d.reason, "high_entropy_long_context");
  EXPECT_EQ(DecideBits(r, 10, 70000, 0.5).reason, "low_entropy");
  EXPECT_EQ(DecideBits(r, 10, 70000, 0.5).target_bw, 6);
  EXPECT_EQ(DecideBits(r, 10, 65536, 0.99).reason, "short_context");  // "exceeds 64K": strictly
  const auto j = DecisionToReport(d);
  EXPECT_EQ(j["seq_pos"], 98304);
  EXPECT_EQ(j["kv_len"], 127892);
  EXPECT_EQ(j["target_bw"], 4);
}

TEST(Adaptive, CacheLogsAndAppliesDecisions) {
  const CacheShape shape{1, 32, 16, 64};
  QuantConfig c;
  c.width = KvWidth::kAdaptive;
  c.group = 16;
  c.window = 0;
  c.rule.long_context = 20;  // small enough for a 64-token test
  auto cache = NewQuantizedCache(shape, c);
  ASSERT_TRUE(cache.ok());
  std::mt19937 rng(2);
  std::normal_distribution<float> g(0, 1);
  for (int t = 0; t < 64; ++t) {
    std::vector<float> k(32), v(32);
    // Group 0: one dominant key (low entropy); later groups: similar norms (high entropy).
    for (int ch = 0; ch < 32; ++ch) {
      k[ch] = g(rng) * (t < 16 && t != 3 ? 0.01f : 1.0f);
      v[ch] = g(rng);
    }
    ASSERT_TRUE((*cache)->Append(0, t, k, v).ok());
  }
  const auto d = (*cache)->Decisions();
  ASSERT_EQ(d.size(), 4u);                  // one per key group of 16
  EXPECT_EQ(d[0].reason, "short_context");  // packed at kv_len 16 <= 20
  EXPECT_EQ(d[1].reason, "high_entropy_long_context");
  EXPECT_EQ(d[1].target_bw, 4);
  EXPECT_GT(d[1].entropy, 0.85);
  EXPECT_GT(d[1].laplace_b, 0.5);
  // Widths actually used: group 0 at 6 bits, the rest at 4 (keys), values follow.
  const double bpv = static_cast<double>((*cache)->PackedBits()) / (*cache)->PackedValues();
  EXPECT_GT(bpv, 4.0 + 2 * 64.0 / 16 / 16);
  EXPECT_LT(bpv, 6.0 + 4.0);
}

}  // namespace
}  // namespace seedance::kv
