// The AVX2 kernels of seedance::kv that are not the cache's (the cache's are compared with its
// scalar path in src/kv/cache_test.cc).
#include "seedance/port/simd_kv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

// The code sums against a double-precision reference on codes unpacked independently (8-bit codes
// are bytes; 4-bit codes two a byte, low nibble first), for lengths around the 8- and 16-code
// steps.
TEST(SimdKvTest, AccumulateCodesIsTheSumWithinRounding) {
  if (!CpuHasAvx2F16c()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100}) {
    std::vector<uint8_t> codes(static_cast<size_t>(n) + 16);
    for (uint8_t& c : codes) c = static_cast<uint8_t>(byte(rng));
    const float a = 0.37F, b = -1.25F;
    std::vector<float> start(static_cast<size_t>(n));
    for (float& x : start) x = static_cast<float>(byte(rng)) / 7;
    for (int bits : {8, 4}) {
      std::vector<float> out = start;
      if (bits == 8) {
        Avx2AccumulateCodes8(codes.data(), n, a, b, out.data());
      } else {
        Avx2AccumulateCodes4(codes.data(), n, a, b, out.data());
      }
      for (int j = 0; j < n; ++j) {
        const int code =
            bits == 8 ? codes[j] : (j % 2 == 0 ? codes[j / 2] & 15 : codes[j / 2] >> 4);
        const double want = start[j] + static_cast<double>(a) * code + b;
        EXPECT_NEAR(out[j], want, 1e-5 * (1 + std::fabs(want)))
            << bits << " bits, n " << n << ", " << j;
      }
    }
  }
}

}  // namespace
}  // namespace seedance::port
