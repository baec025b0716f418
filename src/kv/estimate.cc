#include "seedance/kv/estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/kv/cache.h"

namespace seedance::kv {

base::StatusOr<double> PcieLineRateGbps(const PcieLink& link) {
  double per_lane;  // GB/s per lane, per direction
  switch (link.generation) {
    case 3:
      per_lane = 8.0 * 128 / 130 / 8;
      break;
    case 4:
      per_lane = 16.0 * 128 / 130 / 8;
      break;
    case 5:
      per_lane = 32.0 * 128 / 130 / 8;
      break;
    case 6:
      per_lane = 64.0 * 242 / 256 / 8;
      break;
    default:
      return base::InvalidArgumentError("PCIe generation must be 3, 4, 5 or 6", "pcie_gen");
  }
  if (link.lanes != 1 && link.lanes != 2 && link.lanes != 4 && link.lanes != 8 &&
      link.lanes != 16) {
    return base::InvalidArgumentError("lanes must be 1, 2, 4, 8 or 16", "pcie_lanes");
  }
  return per_lane * link.lanes;
}

base::StatusOr<HbmPreset> FindHbm(const std::string& name) {
  // Pin rates of the JEDEC generations x 1024-bit stacks / 8.
  if (name == "hbm2") return HbmPreset{name, 2.0 * 1024 / 8};
  if (name == "hbm2e") return HbmPreset{name, 3.6 * 1024 / 8};
  if (name == "hbm3") return HbmPreset{name, 6.4 * 1024 / 8};
  if (name == "hbm3e") return HbmPreset{name, 9.6 * 1024 / 8};
  return base::InvalidArgumentError("unknown HBM type '" + name + "' (hbm2, hbm2e, hbm3, hbm3e)",
                                    "hbm");
}

base::StatusOr<base::Report> EstimateDecompression(const EstimateInput& in) {
  if (in.values <= 0) return base::InvalidArgumentError("must be > 0", "values");
  // Keeps every byte count below 2^53, where a double still holds whole numbers exactly.
  if (in.values > (int64_t{1} << 50)) {
    return base::InvalidArgumentError("must be at most 2^50", "values");
  }
  if (!(in.bits_per_value > 0 && in.bits_per_value <= 32)) {
    return base::InvalidArgumentError("must be in (0, 32]", "bits_per_value");
  }
  SEEDANCE_ASSIGN_OR_RETURN(HbmPreset hbm, FindHbm(in.hbm));
  double pcie = 0;
  if (in.pcie_gbytes_per_s) {
    if (!(*in.pcie_gbytes_per_s > 0))
      return base::InvalidArgumentError("must be > 0", "pcie_gbytes_per_s");
    pcie = *in.pcie_gbytes_per_s;
  } else {
    SEEDANCE_ASSIGN_OR_RETURN(pcie, PcieLineRateGbps(in.pcie));
  }
  const double access_ns = in.hbm_access_ns.value_or(hbm.access_ns);
  const double compressed = std::ceil(static_cast<double>(in.values) * in.bits_per_value / 8);
  const double decompressed = static_cast<double>(in.values) * 4;
  const double n_access = std::ceil(compressed / in.access_bytes);
  const double t_pcie_us = compressed / (pcie * 1e9) * 1e6;
  const double t_hbm_us = n_access * access_ns / 1e3;
  const double hbm_gbytes_per_s = hbm.stack_gbytes_per_s * in.stacks;
  const double t_bandwidth_us = (compressed + decompressed) / (hbm_gbytes_per_s * 1e9) * 1e6;
  const double t_serial_us = t_pcie_us + t_hbm_us;  // the KV-4 formula
  base::Report r;
  // First what to plan with: the link moves the compressed cache, then the GPU reads it and
  // writes FP32 at its memory's peak bandwidth.
  r["t_plan_us"] = t_pcie_us + t_bandwidth_us;
  r["plan_basis"] =
      "PCIe transfer of the compressed cache, then reading it and writing FP32 at the HBM's "
      "peak bandwidth";
  // Byte and access counts are whole numbers (below 2^53, so exact in a double).
  r["compressed_bytes"] = static_cast<std::int64_t>(compressed);
  r["decompressed_bytes"] = static_cast<std::int64_t>(decompressed);
  r["compression_ratio"] = decompressed / compressed;
  r["pcie_gbytes_per_s"] = pcie;
  r["pcie_source"] = in.pcie_gbytes_per_s
                         ? "measured (--pcie-gbytes-per-s)"
                         : "line rate, PCIe gen " + std::to_string(in.pcie.generation) + " x" +
                               std::to_string(in.pcie.lanes);
  r["t_pcie_us"] = t_pcie_us;
  r["hbm"] = hbm.name;
  r["hbm_access_ns"] = access_ns;
  r["n_access"] = static_cast<std::int64_t>(n_access);
  r["t_hbm_us"] = t_hbm_us;
  r["t_decomp_us"] = t_serial_us;
  r["hbm_peak_gbytes_per_s"] = hbm_gbytes_per_s;
  r["t_hbm_bandwidth_us"] = t_bandwidth_us;
  if (in.cpu_dequant_gbytes_per_s) {
    r["cpu_dequant_gbytes_per_s"] = *in.cpu_dequant_gbytes_per_s;
    r["t_cpu_dequant_us"] = decompressed / (*in.cpu_dequant_gbytes_per_s * 1e9) * 1e6;
  }
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.0f", t_serial_us / r["t_plan_us"].get<double>());
  r["notes"] = base::Report::array(
      {"t_decomp_us is the KV-4 formula, C/B_pcie + N_access x T_hbm: it serializes every " +
       std::to_string(static_cast<int>(in.access_bytes)) +
       "-byte HBM access, while HBM serves many at once across its channels and banks; "
       "it is a worst case, " +
       std::string(ratio) + "x the plan figure here"});
  return r;
}

double MeasureCpuDequant(int bits, int64_t values) {
  const int per_word = 32 / bits;
  const uint32_t mask = (1u << bits) - 1;
  std::vector<uint32_t> words(static_cast<size_t>((values + per_word - 1) / per_word));
  uint32_t x = 12345;
  for (auto& w : words) w = (x = x * 1664525u + 1013904223u);
  std::vector<float> out(static_cast<size_t>(values));
  const float lo = -1.0f, scale = 2.0f / static_cast<float>(mask);
  base::Env& env = *base::Env::Default();
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const int64_t t0 = env.NowMonotonicNanos();
    for (int64_t i = 0; i < values; ++i) {
      const uint32_t code =
          (words[static_cast<size_t>(i / per_word)] >> ((i % per_word) * bits)) & mask;
      out[static_cast<size_t>(i)] = lo + scale * static_cast<float>(code);
    }
    const double s = static_cast<double>(env.NowMonotonicNanos() - t0) / 1e9;
    best = std::min(best, s);
  }
  volatile float sink = out[static_cast<size_t>(values / 2)];
  (void)sink;
  return static_cast<double>(values) * 4 / best / 1e9;
}

