// Time of one training step for one layout (feature CLI-1's time half).
//
// Per layer and micro-batch (b sequences of s tokens; t TP degree), on the GPU's share:
//   GEMMs  QKV (sb x h x (h + 2kv)/t), attention output (sb x h/t x h), MLP in (sb x h x k f/t,
//          k = 2 for SwiGLU's gate and up, 1 for GELU), MLP out (sb x f/t x h); the attention core
//          (causal: half of 4 b s² h/t FLOPs forward). Each takes
//            max(2MNK / (peak x gemm_peak_fraction), bytes moved / (HBM x bandwidth_fraction))
//            + kernel_overhead
//          (a roofline with a launch cost: small and thin shapes fall below the peak fraction);
//          the backward pass is twice the forward.
//   Elementwise work (norms, residual adds, activation, rotary) is bandwidth-bound.
//   TP: two all-reduces forward and two backward of e sbh bytes (all-gather + reduce-scatter with
//          sequence parallelism: the same volume), ring time 2(t-1)/t x bytes / link, exposed.
//   Recomputation adds the forward of what was dropped (and, full, its TP collectives).
// The last stage adds the LM head GEMM and the fp32 cross-entropy.
//
// Per step, m = micro-batches per pipeline: m x T(micro-batch) + the 1F1B bubble (p - 1)/v x
// T(micro-batch) + point-to-point activation transfers + the exposed data-parallel traffic + the
// optimizer step (bandwidth-bound over the GPU's shard of the states).
// With optimizer offload the step runs on the CPU instead, streaming the shard's master weights
// and states (read and written), its fp32 gradients and the new weights through the node's
// host memory bandwidth shared by its GPUs; the gradient shard goes to the host over PCIe during
// the last micro-batch's backward (the part longer than it is exposed) and the updated weight
// shard comes back before the next step (exposed).
// Data parallelism (ring, per-GPU link: NVLink when the group fits in a node, else the GPU's
// share of the network): ZeRO 0/1 one all-reduce of the gradients per step (or, compressed, the
// hook's exchange of grad_compression.h), overlapped with the last micro-batch's backward; ZeRO 2 a
// reduce-scatter per micro-batch (overlapped with its backward) and an all-gather of the weights
// after the step; ZeRO 3 two all-gathers of the weights and a reduce-scatter of the gradients per
// micro-batch, overlapped with its compute.
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
  double compute_s = 0;     // forward, backward and recompute on this GPU, all micro-batches
  double recompute_s = 0;   // the recompute part of compute_s
  double tp_comm_s = 0;     // tensor-parallel collectives, all micro-batches
  double pp_bubble_s = 0;   // the pipeline's fill and drain
  double pp_p2p_s = 0;      // activations sent between stages
  double dp_comm_s = 0;     // data-parallel traffic before overlap
  double dp_exposed_s = 0;  // the part not hidden behind compute
  double optimizer_s = 0;   // on the GPU, or on the CPU with optimizer offload
  double offload_s = 0;     // offload's exposed PCIe transfers
  double step_s = 0;
  double model_flops_per_step = 0;     // whole job
  double hardware_flops_per_step = 0;  // whole job, recompute included
};

StepTime EstimateStepTime(const JobSpec& spec, const ModelFigures& figures, const ParallelConfig& c,
                          const cost::GpuSpec& gpu, const Links& links,
                          const HardwareModel& hw = {});

base::Report StepTimeToReport(const StepTime& t);

// Forward seconds of one layer's parts for one micro-batch, as recomputation repeats them when
// each part's module is checkpointed whole (seedance.torch.apply_recompute_plan): the attention
// block (QKV GEMM, attention core, output GEMM), the MLP (both GEMMs and the activation), the
// norms.
LayerPartSeconds LayerPartForwardSeconds(const JobSpec& spec, const ParallelConfig& c,
                                         const cost::GpuSpec& gpu, const HardwareModel& hw = {});

}  // namespace seedance::plan
