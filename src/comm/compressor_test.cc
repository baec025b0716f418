// Compressors against brute-force references, error feedback's invariant,
// and the quantizers' error bounds.
#include "seedance/comm/compressor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "seedance/comm/wire_format.h"
#include "seedance/precision/formats.h"

namespace seedance::comm {
namespace {

std::vector<float> Gaussian(size_t n, unsigned seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, sigma);
  std::vector<float> x(n);
  for (auto& v : x) v = g(rng);
  return x;
}

std::unique_ptr<Compressor> Make(CompressorKind kind, double ratio = 0.01) {
  CompressorConfig c;
  c.kind = kind;
  c.ratio = ratio;
  auto made = Compressor::Create(c);
  EXPECT_TRUE(made.ok());
  return std::move(*made);
}

std::vector<float> Decode(const std::vector<uint8_t>& payload, size_t n) {
  std::vector<float> out(n, 0.0f);
  EXPECT_TRUE(DecodeAdd(payload, out).ok());
  return out;
}

TEST(TopK, MatchesASortByMagnitude) {
  for (size_t n : {1u, 7u, 1000u, 100003u}) {
    auto x = Gaussian(n, static_cast<unsigned>(n));
    x[n / 2] = x[0];  // a tie
    for (uint64_t k : {uint64_t{1}, uint64_t{n / 100 + 1}, uint64_t{n}}) {
      std::vector<uint32_t> ref(n);
      std::iota(ref.begin(), ref.end(), 0u);
      std::stable_sort(ref.begin(), ref.end(),
                       [&](uint32_t a, uint32_t b) { return std::fabs(x[a]) > std::fabs(x[b]); });
      ref.resize(k);
      std::sort(ref.begin(), ref.end());
      EXPECT_EQ(TopKIndices(x, k), ref) << "n=" << n << " k=" << k;
    }
  }
  // All equal: the lowest indices win.
  std::vector<float> flat(100, 1.0f);
  EXPECT_EQ(TopKIndices(flat, 3), (std::vector<uint32_t>{0, 1, 2}));
}

TEST(TopK, PayloadCarriesExactlyTheLargestValues) {
  const auto x = Gaussian(50000, 1);
  std::vector<uint8_t> p;
  Make(CompressorKind::kTopK)->Compress(x, p, 0);
  const auto d = Decode(p, x.size());
  const auto idx = TopKIndices(x, 500);
  size_t nonzero = 0;
  for (size_t i = 0; i < x.size(); ++i) nonzero += d[i] != 0;
  EXPECT_EQ(nonzero, 500u);
  for (uint32_t i : idx) EXPECT_EQ(d[i], x[i]);
}

TEST(TopKSampled, HitsKWithinFivePercent) {
  for (unsigned seed = 0; seed < 10; ++seed) {
    // Gaussian, heavy-tailed and many-ties inputs.
    std::vector<float> x = Gaussian(200000, seed);
    if (seed % 3 == 1) {
      for (auto& v : x) v = v * v * v;
    }
    if (seed % 3 == 2) {
      for (auto& v : x) v = std::round(v * 4);
    }
    std::vector<uint8_t> p;
    Make(CompressorKind::kTopKSampled)->Compress(x, p, seed);
    auto h = ReadHeader(p);
    ASSERT_TRUE(h.ok());
    EXPECT_GE(h->count, 1900u) << seed;
    EXPECT_LE(h->count, 2100u) << seed;
    // What it keeps is large: every kept value is at least the (1.05k)-th largest.
    const auto d = Decode(p, x.size());
    std::vector<float> mags(x.size());
    for (size_t i = 0; i < x.size(); ++i) mags[i] = std::fabs(x[i]);
    std::nth_element(mags.begin(), mags.begin() + 2100, mags.end(), std::greater<float>());
    for (size_t i = 0; i < x.size(); ++i) {
      if (d[i] != 0) {
        EXPECT_GE(std::fabs(x[i]), mags[2100]) << i;
      }
    }
  }
}

TEST(RandomK, DistinctUniformIndices) {
  const std::vector<float> x(10000, 1.0f);
  std::vector<int> hits(x.size(), 0);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<uint8_t> p;
    Make(CompressorKind::kRandomK, 0.05)->Compress(x, p, seed);
    const auto d = Decode(p, x.size());
    int kept = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (d[i] != 0) ++hits[i], ++kept;
    }
    ASSERT_EQ(kept, 500);  // distinct: 500 ones decoded
  }
  // Each index is kept with probability 0.05: 10 expected hits in 200 draws.
  const double mean = std::accumulate(hits.begin(), hits.end(), 0.0) / hits.size();
  EXPECT_NEAR(mean, 10.0, 1e-9);
  int extreme = 0;
  for (int h : hits) extreme += h > 25;
  EXPECT_LT(extreme, 5);  // P(Binomial(200, .05) > 25) ~ 1e-4
}

