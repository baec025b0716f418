#include "seedance/plan/kernel_anchors.h"

#include <array>

namespace seedance::plan {
namespace {

using base::NumericFormat;

struct Mamf {
  std::string_view gpu;  // catalog id prefix
  NumericFormat precision;
  double fraction;  // MAMF / dense datasheet peak
  std::string_view row;
};

// Stas Bekman, "Machine Learning Engineering", compute/accelerator/README.md, the maximum
// achievable matmul FLOPS table (mamf-finder v2: the mean of 100 iterations with the L2 cache
// flushed, best shape): rows of bench/plan/kernel_refs.csv.
constexpr std::array<Mamf, 5> kMamf = {{
    {"A100", NumericFormat::kBf16, 271.2 / 312, "mamf-16c2d5a-a100-sxm-bf16-v2-mean"},
    {"H100", NumericFormat::kBf16, 794.5 / 989, "mamf-37acbf2-h100-sxm-bf16-v2-mean"},
    {"H100", NumericFormat::kFp8, 1402.6 / 1979, "mamf-37acbf2-h100-sxm-fp8-v2-mean"},
    // The book's H100 bf16 row notes "H200 is the same" (not a measurement of its own).
    {"H200", NumericFormat::kBf16, 794.5 / 989, "mamf-da5eec5-h200-bf16-v2-mean-same-as-h100"},
    {"H200", NumericFormat::kFp8, 1453.4 / 1979, "mamf-da5eec5-h200-fp8-v2-mean"},
}};

const Mamf* FindMamf(const cost::GpuSpec& gpu, NumericFormat precision) {
  if (precision == NumericFormat::kFp16) precision = NumericFormat::kBf16;  // same tensor cores
  for (const Mamf& m : kMamf) {
    if (gpu.id.starts_with(m.gpu) && m.precision == precision) return &m;
  }
  return nullptr;
}

}  // namespace

GpuFamily FamilyOf(const cost::GpuSpec& gpu) {
  if (gpu.id == "A100-40GB" || gpu.id == "A100-80GB") return GpuFamily::kAmpere;
  if (gpu.id == "H100-SXM" || gpu.id == "H200") return GpuFamily::kHopper;
  return GpuFamily::kUnknown;
}

std::string_view AttentionKernelName(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::kFlash2:
      return "FlashAttention-2";
    case AttentionKernel::kFlash3:
      return "FlashAttention-3";
    case AttentionKernel::kCudnn:
      return "cuDNN fused attention";
    case AttentionKernel::kEager:
      return "eager (materialized scores)";
  }
  return "";
}

double MamfFraction(const cost::GpuSpec& gpu, NumericFormat precision) {
  const Mamf* m = FindMamf(gpu, precision);
  return m ? m->fraction : 0;
}

std::string_view MamfSource(const cost::GpuSpec& gpu, NumericFormat precision) {
  const Mamf* m = FindMamf(gpu, precision);
  return m ? m->row : "";
}

AttentionPeak AttentionAnchor(GpuFamily family, AttentionKernel kernel) {
  // FlashAttention-2 paper, figure 4 (A100) and 7 (H100), forward + backward, causal, head dim
  // 128, 16k tokens; FlashAttention-3 paper, figure 5 (H100 forward, FP16, causal, head dim 128,
  // 16k). Where only forward + backward is printed, backward is derived from it and the forward
  // figure, 3.5 / fwd_bwd = 1 / fwd + 2.5 / bwd; where only forward is printed (cuDNN, FA3),
  // backward takes FlashAttention-2's backward/forward ratio on the same GPU (325 / 335).
  if (family == GpuFamily::kAmpere) {
    if (kernel == AttentionKernel::kEager) return {};
    return {189, 189,
            "fa2paper-fig4 A100 fwd_bwd causal hd128 16k: 189 TFLOP/s for both passes (no "
            "separate forward figure)"};
  }
  if (family == GpuFamily::kHopper) {
    switch (kernel) {
      case AttentionKernel::kFlash2:
        return {335, 325,
                "fa3paper-fig5 H100 FA2 fwd 335; fa2paper-fig7 fwd_bwd 328 gives bwd 325"};
      case AttentionKernel::kCudnn:
        return {539, 539.0 * 325 / 335, "fa3paper-fig5 H100 cuDNN fwd 539; bwd at FA2's ratio"};
      case AttentionKernel::kFlash3:
        return {616, 616.0 * 325 / 335, "fa3paper-fig5 H100 FA3 fwd 616; bwd at FA2's ratio"};
      case AttentionKernel::kEager:
        return {};
    }
  }
  return {};
}

bool Anchored(const cost::GpuSpec& gpu, NumericFormat precision) {
  return FindMamf(gpu, precision) != nullptr;
}

}  // namespace seedance::plan
