// The KV decompression-cost estimator (feature KV-4):
//
//   T_decomp = C_compressed / B_pcie + N_access * T_hbm
//
// C_compressed: bytes of the compressed cache moved; B_pcie: the link's
// bandwidth (line rate of the generation and width, or a measured figure);
// N_access = ceil(C_compressed / access_bytes) row accesses (access_bytes: one
// HBM burst, 32 bytes); T_hbm: the time of one access (12.8 ns for
// an HBM2e row-buffer hit is the default). The KV-4 formula serializes every
// access, so it is a worst case, two orders of magnitude above what HBM's
// parallel channels deliver; the report therefore leads with t_plan_us, the
// figure to plan with (the PCIe transfer plus the compressed cache read and
// the FP32 cache written at the memory's peak bandwidth), then the formula's
// terms and t_decomp_us with a note saying how far apart the two are, and,
// when asked, the dequantization time measured on this CPU.
//
// Thread safety: pure functions; MeasureCpuDequant runs a timed loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::kv {

struct PcieLink {
  int generation = 5;  // 3, 4, 5, 6
  int lanes = 16;      // 1, 2, 4, 8, 16
};
// Per-direction line rate in GB/s (after encoding: 128b/130b for gen 3-5,
// FLIT 242/256 for gen 6).
base::StatusOr<double> PcieLineRateGbps(const PcieLink& link);

struct HbmPreset {
  std::string name;           // "hbm2", "hbm2e", "hbm3", "hbm3e"
  double stack_gbytes_per_s;  // peak bandwidth of one stack (JEDEC pin rate x 1024 bits)
  double access_ns = 12.8;    // one row-buffer hit (an HBM2e figure, used for all)
};
base::StatusOr<HbmPreset> FindHbm(const std::string& name);

struct EstimateInput {
  int64_t values = 0;  // values in the cache (tokens x layers x 2 x kv_dim)
  double bits_per_value = 4;
  PcieLink pcie;
  std::optional<double> pcie_gbytes_per_s;  // measured; overrides the line rate
  std::string hbm = "hbm3";
  int stacks = 5;
  double access_bytes = 32;
  std::optional<double> hbm_access_ns;             // overrides the preset
  std::optional<double> cpu_dequant_gbytes_per_s;  // measured output bandwidth, FP32 GB/s
};

base::StatusOr<base::Report> EstimateDecompression(const EstimateInput& in);

// What `seedancectl kv estimate` is asked, in the command's units: the cache's shape, the code
// width and group, the PCIe link and the HBM. 0 for pcie_gbytes_per_s / hbm_ns: the presets'.
struct EstimateRequest {
  int64_t tokens = 131072, layers = 32, kv_dim = 1024;
  int bits = 4, group = 32, pcie_gen = 5, pcie_lanes = 16, hbm_stacks = 5;
  double pcie_gbytes_per_s = 0, hbm_ns = 0;
  std::string hbm = "hbm3";
  bool measure_cpu = false;  // also time the dequantization on this CPU
};
// The report `kv estimate -o json` prints and seedance.kv.estimate returns. Errors: a count
// below 1, a width the cache does not pack, an unknown HBM generation.
base::StatusOr<base::Report> EstimateReport(const EstimateRequest& request);

// Decodes `values` b-bit codes (the cache's packing) into FP32 repeatedly and
// returns the FP32 output bandwidth in GB/s.
double MeasureCpuDequant(int bits, int64_t values);

}  // namespace seedance::kv
