// Drift scores against distributions whose answers are known in closed form.
#include "seedance/precision/drift.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace seedance::precision {
namespace {

TEST(Drift, IdenticalHistogramsKeep) {
  const std::vector<double> h = {1, 5, 10, 5, 1}, c = {-2, -1, 0, 1, 2};
  auto r = MeasureDrift(h, h, c);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->kl, 0);
  EXPECT_DOUBLE_EQ(r->score, 0);
  EXPECT_EQ(r->action, DriftAction::kKeep);
}

TEST(Drift, TwoPointDistributionsInClosedForm) {
  // Reference Bernoulli(0.5) on {-1, 1}, current Bernoulli(0.1):
  // KL = 0.9 ln(0.9/0.5) + 0.1 ln(0.1/0.5); excess kurtosis of a two-point
  // distribution with masses p, q is (1 - 6pq) / (pq): -2 and 46/9.
  const std::vector<double> ref = {50, 50}, cur = {90, 10}, x = {-1, 1};
  auto r = MeasureDrift(ref, cur, x);
  ASSERT_TRUE(r.ok());
  const double kl = 0.9 * std::log(0.9 / 0.5) + 0.1 * std::log(0.1 / 0.5);
  EXPECT_NEAR(r->kl, kl, 1e-5);
  EXPECT_NEAR(r->kurtosis_reference, -2.0, 1e-12);
  EXPECT_NEAR(r->kurtosis_current, 46.0 / 9.0, 1e-9);
  EXPECT_NEAR(r->score, 0.7 * kl + 0.3 * (46.0 / 9.0 + 2.0), 1e-5);
  EXPECT_EQ(r->action, DriftAction::kRecalibrate);
}

Histogram Sample(std::function<float(std::mt19937&)> draw, unsigned seed) {
  auto h = Histogram::Create(-8, 8, 256);
  std::mt19937 rng(seed);
  std::vector<float> xs(2'000'000);
  for (auto& x : xs) x = draw(rng);
  h->Add(xs);
  return *h;
}

TEST(Drift, GaussiansOfDifferentWidths) {
  std::normal_distribution<float> n1(0, 1), n11(0, 1.1f), n16(0, 1.6f);
  const Histogram ref = Sample([&](std::mt19937& g) { return n1(g); }, 1);
  // KL(N(0, s) || N(0, 1)) = -ln s + s^2 / 2 - 1/2.
  auto kl = [](double s) { return -std::log(s) + s * s / 2 - 0.5; };
  auto small = MeasureDrift(ref, Sample([&](std::mt19937& g) { return n11(g); }, 2));
  ASSERT_TRUE(small.ok());
  EXPECT_NEAR(small->kl, kl(1.1), 0.003);
  EXPECT_NEAR(small->kurtosis_current, 0, 0.05);
  EXPECT_EQ(small->action, DriftAction::kKeep);
  auto wide = MeasureDrift(ref, Sample([&](std::mt19937& g) { return n16(g); }, 3));
  ASSERT_TRUE(wide.ok());
  // Wider: the reference's tail bins hold few or no samples, where eps decides.
  EXPECT_NEAR(wide->kl, kl(1.6), 0.03);
  EXPECT_EQ(wide->action, DriftAction::kAdjustScale);  // 0.7 * 0.31 = 0.217
}

TEST(Drift, HeavierTailsRecalibrate) {
  // Laplace with the same variance: excess kurtosis 3 instead of 0.
  std::normal_distribution<float> n(0, 1);
  std::exponential_distribution<float> e(std::sqrt(2.0f));
  std::bernoulli_distribution coin(0.5);
  const Histogram ref = Sample([&](std::mt19937& g) { return n(g); }, 4);
  const Histogram lap = Sample([&](std::mt19937& g) { return coin(g) ? e(g) : -e(g); }, 5);
  auto r = MeasureDrift(ref, lap);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->kurtosis_reference, 0, 0.05);
  EXPECT_NEAR(r->kurtosis_current, 3, 0.15);
  EXPECT_EQ(r->action, DriftAction::kRecalibrate);
}

TEST(Drift, BadInput) {
  const std::vector<double> a = {1, 2}, b = {1, 2, 3}, x = {0, 1};
  EXPECT_FALSE(MeasureDrift(a, b, x).ok());
  const std::vector<double> neg = {1, -1};
  EXPECT_EQ(MeasureDrift(a, neg, x).status().where(), "bin 1");
  EXPECT_FALSE(Histogram::Create(1, 1).ok());
  auto h1 = Histogram::Create(0, 1, 4), h2 = Histogram::Create(0, 2, 4);
  EXPECT_FALSE(MeasureDrift(*h1, *h2).ok());
}

}  // namespace
}  // namespace seedance::precision
