// The scalar reference against independent references that need nothing but
// the C++ library: a table of known codes, and a brute-force search for the
// nearest code (ties to even) over the whole code space.
#include "seedance/precision/formats.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace seedance::precision {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Formats, EachEncodingBelongsToOneNumericFormat) {
  // The storage size of the family is the encoding's: bits / 8 bytes.
  for (Format f : {Format::kFp32, Format::kFp16, Format::kBf16, Format::kE4M3, Format::kE5M2}) {
    EXPECT_EQ(base::NumericFormatBytes(FamilyOf(f)) * 8, Info(f).bits) << Info(f).name;
    EXPECT_TRUE(Info(f).name.starts_with(base::NumericFormatName(FamilyOf(f)))) << Info(f).name;
  }
}

TEST(Formats, KnownCodes) {
  EXPECT_EQ(E4M3ToFloat(0x7E), 448.0f);
  EXPECT_EQ(E4M3ToFloat(0x08), std::ldexp(1.0f, -6));  // smallest normal
  EXPECT_EQ(E4M3ToFloat(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_TRUE(std::isnan(E4M3ToFloat(0x7F)));
  EXPECT_TRUE(std::isnan(E4M3ToFloat(0xFF)));
  EXPECT_EQ(E4M3ToFloat(0x78), 256.0f);  // exponent 1111 is a normal binade in E4M3
  EXPECT_EQ(E5M2ToFloat(0x7B), 57344.0f);
  EXPECT_EQ(E5M2ToFloat(0x7C), kInf);
  EXPECT_EQ(E5M2ToFloat(0xFC), -kInf);
  EXPECT_TRUE(std::isnan(E5M2ToFloat(0x7D)));
  EXPECT_EQ(E5M2ToFloat(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(HalfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xC000), -2.0f);
  EXPECT_EQ(Bf16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(Bf16ToFloat(0x7F80), kInf);

  EXPECT_EQ(FloatToE4M3(448.0f), 0x7E);
  EXPECT_EQ(FloatToE4M3(464.0f), 0x7E);  // the tie goes to the even mantissa (448)
  EXPECT_EQ(FloatToE4M3(465.0f), 0x7F);  // past the tie: overflow, NaN
  EXPECT_EQ(FloatToE4M3(465.0f, true), 0x7E);
  EXPECT_EQ(FloatToE4M3(-1e9f), 0xFF);
  EXPECT_EQ(FloatToE4M3(-1e9f, true), 0xFE);
  EXPECT_EQ(FloatToE4M3(kInf, true), 0x7E);
  EXPECT_EQ(FloatToE5M2(kInf), 0x7C);
  EXPECT_EQ(FloatToE5M2(61440.0f), 0x7C);  // tie between 57344 (odd) and 65536: up, overflow
  EXPECT_EQ(FloatToE5M2(61440.0f, true), 0x7B);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);
  EXPECT_EQ(FloatToHalf(65520.0f, true), 0x7BFF);
  EXPECT_EQ(FloatToHalf(std::nanf("")), 0x7FFF);
  EXPECT_EQ(FloatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);  // tie to even
  EXPECT_EQ(FloatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(*ParseFormat("e4m3"), Format::kE4M3);
  EXPECT_EQ(*ParseFormat("fp8_e5m2"), Format::kE5M2);
  for (Format f : {Format::kFp32, Format::kFp16, Format::kBf16, Format::kE4M3, Format::kE5M2}) {
    EXPECT_EQ(*ParseFormat(Info(f).name), f) << Info(f).name;
  }
  const auto fp4 = ParseFormat("fp4");
  ASSERT_FALSE(fp4.ok());
  EXPECT_EQ(fp4.status().message(),
            "expected fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, e4m3 or e5m2, got 'fp4'");
}

// Every non-NaN code decodes to a value that encodes back to the same code,
// and positive codes decode in increasing order.
TEST(Formats, EveryCodeRoundTripsAndIsMonotone) {
  for (Format f : kNarrowFormats) {
    const FormatInfo& info = Info(f);
    const uint32_t count = 1u << info.bits;
    float prev = -1;
    for (uint32_t c = 0; c < count; ++c) {
      const float v = Decode(f, c);
      if (std::isnan(v)) continue;
      if (v == 0 && c != 0) {
        EXPECT_EQ(c, 1u << (info.bits - 1)) << info.name;  // -0
        EXPECT_TRUE(std::signbit(v));
      }
      EXPECT_EQ(Encode(f, v), c) << info.name << " code " << c;
      if (c < count / 2) {
        EXPECT_GT(v, prev) << info.name << " code " << c;
        prev = v;
      }
    }
  }
}

// The code a brute-force search picks: the nearest finite value; on a tie the
// even code; overflow handled as the format says.
uint32_t BruteForce(Format f, float x, bool saturate) {
  const FormatInfo& info = Info(f);
  if (std::isnan(x)) return info.nan_code;
  const uint32_t sign = std::signbit(x) ? 1u << (info.bits - 1) : 0;
  const double a = std::fabs(static_cast<double>(x));
  const double max = Decode(f, info.max_finite_code);
  // The value one step past the largest finite one: where rounding overflows.
  const double ulp_at_max = max - Decode(f, info.max_finite_code - 1);
  const double past = max + ulp_at_max;
  const uint32_t overflow =
      saturate ? info.max_finite_code : (info.has_infinity ? info.infinity_code : info.nan_code);
  if (std::isinf(x)) return overflow | sign;
  // Round to nearest with ties to even also between max and `past`: the
  // mantissa of `past` would be max's + 1.
  const double mid = (max + past) / 2;
  if (a > mid || (a == mid && (info.max_finite_code & 1))) return overflow | sign;
  uint32_t best = 0;
  double best_err = kInf;
  for (uint32_t c = 0; c <= info.max_finite_code; ++c) {
    const double err = std::fabs(static_cast<double>(Decode(f, c)) - a);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return best | sign;
}

TEST(Formats, EncodeMatchesBruteForceNearest) {
  std::mt19937 rng(7);
  for (Format f : {Format::kE4M3, Format::kE5M2, Format::kFp16}) {
    const FormatInfo& info = Info(f);
    const float max = Decode(f, info.max_finite_code);
    std::vector<float> xs;
    // Every code's value, the midpoints between neighbours and one float ulp either side.
    for (uint32_t c = 0; c + 1 <= info.max_finite_code; c += (f == Format::kFp16 ? 331 : 1)) {
      const float lo = Decode(f, c), hi = Decode(f, c + 1);
      const float mid = (lo + hi) / 2;
      for (float v : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf)}) {
        xs.push_back(v);
        xs.push_back(-v);
      }
    }
    std::uniform_real_distribution<float> exponent(-30, std::log2(max) + 2);
    std::uniform_real_distribution<float> mant(1, 2);
    // The FP16 brute force scans 31,744 codes per value: fewer samples there.
    const int samples = f == Format::kFp16 ? 500 : 3000;
    for (int i = 0; i < samples; ++i) xs.push_back(std::ldexp(mant(rng), int(exponent(rng))));
    for (float x : {0.0f, -0.0f, kInf, -kInf, std::nanf(""), max * 1.03f, 3e38f, 1e-40f}) {
      xs.push_back(x);
    }
    for (float x : xs) {
      for (bool sat : {false, true}) {
        ASSERT_EQ(Encode(f, x, sat), BruteForce(f, x, sat))
            << info.name << " x=" << x << " saturate=" << sat;
      }
    }
  }
}

}  // namespace
}  // namespace seedance::precision