base::StatusOr<base::Report> EstimateReport(const EstimateRequest& q) {
  if (q.tokens <= 0 || q.layers <= 0 || q.kv_dim <= 0 || q.group <= 0) {
    return base::InvalidArgumentError("tokens, layers, kv_dim and group must be > 0");
  }
  if (q.bits != 2 && q.bits != 4 && q.bits != 5 && q.bits != 6 && q.bits != 8) {
    return base::InvalidArgumentError(
        "expected a code width of 2, 4, 5, 6 or 8, got " + std::to_string(q.bits), "bits");
  }
  EstimateInput in;
  in.values = q.tokens * q.layers * q.kv_dim * 2;
  in.bits_per_value = PackedBitsPerValue(q.bits, q.group);
  in.pcie = {q.pcie_gen, q.pcie_lanes};
  if (q.pcie_gbytes_per_s > 0) in.pcie_gbytes_per_s = q.pcie_gbytes_per_s;
  in.hbm = q.hbm;
  in.stacks = q.hbm_stacks;
  if (q.hbm_ns > 0) in.hbm_access_ns = q.hbm_ns;
  if (q.measure_cpu) in.cpu_dequant_gbytes_per_s = MeasureCpuDequant(q.bits, 1 << 24);
  SEEDANCE_ASSIGN_OR_RETURN(base::Report r, EstimateDecompression(in));
  base::Report notes = r["notes"];  // kept last
  r.erase("notes");
  r["bits_per_value"] = in.bits_per_value;
  r["notes"] = std::move(notes);
  return r;
}

}  // namespace seedance::kv
