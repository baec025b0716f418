// The links a training step's collectives run over, per GPU and per direction, and the
// constants of the planner's hardware model. Every default names its source; a job spec
// overrides the bandwidths (hardware.interconnect.*_gbytes_per_s) with measured figures.
//
// Defaults (GB/s per GPU, one direction):
//   nvlink      V100 150, A100 300, H100/H200 450: NVIDIA's datasheets give the bidirectional
//               totals 300, 600 and 900 GB/s per GPU
//   xgmi        MI300X 448: AMD's datasheet, 7 Infinity Fabric links x 64 GB/s to the peers
//   pcie        31.5: PCIe 4.0 x16 line rate after 128b/130b encoding
//   infiniband  50: one 400 Gb/s (NDR) adapter per GPU, as in DGX H100 and AWS p5
//   roce        50: the same rate over Ethernet (AWS p5's EFA, 3,200 Gb/s per 8 GPUs)
//   ethernet    12.5 per node (one 100 Gb/s port), shared by its GPUs
//
// Thread safety: plain values and pure functions.
#pragma once

#include <string>

#include "seedance/base/report.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/job_spec.h"

namespace seedance::plan {

struct Links {
  double intra_node_gbytes_per_s = 0;  // GPU to GPU inside a node
  double inter_node_gbytes_per_s = 0;  // GPU to GPU across nodes (its share of the node's NICs)
  std::string intra_source, inter_source;
};

// The spec's overrides, else the defaults above for its GPU and link names.
Links ResolveLinks(const HardwareSpec& hardware, const cost::GpuSpec& gpu);

// Constants of the time model, named so that each is one place to change (docs/design/plan.md
// gives their sources). They are assumptions until calibrated by measurement: a GPU benchmark of
// the GEMM shapes and collectives (bench/gpu) or the published-runs benchmark.
struct HardwareModel {
  // Share of the dense datasheet peak a large GEMM reaches (cuBLAS/cuDNN on a big square shape).
  double gemm_peak_fraction = 0.75;
  // Share of the datasheet HBM bandwidth a streaming kernel reaches.
  double memory_bandwidth_fraction = 0.85;
  // Fixed cost of one kernel launch and its tail (s).
  double kernel_overhead_s = 4e-6;
  // Share of the link bandwidth a ring collective's bus bandwidth reaches (NCCL).
  double collective_fraction = 0.8;
  // Fixed latency of one collective call (s).
  double collective_latency_s = 20e-6;
};

base::Report LinksToReport(const Links& links);

}  // namespace seedance::plan
