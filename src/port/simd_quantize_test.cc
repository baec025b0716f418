// The AVX2 quantizer kernels against plain scalar loops, on odd lengths and
// with NaN and infinities mixed in.
#include "seedance/port/simd_quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "seedance/port/simd_convert.h"

namespace seedance::port {
namespace {

std::vector<float> Data(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, 3);
  std::vector<float> x(n);
  for (auto& v : x) v = g(rng);
  if (n > 10) {
    x[3] = NAN;
    x[7] = -INFINITY;
    x[n - 1] = -0.0f;
  }
  return x;
}

class SimdQuantize : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CpuHasAvx2F16c()) GTEST_SKIP() << "no AVX2 on this CPU";
  }
};

TEST_F(SimdQuantize, AbsMaxAndAbsSum) {
  for (size_t n : {0u, 5u, 16u, 1001u, 5000u}) {
    const auto x = Data(n, static_cast<unsigned>(n));
    float m = 0;
    double s = 0;
    for (float v : x) {
      if (std::fabs(v) > m) m = std::fabs(v);
      if (std::isfinite(v)) s += std::fabs(v);
    }
    EXPECT_EQ(Avx2AbsMax(x.data(), n), m) << n;
    EXPECT_NEAR(Avx2AbsSum(x.data(), n), s, 1e-5 * (1 + s)) << n;
  }
}

TEST_F(SimdQuantize, QuantizeAndPackMatchScalar) {
  for (size_t n : {1u, 31u, 64u, 257u, 4099u}) {
    const auto x = Data(n, 7);
    for (int levels : {127, 7}) {
      const float inv = levels / 9.0f;
      std::vector<int8_t> q(n);
      Avx2QuantizeInt8(x.data(), n, inv, levels, q.data());
      for (size_t i = 0; i < n; ++i) {
        const float r = std::nearbyint(x[i] * inv);
        const int8_t want =
            std::isnan(r) ? 0 : static_cast<int8_t>(std::fmin(std::fmax(r, -levels), levels));
        ASSERT_EQ(q[i], want) << "n=" << n << " i=" << i;
      }
      if (levels == 7) {
        std::vector<uint8_t> packed((n + 1) / 2);
        Avx2PackInt4(q.data(), n, packed.data());
        for (size_t i = 0; i < n; ++i) {
          const int v = (packed[i / 2] >> (i % 2 ? 4 : 0)) & 0x0F;
          ASSERT_EQ(v >= 8 ? v - 16 : v, q[i]) << i;
        }
        std::vector<float> out(n, 1.0f);
        Avx2DequantAddInt4(packed.data(), n, 0.5f, out.data());
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 1.0f + 0.5f * q[i]) << i;
      } else {
        std::vector<float> out(n, 1.0f);
        Avx2DequantAddInt8(q.data(), n, 0.25f, out.data());
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 1.0f + 0.25f * q[i]) << i;
      }
    }
  }
}

TEST_F(SimdQuantize, SignBitsRoundTrip) {
  for (size_t n : {1u, 8u, 13u, 1000u}) {
    const auto x = Data(n, 9);
    std::vector<uint8_t> bits((n + 7) / 8, 0xAA);
    Avx2SignBits(x.data(), n, bits.data());
    std::vector<float> out(n, 0.0f);
    Avx2SignAdd(bits.data(), n, 2.0f, out.data());
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ((bits[i / 8] >> (i % 8)) & 1, std::signbit(x[i]) ? 1 : 0) << i;
      ASSERT_EQ(out[i], std::signbit(x[i]) ? -2.0f : 2.0f) << i;
    }
  }
}

}  // namespace
}  // namespace seedance::port
