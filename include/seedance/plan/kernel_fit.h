// The kernel curves of kernel_anchors.h fitted to the kernel-level rows of
// bench/plan/kernel_refs.csv (feature CLI-1):
//
//   GEMM       gemm_half_dim and gemm_fixed_s: least squares on log time over the per-shape
//              cuBLASLt rows (group azure-cublaslt), each row's GPU at its MAMF anchor
//   attention  attention_half_seq and attention_half_dim: least squares on log throughput over
//              the FlashAttention papers' causal rows, each kernel and pass relative to its own
//              16k-token, head-dim-128 figure
//   NVLink     latency and bus-bandwidth share per GPU generation: least squares on log time over
//              the single-node all-reduce rows of 1 MiB and more (NCCL's default algorithm)
//   network    latency from the smallest multi-node all-reduce (CoreWeave's 128 A100s over
//              InfiniBand) and the share from the largest one whose per-node bandwidth the source
//              states (AWS p5en's 3,200 Gb/s EFA), named rows, not fitted
//
// Each fit is a grid search refined around its best point (two or fewer dimensions each).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/plan/kernel_anchors.h"

namespace seedance::plan {

struct KernelRow {
  std::string kind, id, group, gpu, precision, kernel, pass, link, op;
  bool causal = false;
  double m = 0, n = 0, k = 0, head_dim = 0, sequence_length = 0, gpus_per_node = 0, nodes = 0;
  double message_bytes = 0, tflops = 0, datasheet_tflops = 0, busbw = 0;
};

// Parses bench/plan/kernel_refs.csv (its header names the columns); errors name file:line.
base::StatusOr<std::vector<KernelRow>> ParseKernelTable(std::string_view csv,
                                                        const std::string& file);

struct KernelFit {
  KernelCurves curves;
  base::Report report;  // each curve's parameters, the rows behind it and their rms log error
};

base::StatusOr<KernelFit> FitKernelCurves(const std::vector<KernelRow>& rows);

}  // namespace seedance::plan
