// The quantized cache against its error bound, on random and adversarial
// data, read back through the same fused Scores / WeightedSum paths that
// attention uses.
#include "seedance/kv/cache.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace seedance::kv {
namespace {

constexpr CacheShape kShape{1, 64, 16, 96};

// tokens x kv_dim values.
std::vector<std::vector<float>> Tokens(int n, unsigned seed, int kind) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<std::vector<float>> t(n, std::vector<float>(kShape.kv_dim));
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < kShape.kv_dim; ++c) {
      switch (kind) {
        case 0:
          t[i][c] = g(rng) * (1 + c % 5);  // channels of different scales
          break;
        case 1:
          t[i][c] = 0.75f;  // constant blocks
          break;
        default:
          t[i][c] = (i == 7 && c == 3) ? 1e4f : g(rng) * 1e-3f;  // one outlier
      }
    }
  }
  return t;
}

// Dequantized k_t[c] and v_t[c], read through the fused paths with one-hot q and w.
void ReadBack(const KvCache& cache, int len, std::vector<std::vector<float>>& k,
              std::vector<std::vector<float>>& v) {
  k.assign(len, std::vector<float>(kShape.kv_dim));
  v.assign(len, std::vector<float>(kShape.kv_dim));
  std::vector<float> scores(len), out(kShape.head_size), q(kShape.head_size), w(len);
  for (int head = 0; head < kShape.kv_dim / kShape.head_size; ++head) {
    for (int c = 0; c < kShape.head_size; ++c) {
      std::fill(q.begin(), q.end(), 0.0f);
      q[c] = 1;
      cache.Scores(0, head, q, len, scores);
      for (int t = 0; t < len; ++t) k[t][head * kShape.head_size + c] = scores[t];
    }
    for (int t = 0; t < len; ++t) {
      std::fill(w.begin(), w.end(), 0.0f);
      w[t] = 1;
      cache.WeightedSum(0, head, w, len, out);
      for (int c = 0; c < kShape.head_size; ++c) v[t][head * kShape.head_size + c] = out[c];
    }
  }
}

// Bits per value of a full group of 32: 4 bits, 8 codes per word, 4 words + 64 -> 192 / 32 = 6;
// 6 bits, 5 per word, 7 words -> (224 + 64) / 32 = 9; 8 bits, 8 words -> 10; 2 bits, 2 words
// -> 4; 5 bits, 6 per word, 6 words -> (192 + 64) / 32 = 8. Group 64 at 4 bits: (256 + 64) / 64.
TEST(QuantizedCache, PackedBitsPerValueByHand) {
  EXPECT_DOUBLE_EQ(PackedBitsPerValue(4, 32), 6);
  EXPECT_DOUBLE_EQ(PackedBitsPerValue(6, 32), 9);
  EXPECT_DOUBLE_EQ(PackedBitsPerValue(8, 32), 10);
  EXPECT_DOUBLE_EQ(PackedBitsPerValue(2, 32), 4);
  EXPECT_DOUBLE_EQ(PackedBitsPerValue(5, 32), 8);
  EXPECT_DOUBLE_EQ(PackedBitsPerValue(4, 64), 5);
}

