// Gradient compression in a training plan (feature CLI-1): Seedance's DDP communication hook
// (seedance.torch.comm_hook, feature COMM-1) in place of the data-parallel all-reduce, weighed
// where the data-parallel network time dominates.
//
// The hook, per step and per GPU with n gradient values (python/seedance/torch/comm.py): copy the
// bucket to the host (g n bytes over PCIe), compress its shards there with error feedback, all-
// gather the payloads over the data-parallel link, decode and sum the d payloads on the host,
// copy the result back (g n bytes). Its seconds:
//
//   PCIe     2 g n / pcie
//   host     compress 8n / (B x c) + decode d x 8n / (B x r)
//   network  (d - 1) x P n / (link x collective fraction) + latency
//
// B is the node's host bandwidth shared by its GPUs; c and r are the engine's compress and
// decompress speeds as multiples of memcpy on the same float32 buffer (which moves 8 bytes per
// value), measured by bench/comm/compress_speed.py on 25M values (docs/benchmarks.md); P is the
// payload's bytes per value, measured at plan time by compressing one shard (2^18 normal
// values, the hook's shard size and defaults) with the engine. Like the all-reduce it replaces,
// the whole is overlapped with the last micro-batch's backward pass.
//
// Only int8, int4 and top-k (1%, FP16 values) are weighed: the kinds that stayed within a point
// of uncompressed accuracy in bench/comm/fashion_mnist_ddp.py (sign lost 4.3 points, random-k
// diverged). Compression needs ZeRO 0 or 1 (a DDP hook over an all-reduce), d > 1 and the
// spec's hardware.host (the hook works on the host).
//
// Thread safety: pure functions (the payload measurement runs once, under a static's lock).
#pragma once

#include <string_view>

#include "seedance/base/status.h"

namespace seedance::plan {

enum class GradCompression { kNone, kInt8, kInt4, kTopK };

std::string_view GradCompressionName(GradCompression g);  // "none", "int8", "int4", "topk"
base::StatusOr<GradCompression> ParseGradCompression(std::string_view text, std::string_view where);

struct CompressionFigures {
  double payload_bytes_per_value = 0;  // P
  double compress_vs_memcpy = 0;       // c
  double decompress_vs_memcpy = 0;     // r
};

// The figures of `g` (not kNone).
CompressionFigures FiguresOf(GradCompression g);

// Seconds of the hook for one step of one GPU (the formula above).
struct CompressedExchange {
  double pcie_s = 0, host_s = 0, network_s = 0;
  double total() const { return pcie_s + host_s + network_s; }
};
CompressedExchange CompressedExchangeSeconds(GradCompression g, double values,
                                             double gradient_bytes, double data_parallel,
                                             double host_bytes_per_s, double pcie_bytes_per_s,
                                             double link_bytes_per_s, double collective_fraction,
                                             double collective_latency_s);

}  // namespace seedance::plan
