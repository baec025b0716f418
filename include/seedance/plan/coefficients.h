// The time model's fitted coefficients (feature CLI-1): few, each a physical quantity, each
// fitted by `build/bench/published_runs --fit` to the published runs of
// bench/plan/published_runs.csv with its standard error (docs/design/plan.md, "Calibration").
//
// Every coefficient multiplies or adds to an anchor that comes from a kernel-level measurement
// (kernel_anchors.h), so 1 (or the prior below) means "as the kernel benchmarks measured it":
//
//   gemm          sustained share of the GPU's maximum achievable matmul FLOPS (MAMF) that a
//                 training step's bf16/fp16 GEMMs reach (clocks under sustained power, shapes)
//   fp8_gemm      the same for FP8 GEMMs (scaling, amax and transposes cost beyond the GEMM)
//   attention     share of the fused attention kernel's published throughput reached in a step
//   memory_bound  achieved share of the HBM bandwidth anchor for the elementwise kernels
//   overlap_loss  share of the communication time overlapped with compute that still costs
//                 step time (the two contend for SMs and HBM)
//   tp_overlap    share of the tensor-parallel collectives that Transformer Engine's
//                 userbuffers overlap with the GEMMs (frameworks with the trait only)
//   kernel_gap_s  seconds between two kernels of a step (launch, tail, synchronisation)
//   step_fixed_s  seconds per optimizer step outside the model (data, logging, the optimizer's
//                 launches, the loss's reduction)
//   network       achieved share of the nccl-tests bus bandwidth anchor across nodes
//   bubble        pipeline bubble and its stalls, as a multiple of 1F1B's (p - 1)/v
//   cp_overlap    share of context parallelism's ring exchange hidden behind the attention
//
// A coefficient is fitted in log space (positive) with a Gaussian prior on its log around the
// anchor (the prior keeps a coefficient no row informs at its anchor, and `--calibrate` uses
// the public fit as the prior of a user's refit).
//
// Thread safety: constants and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/plan/framework.h"
#include "seedance/plan/kernel_anchors.h"

namespace seedance::plan {

enum class Coef : size_t {
  kGemm,
  kFp8Gemm,
  kAttention,
  kMemoryBound,
  kOverlapLoss,
  kTpOverlap,
  kKernelGap,
  kStepFixed,
  kNetwork,
  kBubble,
  kCpOverlap,
  kCount
};
inline constexpr size_t kCoefCount = static_cast<size_t>(Coef::kCount);

struct CoefficientInfo {
  std::string_view name;
  std::string_view meaning;
  double prior;         // the anchor: the value before any run is seen
  double prior_log_sd;  // the prior's spread on log(value)
  double min, max;      // bounds: shares are at most 1, a gap between kernels at least 0.1 us
};

// The table above, in Coef order.
const CoefficientInfo& InfoOf(Coef c);
std::string_view CoefName(Coef c);
base::StatusOr<Coef> ParseCoef(std::string_view name, std::string_view where);

struct ModelCoefficients {
  std::array<double, kCoefCount> value{};
  std::array<double, kCoefCount> standard_error{};  // of the value; 0: not fitted
  double operator[](Coef c) const { return value[static_cast<size_t>(c)]; }
  double& operator[](Coef c) { return value[static_cast<size_t>(c)]; }
  double se(Coef c) const { return standard_error[static_cast<size_t>(c)]; }
};

// Every coefficient at its prior (no run seen).
ModelCoefficients PriorCoefficients();

// How far predictions fall from measurements, from the leave-one-source-out cross-validation of
// the public fit: quantiles of log(published / predicted) per regime, which make the 90%
// prediction intervals (intervals.h).
enum class Regime : size_t {
  kSingleNodeData,   // one node, pure data parallelism (DDP, ZeRO, FSDP)
  kSingleNodeModel,  // one node, tensor, pipeline or context parallelism
  kMultiNodeData,    // several nodes, pure data parallelism
  kMultiNodeModel,   // several nodes, tensor, pipeline or context parallelism
  kCount
};
inline constexpr size_t kRegimeCount = static_cast<size_t>(Regime::kCount);
std::string_view RegimeName(Regime r);

struct ResidualQuantiles {
  double q05 = 0, q95 = 0;  // of log(published / predicted)
  int rows = 0;             // residuals behind the quantiles (0: pooled from every regime)
  // The same quantiles with their distance apart times `w`, about their middle.
  ResidualQuantiles Widened(double w) const;
};

struct PublicFit {
  KernelCurves curves;  // fitted to the kernel rows
  ModelCoefficients coefficients;
  std::array<ResidualQuantiles, kRegimeCount> step_time;  // per regime
  ResidualQuantiles step_time_all;                        // every regime pooled
  // The factor the step-time quantiles are widened by about their middle so that the runs of a
  // source left out of them fall inside on 90% of its runs, over the sources (calibration.h,
  // NewSourceWidening): a user's cluster is a source the fit has not seen.
  double step_time_widening = 1;
  // log(published / predicted) of one layout against another of the same job and source: the
  // spread of a predicted saving.
  ResidualQuantiles paired;
  ResidualQuantiles memory;  // log(published / predicted) of memory per GPU
  // The calibrated region: what the public rows span.
  double max_sequence_length = 0;
  int64_t max_gpus = 0;
  unsigned frameworks_with_rows = 0;  // bit 1 << Framework
  // The frameworks of the rows with a measured memory figure: `memory` is their error; another
  // framework's memory interval is centred on the estimate (intervals.h).
  unsigned memory_frameworks_with_rows = 0;
  // Per framework (Framework order), what its runs' measured memory shows beyond the memory
  // model's estimate (tensors, fragmentation margin, runtime reserve), as a share of the
  // estimate: exp(median of log(published / estimated)) - 1 over the framework's rows with a
  // memory figure, and that median's standard error (as a share); 0 without rows. For DeepSpeed
  // the rows are BLOOM's nvidia-smi readings, which hold what the model has no term for: the
  // CUDA context beyond the reserve, the communicators' buffers, the caching allocator's
  // cached blocks (docs/design/plan.md, "Memory").
  std::array<double, kFrameworkCount> memory_overhead{};
  std::array<double, kFrameworkCount> memory_overhead_se{};
};

// The public fit compiled into the library (src/plan/public_fit.cc, written by
// `build/bench/published_runs --fit --write src/plan/public_fit.cc`).
const PublicFit& BuiltInFit();

base::Report CoefficientsToReport(const ModelCoefficients& c);

}  // namespace seedance::plan
