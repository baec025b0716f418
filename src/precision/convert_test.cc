// Bulk conversions: every kernel gives the scalar reference's codes; INT8
// against a brute-force reference.
#include "seedance/precision/convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "seedance/port/cuda_convert.h"
#include "seedance/port/cuda_info.h"
#include "seedance/port/simd_convert.h"

namespace seedance::precision {
namespace {

std::vector<float> RandomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_real_distribution<float> e(-30, 20);
  std::vector<float> xs(n);
  for (size_t i = 0; i < n; ++i) {
    xs[i] = i % 3 == 0 ? std::bit_cast<float>(bits(rng)) : std::exp2(e(rng)) * (i % 2 ? -1 : 1);
  }
  return xs;
}

TEST(Convert, KernelsAgreeWithScalarReference) {
  if (!port::CpuHasAvx2F16c()) GTEST_SKIP() << "no AVX2/F16C on this CPU";
  // Odd length: the vector loop and the scalar tail both run.
  const auto xs = RandomFloats(100'003, 3);
  for (Format f : kNarrowFormats) {
    for (bool sat : {false, true}) {
      std::vector<uint8_t> a(xs.size() * CodeBytes(f)), b(a.size());
      ASSERT_TRUE(ConvertFromFloat(f, xs, a.data(), sat, port::SimdKernel::kScalar).ok());
      ASSERT_TRUE(ConvertFromFloat(f, xs, b.data(), sat, port::SimdKernel::kAvx2).ok());
      ASSERT_EQ(a, b) << Info(f).name << " saturate=" << sat;
      std::vector<float> da(xs.size()), db(xs.size());
      ASSERT_TRUE(ConvertToFloat(f, a.data(), da, port::SimdKernel::kScalar).ok());
      ASSERT_TRUE(ConvertToFloat(f, a.data(), db, port::SimdKernel::kAvx2).ok());
      for (size_t i = 0; i < xs.size(); ++i) {
        ASSERT_TRUE((std::isnan(da[i]) && std::isnan(db[i])) || da[i] == db[i]) << i;
      }
    }
  }
}

TEST(Convert, Fp32IsACopy) {
  const auto xs = RandomFloats(17, 1);
  std::vector<float> out(xs.size());
  ASSERT_TRUE(ConvertFromFloat(Format::kFp32, xs, out.data(), false).ok());
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(xs[i]));
  }
}

// The CUDA kernels use NVIDIA's intrinsics; they must give the host codes.
TEST(Convert, CudaKernelsAgreeWithScalarReference) {
  if (port::QueryCuda().devices.empty()) GTEST_SKIP() << "no CUDA device";
  const auto xs = RandomFloats(1'000'003, 5);
  for (const Format f : kNarrowFormats) {
    for (bool sat : {false, true}) {
      std::vector<uint8_t> host(xs.size() * CodeBytes(f)), dev(host.size());
      ASSERT_TRUE(ConvertFromFloat(f, xs, host.data(), sat, port::SimdKernel::kScalar).ok());
      ASSERT_TRUE(port::CudaFloatToCodesHost(xs.data(), dev.data(), xs.size(), f, sat).ok());
      ASSERT_EQ(host, dev) << Info(f).name << " saturate=" << sat;
    }
  }
}

// Brute force: the int8 code nearest to x / scale (ties to even), clamped.
int BruteInt8(double x, double scale) {
  int best = 0;
  double best_err = INFINITY;
  for (int q = -128; q <= 127; ++q) {
    const double err = std::fabs(q - x / scale);
    if (err < best_err - 1e-9 || (std::fabs(err - best_err) <= 1e-9 && q % 2 == 0)) {
      best = q;
      best_err = err;
    }
  }
  return best;
}

TEST(Convert, Int8PerTensorAndPerChannel) {
  std::mt19937 rng(9);
  std::normal_distribution<float> g(0, 1);
  const size_t channels = 8, per = 500;
  std::vector<float> xs(channels * per);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = g(rng) * float(1 + i / per);  // channel c: sigma c+1
  for (size_t ch : {size_t{1}, channels}) {
    auto q = QuantizeInt8(xs, ch);
    ASSERT_TRUE(q.ok());
    ASSERT_EQ(q->scales.size(), ch);
    const size_t group = xs.size() / ch;
    for (size_t c = 0; c < ch; ++c) {
      float amax = 0;
      for (size_t i = c * group; i < (c + 1) * group; ++i) amax = std::max(amax, std::fabs(xs[i]));
      EXPECT_FLOAT_EQ(q->scales[c], amax / 127);
    }
    const auto back = DequantizeInt8(*q);
    for (size_t i = 0; i < xs.size(); ++i) {
      const float scale = q->scales[i / group];
      // The kernel multiplies by the float reciprocal; the reference divides
      // exactly, so the two may differ only where x/scale sits on a tie.
      EXPECT_LE(std::abs(q->values[i] - BruteInt8(xs[i], scale)), 1) << i;
      EXPECT_LE(std::fabs(back[i] - xs[i]), scale * 0.5f * 1.0001f) << i;
    }
  }
  // The largest magnitude lands on +-127 exactly.
  std::vector<float> ramp = {-3.0f, -1.5f, 0.0f, 1.0f, 3.0f};
  auto q = QuantizeInt8(ramp);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->values.front(), -127);
  EXPECT_EQ(q->values.back(), 127);
  EXPECT_EQ(q->values[2], 0);
}

TEST(Convert, Int8RejectsBadInput) {
  std::vector<float> xs = {1, 2, 3};
  EXPECT_FALSE(QuantizeInt8(xs, 2).ok());
  xs[1] = NAN;
  EXPECT_FALSE(QuantizeInt8(xs).ok());
  std::vector<float> zero = {0.0f};
  EXPECT_FALSE(QuantizeInt8WithScales(xs, zero).ok());
  auto z = QuantizeInt8(std::vector<float>{0, 0});
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->scales[0], 1.0f);
}

}  // namespace
}  // namespace seedance::precision
