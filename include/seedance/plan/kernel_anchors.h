// Kernel-level anchors of the time model (feature CLI-1): what a GEMM, a fused attention kernel,
// a streaming kernel and a collective reach on a GPU, from published kernel benchmarks
// (bench/plan/kernel_refs.csv names the rows), and the curves over shape that
// `build/bench/published_runs --fit` fits to those rows.
//
//   GEMM       MAMF / datasheet dense peak per GPU and precision (Stas Bekman's "Machine
//              Learning Engineering", the maximum-achievable-matmul table), times a shape factor
//              g(M) g(N) g(K) / g(ref)^3, g(x) = x / (x + gemm_half_dim), fitted to cuBLASLt's
//              per-shape figures; plus a fixed gemm_fixed_s per kernel
//   attention  the fused kernel's published forward and backward TFLOP/s per GPU and kernel
//              (FlashAttention-2 and -3 papers), times s / (s + attention_half_seq) for the
//              key length s
//   streaming  HBM bandwidth times stream_fraction
//   collective time = latency + bytes on the wire / (busbw_fraction x link bandwidth), per link
//              class, fitted to nccl-tests' bus bandwidth over message sizes
//
// A GPU without rows (no anchor) runs at its datasheet roofline (fraction 1), and the plan says
// so (`Anchored`).
//
// Thread safety: constants and pure functions.
#pragma once

#include <string>
#include <string_view>

#include "seedance/base/numeric_format.h"
#include "seedance/cost/gpu_catalog.h"

namespace seedance::plan {

// The GPU generations the calibration set has rows for.
enum class GpuFamily { kAmpere, kHopper, kUnknown };
// A100-40GB and A100-80GB: Ampere; H100-SXM and H200: Hopper; any other catalog id: unknown.
GpuFamily FamilyOf(const cost::GpuSpec& gpu);

// The fused attention kernel a framework runs on a GPU.
enum class AttentionKernel { kFlash2, kFlash3, kCudnn, kEager };
std::string_view AttentionKernelName(AttentionKernel k);

struct LinkCurve {
  double latency_s = 0;       // one collective call
  double busbw_fraction = 1;  // of the link's per-GPU bandwidth, for large messages
};

// The fitted curves (written into src/plan/public_fit.cc by the fit).
struct KernelCurves {
  double gemm_half_dim = 128;       // g(x) = x / (x + gemm_half_dim)
  double gemm_fixed_s = 4e-6;       // per GEMM kernel
  double attention_half_seq = 512;  // key length at which the kernel runs at half its peak
  double attention_half_dim = 24;   // head dimension at which it runs at half its peak
  double stream_fraction = 0.85;    // of HBM bandwidth (an assumption: no row measures it)
  LinkCurve nvlink_ampere, nvlink_hopper, network;
};

// MAMF / dense datasheet peak of `precision` on `gpu` (fp16 takes bf16's figure); 0 when no row.
double MamfFraction(const cost::GpuSpec& gpu, base::NumericFormat precision);
// The id of that anchor's row in bench/plan/kernel_refs.csv ("" when none).
std::string_view MamfSource(const cost::GpuSpec& gpu, base::NumericFormat precision);

// Published fused-attention throughput of a kernel on a GPU family (TFLOP/s, causal, head dim
// 128, 16k tokens: the longest the papers measured): forward and backward; 0 when no row.
struct AttentionPeak {
  double forward_tflops = 0, backward_tflops = 0;
  std::string_view source;  // the rows, and how backward was derived where only fwd+bwd is printed
};
AttentionPeak AttentionAnchor(GpuFamily family, AttentionKernel kernel);
// The length of that anchor (tokens).
inline constexpr double kAttentionAnchorLength = 16384;

// Whether the time model has kernel rows for this GPU and precision (else it is the roofline).
bool Anchored(const cost::GpuSpec& gpu, base::NumericFormat precision);

}  // namespace seedance::plan
