#include "seedance/comm/compressor.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "seedance/base/enum_names.h"
#include "seedance/base/hash.h"
#include "seedance/comm/wire_format.h"
#include "seedance/port/simd_quantize.h"
#include "seedance/precision/convert.h"
#include "seedance/precision/formats.h"

namespace seedance::comm {
namespace {

// base::SplitMix64 with the draws the compressor needs: sampling and rounding noise.
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  uint64_t Next() { return gen_.Next(); }
  // Uniform in [0, 1).
  float Unit() { return static_cast<float>(Next() >> 40) * 0x1p-24f; }
  uint64_t Below(uint64_t bound) { return Next() % bound; }

 private:
  base::SplitMix64 gen_;
};

uint32_t MagnitudeKey(float v) { return std::bit_cast<uint32_t>(v) & 0x7FFFFFFFu; }

void AppendSparse(std::vector<uint8_t>& payload, std::span<const float> x,
                  std::span<const uint32_t> idx, bool fp16) {
  BeginPayload(payload, PayloadKind::kSparse, 0, x.size(), static_cast<uint32_t>(idx.size()));
  uint8_t flags = AppendIndices(payload, idx, x.size());
  if (fp16) flags |= kFlagFp16Values;
  SetFlags(payload, flags);
  for (uint32_t i : idx) fp16 ? AppendF16(payload, x[i]) : AppendF32(payload, x[i]);
  FinishPayload(payload);
}

class TopK : public Compressor {
 public:
  using Compressor::Compressor;
  void Compress(std::span<const float> x, std::vector<uint8_t>& payload, uint64_t) const override {
    const auto idx = TopKIndices(x, KeepCount(x.size(), config_.ratio));
    AppendSparse(payload, x, idx, config_.fp16_values);
  }
};

class TopKSampled : public Compressor {
 public:
  using Compressor::Compressor;
  void Compress(std::span<const float> x, std::vector<uint8_t>& payload,
                uint64_t seed) const override {
    const uint64_t n = x.size();
    const uint64_t k = KeepCount(n, config_.ratio);
    std::vector<uint32_t> idx;
    if (n > 0) {
      Rng rng(seed);
      const uint64_t m = std::min<uint64_t>(
          n, std::max<uint64_t>(1000, static_cast<uint64_t>(config_.sample_ratio * n)));
      std::vector<uint32_t> sample(m);
      for (auto& s : sample) s = MagnitudeKey(x[rng.Below(n)]);
      // The sample's quantile for k/n: its (k*m/n)-th largest key.
      auto threshold_at = [&](double share) {
        const uint64_t pos = std::min<uint64_t>(m - 1, static_cast<uint64_t>(share * m));
        std::nth_element(sample.begin(), sample.begin() + static_cast<int64_t>(pos), sample.end(),
                         std::greater<uint32_t>());
        return sample[pos];
      };
      double share = static_cast<double>(k) / static_cast<double>(n);
      const uint64_t lo = k - k / 20, hi = k + k / 20;  // within 5% of k
      for (int attempt = 0; attempt < 4; ++attempt) {
        const uint32_t t = threshold_at(share);
        idx.clear();
        for (uint64_t i = 0; i < n; ++i) {
          if (MagnitudeKey(x[i]) >= t) idx.push_back(static_cast<uint32_t>(i));
        }
        if (idx.size() >= lo) break;
        share = std::min(1.0, share * 2);  // too few: lower the threshold and rescan
      }
      if (idx.size() > hi || idx.size() < lo) {
        // Correct the count: exact top-k among the selected (or of all, if still short).
        std::vector<float> selected;
        if (idx.size() > hi) {
          selected.reserve(idx.size());
          for (uint32_t i : idx) selected.push_back(x[i]);
          const auto keep = TopKIndices(selected, k);
          std::vector<uint32_t> out;
          out.reserve(keep.size());
          for (uint32_t j : keep) out.push_back(idx[j]);
          idx.swap(out);
        } else {
          idx = TopKIndices(x, k);
        }
      }
    }
    AppendSparse(payload, x, idx, config_.fp16_values);
  }
};

class RandomK : public Compressor {
 public:
  using Compressor::Compressor;
  void Compress(std::span<const float> x, std::vector<uint8_t>& payload,
                uint64_t seed) const override {
    const uint64_t n = x.size();
    const uint64_t k = KeepCount(n, config_.ratio);
    std::vector<uint32_t> idx;
    idx.reserve(k);
    Rng rng(seed);
    // Robert Floyd's algorithm: k distinct values in [0, n) with k draws,
    // using a bitmap for membership.
    std::vector<bool> chosen(n, false);
    for (uint64_t j = n - k; j < n; ++j) {
      const uint64_t t = rng.Below(j + 1);
      const uint64_t pick = chosen[t] ? j : t;
      chosen[pick] = true;
      idx.push_back(static_cast<uint32_t>(pick));
    }
    std::sort(idx.begin(), idx.end());
    AppendSparse(payload, x, idx, config_.fp16_values);
  }
};

class Quantize : public Compressor {
 public:
  Quantize(const CompressorConfig& c, int levels) : Compressor(c), levels_(levels) {}
  void Compress(std::span<const float> x, std::vector<uint8_t>& payload,
                uint64_t seed) const override {
    const uint64_t n = x.size();
    const uint32_t chunk = config_.chunk;
    const bool four = levels_ == 7;
    const bool simd = port::UseAvx2(config_.kernel) && !config_.stochastic;
    BeginPayload(payload, four ? PayloadKind::kInt4 : PayloadKind::kInt8, 0, n, chunk);
    const uint64_t chunks = (n + chunk - 1) / chunk;
    const size_t scales_at = payload.size();
    const size_t values_at = scales_at + chunks * 4;
    payload.resize(values_at + (four ? (n + 1) / 2 : n), 0);
    std::vector<int8_t> codes(four ? std::min<uint64_t>(n, chunk) : 0);
    Rng rng(seed);
    for (uint64_t c = 0; c < chunks; ++c) {
      const uint64_t begin = c * chunk, len = std::min<uint64_t>(chunk, n - begin);
      const float* xc = x.data() + begin;
      const float amax = simd ? port::Avx2AbsMax(xc, len) : ScalarAbsMax(xc, len);
      const float scale = std::isfinite(amax) && amax > 0 ? amax / static_cast<float>(levels_) : 0;
      std::memcpy(payload.data() + scales_at + 4 * c, &scale, 4);
      const float inv = scale > 0 ? 1.0f / scale : 0.0f;
      // int8 codes go straight into the payload; int4 codes via a chunk buffer.
      int8_t* q =
          four ? codes.data() : reinterpret_cast<int8_t*>(payload.data() + values_at + begin);
      if (simd) {
        port::Avx2QuantizeInt8(xc, len, inv, levels_, q);
      } else {
        for (uint64_t i = 0; i < len; ++i) {
          const float y = xc[i] * inv;
          float r = config_.stochastic ? std::floor(y + rng.Unit()) : std::nearbyint(y);
          const float top = static_cast<float>(levels_);
          q[i] = static_cast<int8_t>(std::isnan(r) ? 0.0f : std::clamp(r, -top, top));
        }
      }
      if (four) {
        // begin is a multiple of the chunk; an odd chunk would split a byte.
        uint8_t* out = payload.data() + values_at + begin / 2;
        if (simd && chunk % 2 == 0) {
          port::Avx2PackInt4(q, len, out);
        } else {
          for (uint64_t i = 0; i < len; ++i) {
            const uint64_t at = begin + i;
            payload[values_at + at / 2] |=
                static_cast<uint8_t>((static_cast<uint8_t>(q[i]) & 0x0F) << (at % 2 ? 4 : 0));
          }
        }
      }
    }
    FinishPayload(payload);
  }

