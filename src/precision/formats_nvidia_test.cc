// The scalar reference and the AVX2 kernels against NVIDIA's own host
// conversion functions (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h; headers only,
// no GPU needed): every code decoded, every boundary value and 10^7 random
// floats per format and saturation mode encoded, bit for bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "seedance/precision/convert.h"
#include "seedance/precision/formats.h"

namespace seedance::precision {
namespace {

uint32_t Nvidia(Format f, float x, bool saturate) {
  switch (f) {
    case Format::kFp16: {
      // cuda_fp16.h has no saturating conversion: clamp first, as saturation means.
      float y = x;
      if (saturate && !std::isnan(x)) y = std::clamp(x, -65504.0f, 65504.0f);
      return __half_raw(__float2half_rn(y)).x;
    }
    case Format::kBf16: {
      float y = x;
      const float max = std::bit_cast<float>(0x7F7F0000u);
      if (saturate && !std::isnan(x)) y = std::clamp(x, -max, max);
      return __nv_bfloat16_raw(__float2bfloat16_rn(y)).x;
    }
    case Format::kE4M3:
    case Format::kE5M2:
      return __nv_cvt_float_to_fp8(x, saturate ? __NV_SATFINITE : __NV_NOSAT,
                                   f == Format::kE4M3 ? __NV_E4M3 : __NV_E5M2);
    case Format::kFp32:
      break;
  }
  return 0;
}

float NvidiaDecode(Format f, uint32_t code) {
  switch (f) {
    case Format::kFp16: {
      __half_raw h;
      h.x = static_cast<unsigned short>(code);
      return __half2float(__half(h));
    }
    case Format::kBf16: {
      __nv_bfloat16_raw b;
      b.x = static_cast<unsigned short>(code);
      return __bfloat162float(__nv_bfloat16(b));
    }
    case Format::kE4M3:
    case Format::kE5M2: {
      const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(code),
                                                   f == Format::kE4M3 ? __NV_E4M3 : __NV_E5M2);
      return __half2float(__half(h));
    }
    case Format::kFp32:
      break;
  }
  return 0;
}

bool SameValue(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

TEST(FormatsNvidia, DecodeEveryCode) {
  for (Format f : kNarrowFormats) {
    const uint32_t count = 1u << Info(f).bits;
    for (uint32_t c = 0; c < count; ++c) {
      ASSERT_TRUE(SameValue(Decode(f, c), NvidiaDecode(f, c))) << Info(f).name << " code " << c;
    }
  }
}

// Boundary values: each code's value, the midpoints between neighbouring
// codes and the floats just either side of them, zeros, infinities, NaNs,
// FP32 subnormals and the extremes of FP32.
std::vector<float> BoundaryValues(Format f) {
  std::vector<float> xs;
  const uint32_t half = 1u << (Info(f).bits - 1);
  for (uint32_t c = 0; c + 1 < half; ++c) {
    const float lo = Decode(f, c), hi = Decode(f, c + 1);
    if (std::isnan(lo) || std::isnan(hi)) continue;
    const float mid = std::isinf(hi) ? lo + (lo - Decode(f, c - 1)) / 2 : (lo + hi) / 2;
    for (float v : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY),
                    std::nextafter(lo, INFINITY)}) {
      xs.push_back(v);
      xs.push_back(-v);
    }
  }
  const float kInf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, kInf, std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(), 1e-40f, 3e38f}) {
    xs.push_back(v);
    xs.push_back(-v);
  }
  for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0xFFC00000u, 0xFFFFFFFFu}) {
    xs.push_back(std::bit_cast<float>(nan));
  }
  return xs;
}

void ExpectAgree(Format f, const std::vector<float>& xs, const char* what) {
  std::vector<uint8_t> simd(xs.size() * CodeBytes(f));
  for (bool sat : {false, true}) {
    ASSERT_TRUE(ConvertFromFloat(f, xs, simd.data(), sat).ok());
    for (size_t i = 0; i < xs.size(); ++i) {
      const uint32_t want = Nvidia(f, xs[i], sat);
      ASSERT_EQ(Encode(f, xs[i], sat), want)
          << Info(f).name << " " << what << " x=" << xs[i] << " (bits 0x" << std::hex
          << std::bit_cast<uint32_t>(xs[i]) << ") saturate=" << sat;
      const uint32_t bulk =
          CodeBytes(f) == 2 ? reinterpret_cast<uint16_t*>(simd.data())[i] : simd[i];
      ASSERT_EQ(bulk, want) << Info(f).name << " " << what << " bulk kernel x=" << xs[i];
    }
  }
}

TEST(FormatsNvidia, EncodeBoundaryValues) {
  for (Format f : kNarrowFormats) ExpectAgree(f, BoundaryValues(f), "boundary");
}

// 10^7 random floats per format: half uniform over all 2^32 bit patterns,
// half log-uniform over the format's range (where the interesting codes are).
TEST(FormatsNvidia, EncodeRandomFloats) {
  constexpr size_t kCount = 10'000'000;
  for (Format f : kNarrowFormats) {
    std::mt19937 rng(static_cast<unsigned>(f) + 11);
    std::uniform_int_distribution<uint32_t> any;
    const float max = Decode(f, Info(f).max_finite_code);
    const float lo = std::log2(Decode(f, 1)) - 3, hi = std::log2(max) + 1;
    std::uniform_real_distribution<float> e(lo, hi);
    std::vector<float> xs(kCount);
    for (size_t i = 0; i < kCount; ++i) {
      if (i % 2) {
        xs[i] = std::bit_cast<float>(any(rng));
      } else {
        const float v = std::exp2(e(rng));
        xs[i] = (any(rng) & 1) ? -v : v;
      }
    }
    ExpectAgree(f, xs, "random");
  }
}

}  // namespace
}  // namespace seedance::precision
