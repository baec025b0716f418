#include "seedance/cost/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace seedance::cost {
namespace {

std::vector<double> RandomSample(std::mt19937_64& gen, int n, double shift, bool integers) {
  std::normal_distribution<double> normal(shift, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = integers ? std::round(normal(gen) * 2) : normal(gen);
  return v;
}

// U1 by its definition: pairs (x_i, y_j) with x_i > y_j, ties counting one half.
double PairCount(const std::vector<double>& x, const std::vector<double>& y) {
  double u = 0;
  for (double a : x) {
    for (double b : y) u += a > b ? 1.0 : a == b ? 0.5 : 0.0;
  }
  return u;
}

// The exact two-sided p-value by enumerating every way to split the ranks 1..m+n into a sample
// of m and one of n: P(max(U1, U2) >= max(u1, u2)) counted over all C(m+n, m) splits.
double BruteForceExactP(int m, int n, double u_observed) {
  const double top = static_cast<double>(m) * n;
  const double stat = std::max(u_observed, top - u_observed);
  int64_t hits = 0, total = 0;
  const int size = m + n;
  for (uint32_t mask = 0; mask < (1u << size); ++mask) {
    if (__builtin_popcount(mask) != m) continue;
    double rank_sum = 0;
    for (int r = 0; r < size; ++r) {
      if (mask & (1u << r)) rank_sum += r + 1;
    }
    const double u1 = rank_sum - m * (m + 1) / 2.0;
    ++total;
    if (u1 >= stat) ++hits;
  }
  return std::min(1.0, 2.0 * static_cast<double>(hits) / static_cast<double>(total));
}

TEST(MannWhitneyTest, UIsThePairCountWithHalfTies) {
  std::mt19937_64 gen(7);
  for (int trial = 0; trial < 50; ++trial) {
    const auto x = RandomSample(gen, 3 + trial % 11, 0.3, trial % 2 == 0);
    const auto y = RandomSample(gen, 2 + trial % 7, 0.0, trial % 2 == 0);
    auto r = MannWhitneyU(x, y);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_DOUBLE_EQ(r->u, PairCount(x, y));
    EXPECT_GE(r->p, 0.0);
    EXPECT_LE(r->p, 1.0);
  }
}

TEST(MannWhitneyTest, ExactPEqualsEnumerationOfEverySplit) {
  std::mt19937_64 gen(11);
  for (int m = 1; m <= 7; ++m) {
    for (int n = 1; n <= 8; ++n) {
      const auto x = RandomSample(gen, m, 0.5, false);
      const auto y = RandomSample(gen, n, 0.0, false);
      auto r = MannWhitneyU(x, y, {.method = MannWhitneyMethod::kExact});
      ASSERT_TRUE(r.ok());
      EXPECT_TRUE(r->exact);
      EXPECT_NEAR(r->p, BruteForceExactP(m, n, r->u), 1e-12) << m << "x" << n;
    }
  }
}

TEST(MannWhitneyTest, AutoPicksExactOnlyForSmallSamplesWithoutTies) {
  const std::vector<double> small = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> large = {1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5};
  EXPECT_TRUE(MannWhitneyU(small, large)->exact);  // min size 8
  const std::vector<double> nine = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  EXPECT_FALSE(MannWhitneyU(nine, large)->exact);  // both over 8
  const std::vector<double> tied = {1, 2, 3};
  EXPECT_FALSE(MannWhitneyU(tied, small)->exact);  // ties with `small`
}

TEST(MannWhitneyTest, AsymptoticMatchesScipy) {
  // scipy.stats.mannwhitneyu(x, y) (two-sided, continuity, method="asymptotic" by auto: ties)
  // gives statistic 11.0, pvalue 0.05378813035869443 for these samples.
  const std::vector<double> x = {1, 2, 2, 3, 4, 5, 5, 6};
  const std::vector<double> y = {3, 4, 5, 6, 6, 7, 8};
  auto r = MannWhitneyU(x, y);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->exact);
  EXPECT_DOUBLE_EQ(r->u, 11.0);
  EXPECT_NEAR(r->p, 0.05378813035869443, 1e-12);
  auto less = MannWhitneyU(x, y, {.alternative = Alternative::kLess});
  auto greater = MannWhitneyU(x, y, {.alternative = Alternative::kGreater});
  EXPECT_NEAR(less->p, 0.026894065179347216, 1e-12);  // half the two-sided p: x is smaller
  EXPECT_GT(greater->p, 0.5);
}

TEST(MannWhitneyTest, DegenerateInputs) {
  const std::vector<double> same = {3, 3, 3};
  auto r = MannWhitneyU(same, same);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->p, 1.0);
  const std::vector<double> empty;
  EXPECT_EQ(MannWhitneyU(empty, same).status().where(), "x");
  const std::vector<double> nan = {1, NAN};
  EXPECT_EQ(MannWhitneyU(same, nan).status().where(), "y[1]");
}

TEST(AnovaTest, HandComputedTable) {
  // Means 2, 5, 8 about a grand mean of 5: SSB = 3 (9 + 0 + 9) = 54 on 2 df; SSW = 2 + 2 + 2 = 6
  // on 6 df; F = 27 / 1 = 27; P(F(2, 6) > 27) = (1 + 2 * 27 / 6)^-3 = 0.001.
  const std::vector<std::vector<double>> g = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  auto r = OneWayAnova(g);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->f, 27.0, 1e-12);
  EXPECT_EQ(r->df_between, 2);
  EXPECT_EQ(r->df_within, 6);
  EXPECT_NEAR(r->p, 0.001, 1e-14);
}