 private:
  static float ScalarAbsMax(const float* x, uint64_t n) {
    float amax = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const float a = std::fabs(x[i]);
      if (a > amax) amax = a;  // NaN never wins: it compares false
    }
    return amax;
  }
  int levels_;
};

class Sign : public Compressor {
 public:
  using Compressor::Compressor;
  void Compress(std::span<const float> x, std::vector<uint8_t>& payload, uint64_t) const override {
    const uint64_t n = x.size();
    const bool simd = port::UseAvx2(config_.kernel);
    BeginPayload(payload, PayloadKind::kSign, 0, n, 0);
    double l1 = 0;
    if (simd) {
      l1 = port::Avx2AbsSum(x.data(), n);
    } else {
      for (float v : x) l1 += std::isfinite(v) ? std::fabs(v) : 0.0;
    }
    AppendF32(payload, n ? static_cast<float>(l1 / static_cast<double>(n)) : 0.0f);
    const size_t start = payload.size();
    payload.resize(start + (n + 7) / 8, 0);
    if (simd) {
      port::Avx2SignBits(x.data(), n, payload.data() + start);
    } else {
      for (uint64_t i = 0; i < n; ++i) {
        if (std::signbit(x[i])) payload[start + i / 8] |= static_cast<uint8_t>(1u << (i % 8));
      }
    }
    FinishPayload(payload);
  }
};

