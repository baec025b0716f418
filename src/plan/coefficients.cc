#include "seedance/plan/coefficients.h"

#include <string>

namespace seedance::plan {
namespace {

// The priors are the anchors themselves (1: as the kernel benchmark measured) or, for the
// shares and seconds no kernel row measures, a value a reader can check against the design
// notes; the spreads are wide (a factor of e^0.3 to e^1 at one standard deviation) so that the
// published runs, not the prior, set every coefficient they inform.
constexpr std::array<CoefficientInfo, kCoefCount> kInfo = {{
    {"gemm", "sustained share of the MAMF anchor reached by a step's 16-bit GEMMs", 1.0, 0.3, 0.01,
     1.25},
    {"fp8_gemm", "sustained share of the FP8 MAMF anchor reached by a step's FP8 GEMMs", 1.0, 0.3,
     0.01, 1.4},
    {"attention", "share of the fused attention kernel's published throughput reached", 1.0, 0.3,
     0.01, 1.5},
    {"memory_bound", "share of the streaming anchor reached by the elementwise kernels", 1.0, 0.3,
     0.01, 1.18},
    {"overlap_loss", "share of overlapped communication time that still costs step time", 0.2, 0.7,
     0.01, 1.0},
    {"tp_overlap", "share of tensor-parallel collectives hidden by Transformer Engine", 0.5, 0.7,
     0.01, 1.0},
    {"kernel_gap_s", "seconds between consecutive kernels", 4e-6, 0.7, 1e-7, 1e-3},
    {"step_fixed_s", "seconds per optimizer step outside the model", 0.05, 1.0, 1e-4, 10.0},
    {"network", "share of the nccl-tests bus bandwidth reached across nodes in training", 1.0, 0.3,
     0.01, 1.5},
    {"bubble",
     "pipeline bubble as a multiple of the schedule's idle micro-batch times ((p - 1)/v; more "
     "with fewer micro-batches than stages)",
     1.0, 0.3, 0.5, 3.0},
    {"cp_overlap", "share of context parallelism's ring exchange hidden by the attention", 0.5, 0.7,
     0.01, 1.0},
}};

constexpr std::array<std::string_view, kRegimeCount> kRegimeNames = {
    "single-node data-parallel", "single-node model-parallel", "multi-node data-parallel",
    "multi-node model-parallel"};

}  // namespace

const CoefficientInfo& InfoOf(Coef c) { return kInfo[static_cast<size_t>(c)]; }

std::string_view CoefName(Coef c) { return InfoOf(c).name; }

base::StatusOr<Coef> ParseCoef(std::string_view name, std::string_view where) {
  std::string known;
  for (size_t i = 0; i < kCoefCount; ++i) {
    if (kInfo[i].name == name) return static_cast<Coef>(i);
    known += (i ? ", " : "") + std::string(kInfo[i].name);
  }
  return base::InvalidArgumentError(
      "unknown coefficient '" + std::string(name) + "' (expected one of: " + known + ")",
      std::string(where));
}

ModelCoefficients PriorCoefficients() {
  ModelCoefficients c;
  for (size_t i = 0; i < kCoefCount; ++i) c.value[i] = kInfo[i].prior;
  return c;
}

std::string_view RegimeName(Regime r) { return kRegimeNames[static_cast<size_t>(r)]; }

ResidualQuantiles ResidualQuantiles::Widened(double w) const {
  const double mid = (q05 + q95) / 2, half = (q95 - q05) / 2 * w;
  return {.q05 = mid - half, .q95 = mid + half, .rows = rows};
}

base::Report CoefficientsToReport(const ModelCoefficients& c) {
  base::Report r = base::Report::object();
  for (size_t i = 0; i < kCoefCount; ++i) {
    base::Report one = base::Report::object();
    one["value"] = c.value[i];
    one["standard_error"] = c.standard_error[i];
    one["meaning"] = std::string(kInfo[i].meaning);
    r[std::string(kInfo[i].name)] = one;
  }
  return r;
}

}  // namespace seedance::plan
