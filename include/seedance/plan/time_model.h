// Time of one training step for one layout (feature CLI-1's time half), from the kernel anchors
// and curves of kernel_anchors.h and the fitted coefficients of coefficients.h
// (docs/design/plan.md, "The time model", has every formula and its source).
//
// Per layer and micro-batch (b sequences of s tokens, T = b s / cp on this GPU; t TP degree):
//   GEMMs    QKV, attention output, MLP in (gate and up for SwiGLU), MLP out, each
//            max(2MNK / (peak x MAMF fraction x gemm x shape factor), bytes / HBM) + fixed cost;
//            the backward pass is twice the forward. Eager frameworks run q, k, v and gate, up
//            as separate GEMMs.
//   attention the fused kernel (FlashAttention-2 / cuDNN per framework and GPU), causal:
//            2 b (s/cp) s h/t FLOPs forward and 2.5 times that backward, at the kernel's
//            published throughput x attention x (s/cp) / (s/cp + attention_half_seq); eager
//            attention as two batched GEMMs and the softmax's passes over the s x s scores.
//   elementwise norms, residual adds, rotary, the activation, FP8 casts: bytes at the HBM
//            anchor x memory_bound; fused (Megatron-Core) or eager (PyTorch) byte counts; FP8
//            casts Transformer Engine's or torchao's (TorchaoFloat8Casts).
//   TP       two all-reduces forward and two backward of e T h bytes over NVLink (less the
//            tp_overlap share where the framework overlaps them); CP the ring exchange of K and V,
//            less what the attention hides.
//   kernels  kernel_gap_s between consecutive kernels.
// Recomputation adds the forward of what was dropped: full (all layers or recompute_layers of
// them), selective (the attention core), op-selective (every other GEMM and the elementwise
// kernels). The last stage adds the LM head and the cross-entropy.
//
// Per step, m micro-batches per pipeline: m x T(slowest stage) + the 1F1B bubble
// (p - 1)/v x T x bubble + point-to-point transfers (fill and drain; a tied embedding's gradient
// all-reduced between the end stages) + the exposed data-parallel
// traffic (ZeRO 0 all-reduce, ZeRO 1 reduce-scatter + all-gather, ZeRO 2, ZeRO 3 per
// micro-batch; each hidden behind the window of compute that framework overlaps it with, less
// overlap_loss; DeepSpeed's pipeline engine hides none of it, and waits on every micro-batch's
// transfers, framework.h) + the optimizer step over the GPU's shard + step_fixed_s. Collectives:
// latency + bytes on the wire / (busbw fraction x link), NVLink inside a node, else the network
// shared by the group's GPUs on a node (kernel_anchors.h).
//
// FLOPs: model FLOPs are the PaLM convention (6 N + 12 L h s per token, full attention, no
// recomputation) — MFU; hardware FLOPs add the recomputed forward — HFU.
//
// Thread safety: pure functions.
#pragma once

#include "seedance/base/report.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/links.h"
#include "seedance/plan/memory_model.h"
#include "seedance/plan/model_figures.h"
#include "seedance/plan/parallelism.h"

namespace seedance::plan {

struct StepTime {
  // Forward, backward and recompute on this GPU, all micro-batches, with the framework's passes
  // over the parameters outside the GEMMs (FrameworkTraits::parameter_passes).
  double compute_s = 0;
  double recompute_s = 0;   // the recompute part of compute_s
  double tp_comm_s = 0;     // tensor- and context-parallel collectives, all micro-batches
  double pp_bubble_s = 0;   // the pipeline's fill and drain
  double pp_p2p_s = 0;      // activations sent between stages
  double dp_comm_s = 0;     // data-parallel traffic before overlap
  double dp_exposed_s = 0;  // the part not hidden behind compute
  double optimizer_s = 0;   // on the GPU, or on the CPU with optimizer offload
  double offload_s = 0;     // offload's exposed PCIe transfers
  double fixed_s = 0;       // per step outside the model (step_fixed_s)
  double step_s = 0;
  double model_flops_per_step = 0;     // whole job
  double hardware_flops_per_step = 0;  // whole job, recompute included
};

StepTime EstimateStepTime(const JobSpec& spec, const ModelFigures& figures, const ParallelConfig& c,
                          const cost::GpuSpec& gpu, const Links& links,
                          const HardwareModel& hw = {});

base::Report StepTimeToReport(const StepTime& t);

// What torchao's Float8Linear (torchtitan's float8 converter: tensorwise scaling, compiled) moves
// and launches casting one layer's linears to fp8, for one micro-batch on one GPU, at the counts
// of torchao's roofline model: an activation cast (each linear's input forward, its output
// gradient backward) 6 bytes an element in three kernels; a weight 5 bytes forward in three, 3
// backward in one. Under tensor parallelism torchtitan casts the attention's and the MLP's input
// once each on the sequence shard before the fp8 all-gather (PrepareFloat8ModuleInput), and the
// row-parallel projections' output gradients on the shard too.
struct Fp8Casts {
  double forward_bytes = 0, backward_bytes = 0;
  double forward_kernels = 0, backward_kernels = 0;
};
Fp8Casts TorchaoFloat8Casts(const ModelSpec& model, const ParallelConfig& c);

// Forward seconds of one layer's parts for one micro-batch, as recomputation repeats them when
// each part's module is checkpointed whole (seedance.torch.apply_recompute_plan): the attention
// block (QKV GEMM, attention core, output GEMM), the MLP (both GEMMs and the activation), the
// norms.
LayerPartSeconds LayerPartForwardSeconds(const JobSpec& spec, const ParallelConfig& c,
                                         const cost::GpuSpec& gpu, const HardwareModel& hw = {});

}  // namespace seedance::plan