class Fp16Int4 : public Compressor {
 public:
  using Compressor::Compressor;
  void Compress(std::span<const float> x, std::vector<uint8_t>& payload, uint64_t) const override {
    const uint64_t n = x.size();
    BeginPayload(payload, PayloadKind::kFp16Int4, 0, n, 0);
    const size_t dense_at = payload.size();
    payload.resize(dense_at + 2 * n);
    // Bulk FP16 conversion (AVX2/F16C when available), then the rounding
    // errors, decoded back in cache-sized blocks.
    (void)precision::ConvertFromFloat(precision::Format::kFp16, x, payload.data() + dense_at,
                                      false);
    std::vector<float> err(n);
    constexpr uint64_t kBlock = 4096;
    for (uint64_t b = 0; b < n; b += kBlock) {
      const uint64_t len = std::min(kBlock, n - b);
      float* e = err.data() + b;
      (void)precision::ConvertToFloat(precision::Format::kFp16, payload.data() + dense_at + 2 * b,
                                      {e, len});
      for (uint64_t i = 0; i < len; ++i) {
        const float back = e[i];
        e[i] = std::isfinite(back) && std::isfinite(x[b + i]) ? x[b + i] - back : 0.0f;
      }
    }
    const auto idx = TopKIndices(err, KeepCount(n, config_.ratio));
    float amax = 0;
    for (uint32_t i : idx) amax = std::max(amax, std::fabs(err[i]));
    const float scale = amax > 0 ? amax / 7.0f : 0.0f;
    AppendF32(payload, scale);
    SetFlags(payload, AppendIndices(payload, idx, n));
    const size_t start = payload.size();
    payload.resize(start + (idx.size() + 1) / 2, 0);
    for (size_t k = 0; k < idx.size(); ++k) {
      const float r = scale > 0 ? std::clamp(std::nearbyint(err[idx[k]] / scale), -7.0f, 7.0f) : 0;
      payload[start + k / 2] |=
          static_cast<uint8_t>((static_cast<int>(r) & 0x0F) << (k % 2 ? 4 : 0));
    }
    // The count field holds the number of residual entries.
    const uint32_t count = static_cast<uint32_t>(idx.size());
    std::memcpy(payload.data() + 16, &count, 4);
    FinishPayload(payload);
  }
};

}  // namespace

namespace {

constexpr base::EnumTable<CompressorKind, 7> kCompressorNames = {
    {{CompressorKind::kTopK, "topk"},
     {CompressorKind::kTopKSampled, "topk-sampled"},
     {CompressorKind::kRandomK, "randomk"},
     {CompressorKind::kInt8, "int8"},
     {CompressorKind::kInt4, "int4"},
     {CompressorKind::kSign, "sign"},
     {CompressorKind::kFp16Int4, "fp16-int4"}}};

}  // namespace

std::string_view CompressorName(CompressorKind kind) {
  return base::EnumName(kCompressorNames, kind);
}

base::StatusOr<CompressorKind> ParseCompressor(std::string_view name, std::string_view where) {
  return base::ParseEnum(kCompressorNames, name, where);
}

