#include "seedance/plan/grad_compression.h"

#include <array>
#include <memory>
#include <random>
#include <vector>

#include "seedance/base/enum_names.h"
#include "seedance/comm/compressor.h"

namespace seedance::plan {
namespace {

constexpr base::EnumTable<GradCompression, 4> kNames = {{{GradCompression::kNone, "none"},
                                                         {GradCompression::kInt8, "int8"},
                                                         {GradCompression::kInt4, "int4"},
                                                         {GradCompression::kTopK, "topk"}}};

// The hook's defaults (comm_hook): 2^18 values a shard, top-k 1% with FP16 values, 256 values a
// scale for the quantizers.
comm::CompressorConfig HookConfig(GradCompression g) {
  comm::CompressorConfig c;
  c.kind = g == GradCompression::kInt8   ? comm::CompressorKind::kInt8
           : g == GradCompression::kInt4 ? comm::CompressorKind::kInt4
                                         : comm::CompressorKind::kTopK;
  c.ratio = 0.01;
  c.fp16_values = true;
  c.chunk = 256;
  return c;
}

double MeasuredPayloadBytesPerValue(GradCompression g) {
  constexpr int kShard = 1 << 18;
  std::vector<float> x(kShard);
  std::mt19937_64 rng(2026);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  for (float& v : x) v = normal(rng);
  auto compressor = comm::Compressor::Create(HookConfig(g));
  std::vector<uint8_t> payload;
  (*compressor)->Compress(x, payload, /*seed=*/0);
  return static_cast<double>(payload.size()) / kShard;
}

}  // namespace

std::string_view GradCompressionName(GradCompression g) { return base::EnumName(kNames, g); }

base::StatusOr<GradCompression> ParseGradCompression(std::string_view text,
                                                     std::string_view where) {
  return base::ParseEnum(kNames, text, where);
}

CompressionFigures FiguresOf(GradCompression g) {
  // compress and decompress / memcpy on 25M values: bench/comm/compress_speed.py, dev-2c,
  // 2026-11-30 (docs/benchmarks.md, "Gradient compression: speed").
  static const std::array<CompressionFigures, 4> kFigures = {
      CompressionFigures{},
      CompressionFigures{MeasuredPayloadBytesPerValue(GradCompression::kInt8), 0.90, 1.35},
      CompressionFigures{MeasuredPayloadBytesPerValue(GradCompression::kInt4), 1.13, 1.37},
      CompressionFigures{MeasuredPayloadBytesPerValue(GradCompression::kTopK), 0.16, 1.58},
  };
  return kFigures[static_cast<size_t>(g)];
}

CompressedExchange CompressedExchangeSeconds(GradCompression g, double values,
                                             double gradient_bytes, double data_parallel,
                                             double host_bytes_per_s, double pcie_bytes_per_s,
                                             double link_bytes_per_s, double collective_fraction,
                                             double collective_latency_s) {
  const CompressionFigures f = FiguresOf(g);
  CompressedExchange e;
  e.pcie_s = 2 * gradient_bytes * values / pcie_bytes_per_s;
  e.host_s = 8 * values / (host_bytes_per_s * f.compress_vs_memcpy) +
             data_parallel * 8 * values / (host_bytes_per_s * f.decompress_vs_memcpy);
  e.network_s = (data_parallel - 1) * f.payload_bytes_per_value * values /
                    (link_bytes_per_s * collective_fraction) +
                collective_latency_s;
  return e;
}

}  // namespace seedance::plan
