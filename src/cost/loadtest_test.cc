#include "seedance/cost/loadtest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace seedance::cost {
namespace {

// Expected values from SciPy and NumPy on x = 1..n:
//   np.percentile(x, 100 q); l = max(1, binom.ppf(0.025, n, q)); u = min(n, binom.ppf(0.975, n, q)
//   + 1)
TEST(QuantileWithCi, MatchesNumPyAndSciPyBinomialRanks) {
  const std::tuple<int, double, double, double, double> cases[] = {
      {100, 0.99, 99.01, 97, 100}, {1000, 0.5, 500.5, 469, 532}, {200, 0.9, 180.1, 171, 189}};
  for (const auto& [n, q, estimate, low, high] : cases) {
    std::vector<double> x(static_cast<size_t>(n));
    std::iota(x.begin(), x.end(), 1.0);
    std::shuffle(x.begin(), x.end(), std::mt19937(1));
    const ConfidenceInterval ci = QuantileWithCi(x, q);
    EXPECT_NEAR(ci.estimate, estimate, 1e-9) << n << " " << q;
    EXPECT_EQ(ci.low, low) << n << " " << q;
    EXPECT_EQ(ci.high, high) << n << " " << q;
  }
  EXPECT_EQ(QuantileWithCi({7}, 0.99).estimate, 7);
}

TEST(MserTruncation, DropsATransientAndKeepsAStationarySeries) {
  std::mt19937 rng(4);
  std::normal_distribution<double> noise(10, 1);
  std::vector<double> stationary(1000), transient(1000);
  for (double& v : stationary) v = noise(rng);
  for (size_t i = 0; i < transient.size(); ++i) {
    transient[i] = noise(rng) + (i < 200 ? 40.0 * (200 - i) / 200 : 0);  // a warm-up decaying
  }
  EXPECT_LE(MserTruncation(stationary), 100u);
  const size_t d = MserTruncation(transient);
  EXPECT_GE(d, 150u);
  EXPECT_LE(d, 300u);
  EXPECT_EQ(d % 5, 0u);
  EXPECT_EQ(MserTruncation(std::vector<double>{1, 2, 3}), 0u);
}

TEST(SummarizeLevel, ThroughputLatencyErrorsAndCost) {
  // 200 requests of 10 ms back to back from one client, every tenth failing.
  std::vector<RequestSample> samples;
  for (int i = 0; i < 200; ++i) {
    RequestSample s;
    s.start_ns = int64_t{i} * 10'000'000;
    s.end_ns = s.start_ns + 10'000'000;
    s.ok = i % 10 != 9;
    s.first_token_ns = s.start_ns + 2'000'000;
    s.tokens = 5;
    samples.push_back(s);
  }
  LoadTestOptions o;
  o.kind = LoadKind::kCompletions;
  o.usd_per_hour = 3.6;
  const base::Report r = SummarizeLevel(samples, 1, o);
  EXPECT_EQ(r["requests"], 200);
  EXPECT_EQ(r["steady_from_s"], 0.0);
  EXPECT_EQ(r["errors"], 20);
  EXPECT_NEAR(r["error_rate"].get<double>(), 0.1, 1e-12);
  EXPECT_NEAR(r["throughput_rps"].get<double>(), 90.0, 1e-9);  // 180 good in 2 s
  EXPECT_NEAR(r["latency_ms"]["p50"]["estimate"].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(r["ttft_ms"]["p50"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(r["tpot_ms"]["p50"].get<double>(), 2.0, 1e-9);  // 8 ms over 4 tokens
  EXPECT_NEAR(r["tokens_per_s"].get<double>(), 450.0, 1e-9);
  EXPECT_NEAR(r["usd_per_1k_requests"].get<double>(), 3.6 / 3600 / 90 * 1000, 1e-12);
  EXPECT_EQ(r["p99_drift"], 0.0);
}

TEST(RunLoadTest, RefusesBadOptionsAndADeadEndpoint) {
  LoadTestOptions o;
  o.url = "ftp://x";
  EXPECT_EQ(RunLoadTest(o).status().where(), "url");
  o.url = "http://127.0.0.1:1/";  // nothing listens on port 1
  o.warmup_s = 0;
  o.level_s = 0.1;
  const auto r = RunLoadTest(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), base::StatusCode::kUnavailable);
  o.concurrency = {0};
  EXPECT_EQ(RunLoadTest(o).status().where(), "concurrency");
}

// The exponential gaps of a Poisson process: the Kolmogorov-Smirnov distance of 20,000 gaps from
// the exponential CDF 1 - exp(-rate t) stays under the 0.1 % critical value 1.95 / sqrt(n).
TEST(PoissonArrivals, GapsAreExponentialAtTheRateAndSeeded) {
  const double rate = 200, seconds = 100;
  const std::vector<int64_t> a = PoissonArrivals(rate, seconds, 9);
  EXPECT_EQ(a, PoissonArrivals(rate, seconds, 9));
  EXPECT_NE(a, PoissonArrivals(rate, seconds, 10));
  const double n_expected = rate * seconds;
  EXPECT_LT(std::fabs(static_cast<double>(a.size()) - n_expected), 4 * std::sqrt(n_expected));
  std::vector<double> gaps;
  for (size_t i = 1; i < a.size(); ++i) gaps.push_back(static_cast<double>(a[i] - a[i - 1]) / 1e9);
  std::sort(gaps.begin(), gaps.end());
  double d = 0;
  const auto n = static_cast<double>(gaps.size());
  for (size_t i = 0; i < gaps.size(); ++i) {
    const double cdf = 1 - std::exp(-rate * gaps[i]);
    d = std::max({d, cdf - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - cdf});
  }
  EXPECT_LT(d, 1.95 / std::sqrt(n));
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_LT(a.back(), static_cast<int64_t>(seconds * 1e9));
  EXPECT_TRUE(PoissonArrivals(0, 1, 1).empty());
}

}  // namespace
}  // namespace seedance::cost