TEST(QuantizedCache, ErrorWithinTheBoundForEveryWidth) {
  // Groups of 16 (plain layout) and 32 (4-bit keys in channel pairs, read by
  // the AVX2 kernel and, with simd off, by the scalar path).
  const int len = 96;
  for (const auto& [group, simd] : {std::pair{16, true}, {32, true}, {32, false}}) {
    for (int kind : {0, 1, 2}) {
      const auto data = Tokens(len, 3, kind);
      for (KvWidth width :
           {KvWidth::kInt8, KvWidth::kInt6, KvWidth::kInt5, KvWidth::kInt4, KvWidth::kInt2}) {
        const int bits = KvCodeBits(width);
        QuantConfig qc = QuantConfig::Of(width, group, 0);
        qc.kernel = simd ? port::SimdKernel::kAuto : port::SimdKernel::kScalar;
        auto cache = NewQuantizedCache(kShape, qc);
        ASSERT_TRUE(cache.ok());
        for (int t = 0; t < len; ++t) ASSERT_TRUE((*cache)->Append(0, t, data[t], data[t]).ok());
        std::vector<std::vector<float>> k, v;
        ReadBack(**cache, len, k, v);
        const float levels = static_cast<float>((1 << bits) - 1);
        for (int t = 0; t < len; ++t) {
          for (int c = 0; c < kShape.kv_dim; ++c) {
            // Values: the token's channel group; keys: the channel's token group.
            float vlo = INFINITY, vhi = -INFINITY, klo = INFINITY, khi = -INFINITY;
            for (int j = c / group * group; j < (c / group + 1) * group; ++j) {
              vlo = std::min(vlo, data[t][j]);
              vhi = std::max(vhi, data[t][j]);
            }
            for (int j = t / group * group; j < (t / group + 1) * group; ++j) {
              klo = std::min(klo, data[j][c]);
              khi = std::max(khi, data[j][c]);
            }
            // ||e||inf <= alpha / (2 (2^b - 1)) (+ float rounding of the decode).
            const float tol = 1e-6f * (std::fabs(data[t][c]) + 1);
            ASSERT_LE(std::fabs(v[t][c] - data[t][c]), (vhi - vlo) / (2 * levels) * 1.0001f + tol)
                << "bits " << bits << " kind " << kind << " value t=" << t << " c=" << c;
            ASSERT_LE(std::fabs(k[t][c] - data[t][c]), (khi - klo) / (2 * levels) * 1.0001f + tol)
                << "bits " << bits << " group " << group << " kind " << kind << " key t=" << t
                << " c=" << c;
          }
        }
        EXPECT_EQ((*cache)->PackedValues(), 2 * 96 * 64);  // 96 tokens: whole key groups
      }
    }
  }
}

TEST(QuantizedCache, WindowKeepsRecentTokensExact) {
  const auto data = Tokens(60, 5, 0);
  QuantConfig qc = QuantConfig::Of(KvWidth::kInt2, 16, 20);
  auto cache = NewQuantizedCache(kShape, qc);
  ASSERT_TRUE(cache.ok());
  for (int t = 0; t < 60; ++t) ASSERT_TRUE((*cache)->Append(0, t, data[t], data[t]).ok());
  std::vector<std::vector<float>> k, v;
  ReadBack(**cache, 60, k, v);
  for (int t = 40; t < 60; ++t) {
    EXPECT_EQ(v[t], data[t]) << t;  // inside the 20-token window
    EXPECT_EQ(k[t], data[t]) << t;
  }
  EXPECT_NE(v[0], data[0]);  // outside: 2-bit codes
  // Values of tokens 0..39 and keys of the two complete groups 0..31 are packed.
  EXPECT_EQ((*cache)->PackedValues(), (40 + 32) * 64);
}

TEST(QuantizedCache, Fp8HasRelativeError) {
  const auto data = Tokens(64, 7, 0);
  auto cache = NewQuantizedCache(kShape, QuantConfig::Of(KvWidth::kFp8, 32, 0));
  ASSERT_TRUE(cache.ok());
  for (int t = 0; t < 64; ++t) ASSERT_TRUE((*cache)->Append(0, t, data[t], data[t]).ok());
  std::vector<std::vector<float>> k, v;
  ReadBack(**cache, 64, k, v);
  for (int t = 0; t < 64; ++t) {
    for (int c = 0; c < 64; ++c) {
      // E4M3: 3 mantissa bits, half an ulp = 2^-4 relative (normals), plus the subnormal step.
      const float x = data[t][c];
      EXPECT_LE(std::fabs(v[t][c] - x), std::fabs(x) / 16 + 1e-2f) << t << "," << c;
    }
  }
  EXPECT_NEAR(static_cast<double>((*cache)->PackedBits()) / (*cache)->PackedValues(), 8 + 64.0 / 32,
              1e-9);
}

