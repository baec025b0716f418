// Gradient compressors (feature COMM-1) behind one interface: compress a float
// span into a payload (wire_format.h), decompress by DecodeAdd. Error
// feedback (CompressWithFeedback) keeps what compression dropped and adds it
// to the next step's gradient (Seide et al. 2014; Karimireddy et al. 2019).
//
//   topk          the k = ratio*n largest magnitudes, exactly (a radix select
//                 over the float bits: two passes, no sort of n values)
//   topk-sampled  Deep Gradient Compression's threshold: the k-th largest
//                 magnitude of a random sample (sample_ratio of n, at least
//                 1,000) is the threshold; the selection is then corrected to
//                 within 5% of k (trimmed exactly when above, threshold lowered
//                 when below)
//   randomk       k indices drawn uniformly without replacement
//   int8, int4    symmetric per-chunk scale (amax/127, amax/7), round to
//                 nearest even or stochastic rounding
//   sign          1 bit per value and one scale, mean |x| (EF-signSGD)
//   fp16-int4     every value in FP16, plus the ratio*n largest FP16 rounding
//                 errors as INT4 with one scale
//
// Sparse values go as FP32, or FP16 with fp16_values.
//
// Thread safety: a Compressor is immutable after Create; Compress may be
// called from several threads on different buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/port/simd.h"

namespace seedance::comm {

enum class CompressorKind { kTopK, kTopKSampled, kRandomK, kInt8, kInt4, kSign, kFp16Int4 };

std::string_view CompressorName(CompressorKind kind);  // "topk", "topk-sampled", ...
base::StatusOr<CompressorKind> ParseCompressor(std::string_view name,
                                               std::string_view where = "compressor");

struct CompressorConfig {
  CompressorKind kind = CompressorKind::kTopK;
  double ratio = 0.01;         // share of values kept (sparse kinds, fp16-int4 residual)
  double sample_ratio = 0.01;  // topk-sampled
  uint32_t chunk = 256;        // int8/int4 values per scale
  bool stochastic = false;     // int8/int4 stochastic rounding
  bool fp16_values = false;    // sparse values as FP16
  // The quantizers' vector kernels: kAuto is the process's choice (port/simd.h); payloads are
  // the same bytes either way.
  port::SimdKernel kernel = port::SimdKernel::kAuto;

  base::Status Validate() const;
};

class Compressor {
 public:
  static base::StatusOr<std::unique_ptr<Compressor>> Create(const CompressorConfig& config);
  virtual ~Compressor() = default;

  // Writes the payload of `x` into `payload` (replacing its contents). `seed`
  // drives randomness (random-k, sampling, stochastic rounding); the same
  // seed and input give the same payload.
  virtual void Compress(std::span<const float> x, std::vector<uint8_t>& payload,
                        uint64_t seed) const = 0;

  const CompressorConfig& config() const { return config_; }

 protected:
  explicit Compressor(const CompressorConfig& config) : config_(config) {}
  CompressorConfig config_;
};

// Error feedback in one call: residual += grad; payload = C(residual);
// residual -= D(payload). Afterwards residual holds exactly what this payload
// did not carry. grad and residual have the same length.
base::Status CompressWithFeedback(const Compressor& compressor, std::span<const float> grad,
                                  std::span<float> residual, std::vector<uint8_t>& payload,
                                  uint64_t seed);

// k for n values: round(ratio * n), at least 1 when n > 0.
uint64_t KeepCount(uint64_t n, double ratio);

// The indices of the k largest |x| (ties broken by lower index), ascending.
std::vector<uint32_t> TopKIndices(std::span<const float> x, uint64_t k);

}  // namespace seedance::comm