base::Status CompressorConfig::Validate() const {
  if (!(ratio > 0 && ratio <= 1)) return base::InvalidArgumentError("must be in (0, 1]", "ratio");
  if (!(sample_ratio > 0 && sample_ratio <= 1)) {
    return base::InvalidArgumentError("must be in (0, 1]", "sample_ratio");
  }
  if (chunk == 0) return base::InvalidArgumentError("must be > 0", "chunk");
  SEEDANCE_RETURN_IF_ERROR(port::CheckSimdKernel(kernel));
  return base::OkStatus();
}

base::StatusOr<std::unique_ptr<Compressor>> Compressor::Create(const CompressorConfig& c) {
  SEEDANCE_RETURN_IF_ERROR(c.Validate());
  switch (c.kind) {
    case CompressorKind::kTopK:
      return std::unique_ptr<Compressor>(new TopK(c));
    case CompressorKind::kTopKSampled:
      return std::unique_ptr<Compressor>(new TopKSampled(c));
    case CompressorKind::kRandomK:
      return std::unique_ptr<Compressor>(new RandomK(c));
    case CompressorKind::kInt8:
      return std::unique_ptr<Compressor>(new Quantize(c, 127));
    case CompressorKind::kInt4:
      return std::unique_ptr<Compressor>(new Quantize(c, 7));
    case CompressorKind::kSign:
      return std::unique_ptr<Compressor>(new Sign(c));
    case CompressorKind::kFp16Int4:
      return std::unique_ptr<Compressor>(new Fp16Int4(c));
  }
  return base::InvalidArgumentError("unknown compressor");
}

uint64_t KeepCount(uint64_t n, double ratio) {
  if (n == 0) return 0;
  const auto k = static_cast<uint64_t>(std::llround(ratio * static_cast<double>(n)));
  return std::clamp<uint64_t>(k, 1, n);
}

std::vector<uint32_t> TopKIndices(std::span<const float> x, uint64_t k) {
  const uint64_t n = x.size();
  k = std::min(k, n);
  std::vector<uint32_t> out;
  if (k == 0) return out;
  // Pass 1: histogram of the top 12 bits of the magnitude key. Keys of
  // non-negative floats order like the floats (NaN keys sort above inf).
  constexpr int kShift = 19;
  std::vector<uint64_t> hist(size_t{1} << (31 - kShift), 0);
  for (float v : x) ++hist[MagnitudeKey(v) >> kShift];
  uint64_t above = 0;
  size_t bucket = hist.size();
  while (bucket > 0 && above + hist[bucket - 1] < k) above += hist[--bucket];
  --bucket;  // the bucket holding the k-th largest
  // Pass 2: everything above the bucket is in; the bucket's members compete.
  std::vector<std::pair<uint32_t, uint32_t>> contenders;  // (key, index)
  out.reserve(k);
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t key = MagnitudeKey(x[i]);
    const size_t b = key >> kShift;
    if (b > bucket) {
      out.push_back(static_cast<uint32_t>(i));
    } else if (b == bucket) {
      contenders.emplace_back(key, static_cast<uint32_t>(i));
    }
  }
  const uint64_t need = k - above;
  // Largest key first; among equal keys the lower index.
  auto better = [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  std::nth_element(contenders.begin(), contenders.begin() + static_cast<int64_t>(need - 1),
                   contenders.end(), better);
  for (uint64_t j = 0; j < need; ++j) out.push_back(contenders[j].second);
  std::sort(out.begin(), out.end());
  return out;
}

base::Status CompressWithFeedback(const Compressor& compressor, std::span<const float> grad,
                                  std::span<float> residual, std::vector<uint8_t>& payload,
                                  uint64_t seed) {
  if (grad.size() != residual.size()) {
    return base::InvalidArgumentError("gradient and residual differ in length (" +
                                      std::to_string(grad.size()) + " vs " +
                                      std::to_string(residual.size()) + ")");
  }
  for (size_t i = 0; i < grad.size(); ++i) residual[i] += grad[i];
  compressor.Compress(residual, payload, seed);
  return DecodeAdd(payload, residual, -1.0f);
}

}  // namespace seedance::comm