TEST(QuantizedCache, Avx2ScoresMatchTheScalarPath) {
  // Head sizes: multiples of 8 (the AVX2 kernel; 256 channels its largest),
  // an even size that is not (channel pairs, scalar) and an odd one (plain
  // layout, scalar). The kernel rounds coef_c = q_c scale_c to 16 bits on
  // s = max |coef| / 32767, so it may differ from the FP32 scalar path by
  // 15 head_size s / 2 (header) plus float rounding; scale_c is the channel's
  // range over the group / 15, computed here from the data.
  for (const auto& [kv_dim, head_size] : {std::pair{64, 32}, {256, 256}, {24, 12}, {10, 5}}) {
    const CacheShape shape{1, kv_dim, head_size, 256};
    std::mt19937 data_rng(11);
    std::normal_distribution<float> g(0, 1);
    std::vector<std::vector<float>> data(256, std::vector<float>(kv_dim));
    for (auto& t : data) {
      for (int c = 0; c < kv_dim; ++c) t[c] = g(data_rng) * static_cast<float>(1 + c % 5);
    }
    auto fast = NewQuantizedCache(shape, QuantConfig::Of(KvWidth::kInt4, 32, 0));
    QuantConfig slow_cfg = QuantConfig::Of(KvWidth::kInt4, 32, 0);
    slow_cfg.kernel = port::SimdKernel::kScalar;
    auto slow = NewQuantizedCache(shape, slow_cfg);
    ASSERT_TRUE(fast.ok() && slow.ok());
    for (int t = 0; t < 256; ++t) {
      ASSERT_TRUE((*fast)->Append(0, t, data[t], data[t]).ok());
      ASSERT_TRUE((*slow)->Append(0, t, data[t], data[t]).ok());
    }
    std::mt19937 rng(4);
    std::vector<float> q(head_size), a(256), b(256);
    for (int head = 0; head < kv_dim / head_size && head < 2; ++head) {
      for (auto& x : q) x = g(rng);
      (*fast)->Scores(0, head, q, 256, a);
      (*slow)->Scores(0, head, q, 256, b);
      for (int t = 0; t < 256; ++t) {
        double max_coef = 0;
        for (int c = 0; c < head_size; ++c) {
          float lo = 1e30f, hi = -1e30f;
          for (int i = t / 32 * 32; i < t / 32 * 32 + 32; ++i) {
            lo = std::min(lo, data[i][head * head_size + c]);
            hi = std::max(hi, data[i][head * head_size + c]);
          }
          max_coef = std::max(max_coef, std::fabs(q[c]) * (hi - lo) / 15.0);
        }
        const double bound = 15.0 * head_size * max_coef / 32767 / 2 + 1e-5 * (1 + std::fabs(b[t]));
        EXPECT_NEAR(a[t], b[t], bound) << head_size << ": " << t;
      }
    }
  }
}

TEST(QuantizedCache, NonFiniteInputIsAClearError) {
  auto cache = NewQuantizedCache(kShape, QuantConfig::Of(KvWidth::kInt4, 32, 0));
  ASSERT_TRUE(cache.ok());
  std::vector<float> k(64, 1.0f), v(64, 1.0f);
  v[9] = NAN;
  const base::Status s = (*cache)->Append(0, 0, k, v);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.where(), "layer 0, token 0, channel 9");
  EXPECT_FALSE(NewQuantizedCache(kShape, QuantConfig::Of(KvWidth::kFp32, 32, 0)).ok());
  EXPECT_FALSE(NewFullCache(kShape)->Append(0, 0, v, k).ok());
}

TEST(QuantizedCache, BitsPerValueCountsScalesAndPadding) {
  const auto data = Tokens(64, 9, 0);
  // 5 bits: 6 codes per word, a group of 32 takes 6 words (192 bits) + 64 bits of min and scale.
  auto cache = NewQuantizedCache(kShape, QuantConfig::Of(KvWidth::kInt5, 32, 0));
  ASSERT_TRUE(cache.ok());
  for (int t = 0; t < 64; ++t) ASSERT_TRUE((*cache)->Append(0, t, data[t], data[t]).ok());
  EXPECT_NEAR(static_cast<double>((*cache)->PackedBits()) / (*cache)->PackedValues(),
              (192.0 + 64) / 32, 1e-9);
}

}  // namespace
}  // namespace seedance::kv