TEST(AnovaTest, WelchMatchesScipy) {
  // scipy.stats.f_oneway(*g, equal_var=False) -> F 41.55415043166935,
  // p 0.0002583981851992438 (scipy 1.17).
  const std::vector<std::vector<double>> g = {{1, 2, 3, 4}, {2, 4, 6, 8, 10}, {9, 9.5, 10, 11}};
  auto r = OneWayAnova(g, /*equal_var=*/false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->f, 41.55415043166935, 1e-9 * 41.6);
  EXPECT_NEAR(r->p, 0.0002583981851992438, 1e-9 * 0.00026);
}

TEST(AnovaTest, DegenerateInputs) {
  const std::vector<std::vector<double>> one = {{1, 2}};
  EXPECT_EQ(OneWayAnova(one).status().where(), "groups");
  const std::vector<std::vector<double>> singles = {{1}, {2}};
  EXPECT_FALSE(OneWayAnova(singles).ok());
  const std::vector<std::vector<double>> equal = {{2, 2}, {2, 2, 2}};
  EXPECT_FALSE(OneWayAnova(equal).ok());
  const std::vector<std::vector<double>> constant = {{1, 1}, {2, 2, 2}};
  auto r = OneWayAnova(constant);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->f, INFINITY);
  EXPECT_EQ(r->p, 0.0);
  EXPECT_EQ(OneWayAnova(constant, false).status().where(), "groups[0]");
  const std::vector<std::vector<double>> empty = {{1, 2}, {}};
  EXPECT_EQ(OneWayAnova(empty).status().where(), "groups[1]");
}

TEST(BootstrapTest, SameSeedSameIntervalAndTheEstimateInside) {
  std::mt19937_64 gen(3);
  const auto x = RandomSample(gen, 40, 5.0, false);
  for (auto stat : {BootstrapStatistic::kMean, BootstrapStatistic::kMedian}) {
    for (auto method : {BootstrapMethod::kPercentile, BootstrapMethod::kBca}) {
      BootstrapOptions o{.statistic = stat, .method = method, .resamples = 2000, .seed = 9};
      auto a = BootstrapCi(x, o);
      auto b = BootstrapCi(x, o);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      EXPECT_EQ(a->low, b->low);
      EXPECT_EQ(a->high, b->high);
      EXPECT_LT(a->low, a->estimate);
      EXPECT_GT(a->high, a->estimate);
    }
  }
}

TEST(BootstrapTest, PercentileIntervalOfTheMeanIsNearTheNormalTheoryInterval) {
  // For n = 400 normal values the bootstrap distribution of the mean is close to
  // N(mean, s^2 / n): the interval is mean +- 1.96 s / sqrt(n) within a few percent of its width.
  std::mt19937_64 gen(5);
  const auto x = RandomSample(gen, 400, 0.0, false);
  double mean = Mean(x), ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  const double half = 1.959963984540054 * std::sqrt(ss / 399.0 / 400.0);
  auto ci = BootstrapCi(x, {.method = BootstrapMethod::kPercentile, .resamples = 20000});
  ASSERT_TRUE(ci.ok());
  EXPECT_NEAR(ci->low, mean - half, 0.06 * half);
  EXPECT_NEAR(ci->high, mean + half, 0.06 * half);
}

TEST(BootstrapTest, RatioOfMediansAndDegenerateInputs) {
  const std::vector<double> a = {10, 11, 12, 13, 14, 15};
  const std::vector<double> b = {5, 5.5, 6, 6.5, 7, 7.5};
  auto ci = BootstrapRatioCi(a, b, {.statistic = BootstrapStatistic::kMedian, .resamples = 3000});
  ASSERT_TRUE(ci.ok()) << ci.status().ToString();
  EXPECT_DOUBLE_EQ(ci->estimate, 12.5 / 6.25);
  EXPECT_LE(ci->low, 2.0);
  EXPECT_GE(ci->high, 2.0);

  const std::vector<double> constant = {4, 4, 4, 4};
  auto flat = BootstrapCi(constant, {.method = BootstrapMethod::kPercentile});
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->low, 4);
  EXPECT_EQ(flat->high, 4);
  // BCa: z0 = 0 (every resample ties with the estimate, ties count half) and the jackknife has no
  // spread, so the documented fallback a = 0 gives the percentile interval.
  auto flat_bca = BootstrapCi(constant, {.method = BootstrapMethod::kBca});
  ASSERT_TRUE(flat_bca.ok());
  EXPECT_EQ(flat_bca->low, 4);
  EXPECT_EQ(flat_bca->high, 4);
  const std::vector<double> one = {1};
  EXPECT_EQ(BootstrapCi(one).status().where(), "sample");
  EXPECT_EQ(BootstrapCi(a, {.confidence = 1.0}).status().where(), "confidence");
  EXPECT_EQ(BootstrapCi(a, {.resamples = 0}).status().where(), "resamples");
  const std::vector<double> zeros = {0, 0, 0};
  EXPECT_EQ(BootstrapRatioCi(a, zeros).status().where(), "y");
}

// The sample standard deviation against the definition worked by hand: 2, 4, 4, 4, 5, 5, 7, 9
// has mean 5 and squared deviations summing to 32, so sqrt(32 / 7).
TEST(SmallHelpersTest, SampleStdDevUsesNMinusOne) {
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(SampleStdDev(v), std::sqrt(32.0 / 7));
  EXPECT_DOUBLE_EQ(SampleStdDev(std::vector<double>{3, 3, 3}), 0);
  EXPECT_TRUE(std::isnan(SampleStdDev(std::vector<double>{1})));
}

}  // namespace
}  // namespace seedance::cost
