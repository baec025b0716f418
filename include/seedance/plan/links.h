// The links a training step's collectives run over, per GPU and per direction, and the
// planner's hardware model (the kernel curves and the fitted coefficients). Every default names its
// source; a job spec overrides the bandwidths (hardware.interconnect.*_gbytes_per_s) with measured
// figures.
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
#include "seedance/plan/coefficients.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/kernel_anchors.h"

namespace seedance::plan {

struct Links {
  double intra_node_gbytes_per_s = 0;  // GPU to GPU inside a node
  double inter_node_gbytes_per_s = 0;  // GPU to GPU across nodes (its share of the node's NICs)
  std::string intra_source, inter_source;
};

// The spec's overrides, else the defaults above for its GPU and link names.
Links ResolveLinks(const HardwareSpec& hardware, const cost::GpuSpec& gpu);

// What the time model runs on: the kernel curves and the fitted coefficients, the public fit
// compiled into the library unless a calibration (`optimize --calibrate`) replaced them.
struct HardwareModel {
  KernelCurves curves = BuiltInFit().curves;
  ModelCoefficients coefficients = BuiltInFit().coefficients;
};

base::Report LinksToReport(const Links& links);

}  // namespace seedance::plan
