// The AVX2 kernels of seedance::kv that are not the cache's (the cache's are compared with its
// scalar path in src/kv/cache_test.cc).
#include "seedance/port/simd_kv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace seedance::port {
namespace {

// The engine's dot product against a float64 sum, for lengths around the unrolled loop's edges:
// the error of an FP32 sum of n products is at most about n eps sum |a_i b_i|.
TEST(SimdDotTest, Avx2DotIsTheSumWithinRounding) {
  if (!CpuHasAvx2F16c()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  for (int n : {0, 1, 7, 8, 9, 31, 32, 33, 64, 100, 576, 1536}) {
    std::vector<float> a(static_cast<size_t>(n)), b(a.size());
    for (float& x : a) x = normal(rng);
    for (float& x : b) x = normal(rng);
    double exact = 0, magnitude = 0;
    for (int i = 0; i < n; ++i) {
      exact += static_cast<double>(a[i]) * b[i];
      magnitude += std::fabs(static_cast<double>(a[i]) * b[i]);
    }
    const float got = Avx2DotF32(a.data(), b.data(), n);
    EXPECT_NEAR(got, exact, (n + 1) * 6e-8 * magnitude + 1e-30) << n;
  }
}

}  // namespace
}  // namespace seedance::port