TEST(Quantizers, ErrorWithinHalfAStepPerChunk) {
  const auto x = Gaussian(10001, 3, 5.0f);
  for (auto [kind, levels] : {std::pair{CompressorKind::kInt8, 127}, {CompressorKind::kInt4, 7}}) {
    std::vector<uint8_t> p;
    Make(kind)->Compress(x, p, 0);
    const auto d = Decode(p, x.size());
    for (size_t c = 0; c * 256 < x.size(); ++c) {
      float amax = 0;
      for (size_t i = c * 256; i < std::min(x.size(), (c + 1) * 256); ++i) {
        amax = std::max(amax, std::fabs(x[i]));
      }
      const float step = amax / levels;
      for (size_t i = c * 256; i < std::min(x.size(), (c + 1) * 256); ++i) {
        ASSERT_LE(std::fabs(d[i] - x[i]), step * 0.5f * 1.001f) << i;
      }
    }
    // int8: 1 byte a value + 4 bytes per 256; int4: half a byte.
    EXPECT_EQ(p.size(), kHeaderBytes + 40 * 4 + (levels == 127 ? 10001 : 5001));
  }
}

TEST(Quantizers, StochasticRoundingIsUnbiased) {
  CompressorConfig c;
  c.kind = CompressorKind::kInt4;
  c.stochastic = true;
  c.chunk = 2;
  auto q = Compressor::Create(c);
  ASSERT_TRUE(q.ok());
  // Chunk {7, 0.3}: scale 1, so 0.3 lies between codes 0 and 1.
  const std::vector<float> x = {7.0f, 0.3f};
  double sum = 0;
  for (uint64_t seed = 0; seed < 20000; ++seed) {
    std::vector<uint8_t> p;
    (*q)->Compress(x, p, seed);
    sum += Decode(p, 2)[1];
  }
  EXPECT_NEAR(sum / 20000, 0.3, 0.01);
}

TEST(Sign, ScaleIsTheMeanMagnitude) {
  const std::vector<float> x = {1, -2, 3, -4, 0.5f};
  std::vector<uint8_t> p;
  Make(CompressorKind::kSign)->Compress(x, p, 0);
  const auto d = Decode(p, x.size());
  const float m = (1 + 2 + 3 + 4 + 0.5f) / 5;
  EXPECT_EQ(d, (std::vector<float>{m, -m, m, -m, m}));
  EXPECT_EQ(p.size(), kHeaderBytes + 4 + 1);
}

TEST(Fp16Int4, BetterThanFp16Alone) {
  const auto x = Gaussian(20000, 4, 100.0f);
  std::vector<uint8_t> p;
  Make(CompressorKind::kFp16Int4, 0.05)->Compress(x, p, 0);
  const auto d = Decode(p, x.size());
  double err = 0, err16 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += std::fabs(d[i] - x[i]);
    err16 += std::fabs(precision::HalfToFloat(precision::FloatToHalf(x[i])) - x[i]);
  }
  EXPECT_LT(err, err16);
}

TEST(ErrorFeedback, ResidualIsExactlyWhatWasNotSent) {
  for (CompressorKind kind :
       {CompressorKind::kTopK, CompressorKind::kTopKSampled, CompressorKind::kRandomK,
        CompressorKind::kInt8, CompressorKind::kInt4, CompressorKind::kSign,
        CompressorKind::kFp16Int4}) {
    auto comp = Make(kind);
    std::vector<float> residual(5000, 0.0f), carried(5000, 0.0f), total(5000, 0.0f);
    for (unsigned step = 0; step < 5; ++step) {
      const auto g = Gaussian(5000, 100 + step);
      const std::vector<float> before = residual;
      std::vector<uint8_t> p;
      ASSERT_TRUE(CompressWithFeedback(*comp, g, residual, p, step).ok());
      const auto sent = Decode(p, g.size());
      for (size_t i = 0; i < g.size(); ++i) {
        // residual_new = residual_old + g - sent, up to float rounding.
        ASSERT_NEAR(residual[i], before[i] + g[i] - sent[i],
                    1e-5f * (1 + std::fabs(before[i] + g[i])))
            << CompressorName(kind) << " step " << step;
        carried[i] += sent[i];
        total[i] += g[i];
      }
    }
    // Over all steps, what was sent plus what is still held is the gradient sum.
    for (size_t i = 0; i < total.size(); ++i) {
      ASSERT_NEAR(carried[i] + residual[i], total[i], 1e-4f * (1 + std::fabs(total[i])))
          << CompressorName(kind);
    }
  }
}

TEST(Compressor, ConfigValidation) {
  CompressorConfig c;
  c.ratio = 0;
  EXPECT_EQ(Compressor::Create(c).status().where(), "ratio");
  c = {};
  c.chunk = 0;
  EXPECT_EQ(Compressor::Create(c).status().where(), "chunk");
  EXPECT_EQ(*ParseCompressor("topk-sampled"), CompressorKind::kTopKSampled);
  const auto bad = ParseCompressor("powersgd");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "expected topk, topk-sampled, randomk, int8, int4, sign or fp16-int4, got 'powersgd'");
  EXPECT_EQ(KeepCount(25'000'000, 0.01), 250'000u);
  EXPECT_EQ(KeepCount(10, 0.01), 1u);
}

}  // namespace
}  // namespace seedance::comm
