#include "seedance/precision/grad_pass.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace seedance::precision {
namespace {

TEST(GradPass, UnscalesAndMatchesADoublePrecisionReference) {
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0, 1000);
  std::vector<std::vector<float>> tensors = {std::vector<float>(1001), std::vector<float>(3),
                                             std::vector<float>(0), std::vector<float>(4096)};
  for (auto& t : tensors) {
    for (auto& x : t) x = g(rng);
  }
  const auto original = tensors;
  std::vector<GradView> views;
  for (auto& t : tensors) views.push_back({t.data(), t.size()});
  const float inv = 1.0f / 1024.0f;
  const GradPassResult r = UnscaleAndMeasure(views, inv);
  EXPECT_FALSE(r.found_non_finite);
  double total = 0;
  for (size_t t = 0; t < tensors.size(); ++t) {
    double sumsq = 0;
    for (size_t i = 0; i < tensors[t].size(); ++i) {
      ASSERT_EQ(tensors[t][i], original[t][i] * inv);
      sumsq += double(original[t][i]) * original[t][i] / (1024.0 * 1024.0);
    }
    EXPECT_NEAR(r.norms[t], std::sqrt(sumsq), 1e-9 * std::sqrt(sumsq) + 1e-300);
    total += sumsq;
  }
  EXPECT_NEAR(r.global_norm, std::sqrt(total), 1e-9 * std::sqrt(total));
}

TEST(GradPass, FindsEveryKindOfNonFiniteValue) {
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    std::vector<float> a(100, 1.0f), b(37, 2.0f), c(5, 0.5f);
    b[36] = bad;  // in the scalar tail
    std::vector<GradView> v = {{a.data(), a.size()}, {b.data(), b.size()}, {c.data(), c.size()}};
    const GradPassResult r = UnscaleAndMeasure(v, 0.5f);
    EXPECT_TRUE(r.found_non_finite);
    ASSERT_EQ(r.non_finite.size(), 1u);
    EXPECT_EQ(r.non_finite[0], 1u);
    EXPECT_DOUBLE_EQ(r.norms[0], std::sqrt(100 * 0.25));
    EXPECT_FALSE(std::isfinite(r.global_norm));
  }
  // Large finite values square beyond float range but not double's: no false alarm.
  std::vector<float> big(8, 3e38f);
  std::vector<GradView> v = {{big.data(), big.size()}};
  EXPECT_FALSE(UnscaleAndMeasure(v, 1.0f).found_non_finite);
}

}  // namespace
}  // namespace seedance::precision
