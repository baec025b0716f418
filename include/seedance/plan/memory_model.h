// Memory of one GPU during a training step, for one layout (feature MEM-5's model half).
//
// Model states (bytes per parameter, the ZeRO paper's accounting; Ψ = parameters on this GPU
// after tensor and pipeline parallelism, d = data-parallel size):
//   w weights (2 in bf16/fp16/fp8 training — FP8 keeps 16-bit weights and casts for the
//   GEMMs —, 4 in fp32/tf32), g gradients (= w), m fp32 master weights (4 with a 16-bit w),
//   o optimizer states (adam/adamw 8, sgd-momentum and lion 4, sgd 0; half in bf16);
//   K = w + g + m + o.
//   ZeRO 0: Ψ K    1: Ψ (w + g) + Ψ (m + o) / d    2: Ψ w + Ψ (g + m + o) / d    3: Ψ K / d
// so a 7.5B model on 64 GPUs in mixed-precision Adam holds 120, 31.4, 16.6 and 1.9 GB.
//
// Activations of one layer and one micro-batch (s sequence, b micro-batch, h hidden, a heads,
// kv = kv_heads x head_dim, f ffn size, t TP degree, e bytes per activation), after Korthikanti
// et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models", section 4),
// generalised to GQA, SwiGLU and fused attention:
//   norm inputs and outputs, 4 e sbh; Q e sbh/t; K and V 2 e sb kv/t; attention output e sbh/t;
//   MLP: GELU 2 e sbf/t, SwiGLU 3 e sbf/t (gate, up, product); GPT's dropout masks 2 sbh (1 byte);
//   eager attention adds the softmax e a s²b/t (with dropout also its mask and output:
//   (2e + 1) a s²b/t more); fused attention keeps its log-sum-exp, 4 a s b/t.
// Without sequence parallelism the norm terms and the masks are not divided by t (10 sbh + 24
// sbh/t + 5 a s²b/t for GPT-3, the paper's equation 2); with it everything is. Selective
// recomputation drops the s² terms; full recomputation keeps each layer's input (e sbh, /t with
// SP) plus one layer's activations while it is recomputed.
//
// Context parallelism divides the tokens of each sequence by cp (the s x s terms become
// (s/cp) x s). Op-selective recomputation (torchtitan's per-operator policy) keeps the layer's
// input, the attention kernel's output and state, and every other matmul's output (q, v, the
// MLP's first input projection, its output); partial full recomputation (recompute_layers N)
// keeps only the input of N layers of a stage and everything of the others. FP8 training with
// Transformer Engine keeps the four GEMMs' saved inputs in 1 byte.
//
// Pipeline: stage i holds the activations of min(p - i, m) micro-batches of its layers (1F1B),
// times 1 + (p - 1)/(p v) when interleaved; the last stage holds one micro-batch and the logits
// (e sbV/t, plus 4 sbV/t for the fp32 cross-entropy). The embedding sits on the first stage, the
// LM head (or, tied, a copy of the embedding) on the last; end stages may hold other layer
// counts (first_stage_layers, last_stage_layers). The peak is the largest of the first, second
// and last stages (the middle stages hold the same layers with fewer micro-batches in flight).
//
// Optimizer offload (ZeRO-Offload, DeepSpeed's offload_optimizer): the GPU keeps w and g; its
// shard of the fp32 master weights and optimizer states, Ψ (m + o) / d, and an fp32 copy of its
// gradient shard, 4 Ψ / d, live in host memory — gpus_per_node shards per node, which must fit
// the node's hardware.host.memory_gbytes.
//
// Temporaries: none at ZeRO 0-2 under DDP and Megatron (their buckets are views of the
// gradients); DeepSpeed's contiguous reduce bucket of 5e8 elements (DeepSpeedContiguousBucket);
// FSDP's SHARD_GRAD_OP one layer's and the root's unsharded gradients; at ZeRO 3 two gathered
// layers' weights, one layer's unsharded gradients and the root unit. DeepSpeed's pipeline
// engine adds its stage-output partitions, the rebuilt output and gradient of a backward pass
// and its receive buffers (memory_model.cc, DeepSpeedPipeBytes). Then a fragmentation margin on
// everything the caching allocator holds, and a reserve for the CUDA context and libraries.
// Last, for a framework whose runs have measured memory figures, the share by which they
// exceed all of the above (fitted: PublicFit::memory_overhead).
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "seedance/base/report.h"
#include "seedance/plan/framework.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/model_figures.h"
#include "seedance/plan/parallelism.h"
#include "seedance/plan/recompute.h"

namespace seedance::plan {

struct MemorySettings {
  double fragmentation_fraction = 0.05;       // of the allocator-managed bytes
  int64_t runtime_reserve_bytes = 1LL << 30;  // CUDA context, cuBLAS/NCCL workspaces
  // Per framework (Framework order): what its measured memory shows beyond everything above, as
  // a share of the estimate — the public fit's memory_overhead (coefficients.h); 0 where no run
  // of the framework has a measured memory figure.
  std::array<double, kFrameworkCount> measured_overhead_fraction{};
};

// The training settings layout `c` runs with: the spec's, with the precisions the search chose.
TrainingSpec TrainingOf(const TrainingSpec& training, const ParallelConfig& c);

// Bytes per parameter of each model state for a training precision and optimizer (bf16
// optimizer states: half the optimizer's bytes).
struct StateBytes {
  int weight = 2, gradient = 2, master = 4, optimizer = 8;
  // DeepSpeed's fp32 copy of the gradient partition for the step, sharded with the master
  // weights (on the host with them under offload).
  int gradient_copy = 0;
  int total() const { return weight + gradient + master + optimizer + gradient_copy; }
};
// The ZeRO paper's accounting (no framework named, DeepSpeed, Megatron-Core with bf16 gradient
// buffers as NeMo runs it); PyTorch's FSDP / DDP under autocast (fsdp, torchtitan) keep fp32
// parameters that are their own master copy, fp32 gradients and no separate master
// (4 + 4 + 0 + 8); the 16-bit weights they compute with are temporaries. DeepSpeed's
// BF16_Optimizer (RunsBf16Optimizer) accumulates gradients in an fp32 buffer beside the bf16
// ones (g = 2 + 4); its ZeRO optimizer and FP16_Optimizer turn the 16-bit gradients of the
// master partition into an fp32 copy for the step (gradient_copy = 4). `layout`: the ZeRO stage
// and offload; none: ZeRO 0 without offload.
StateBytes StateBytesFor(const TrainingSpec& training,
                         std::optional<Framework> framework = std::nullopt,
                         const ParallelConfig* layout = nullptr);

// Whether DeepSpeed runs `c` with its BF16_Optimizer: in bf16 at ZeRO 0 without offload (v0.6.2
// on: before v0.7.6 _configure_optimizer's if/elif picks it whenever ZeRO is off; from v0.7.6
// get_data_types accumulates in fp32 by default when ZeRO is off, and _do_optimizer_sanity_check
// picks it). At ZeRO 1-3 the default accumulation is in bf16 and the ZeRO optimizer runs
// (BF16_Optimizer at ZeRO 1 only with data_types.grad_accum_dtype fp32, v0.8.1 on, not a setting
// the planner writes). DeepSpeed's pipeline engine runs bf16 at ZeRO 1 with the ZeRO optimizer
// only from v0.11.2 (before, its gradient reduction and clear_lp_grads need BF16_Optimizer): why
// BLOOM's script says "bf16 must use z0".
bool RunsBf16Optimizer(const TrainingSpec& training, std::optional<Framework> framework,
                       const ParallelConfig& c);

// The ZeRO stage whose sharding `c`'s model states and data-parallel collectives follow:
// c.zero_stage, except 1 under BF16_Optimizer, which shards the fp32 master weights and the
// optimizer states over the data-parallel ranks and all-gathers the updated bf16 weights after
// its step as ZeRO 1 does (runtime/bf16_optimizer.py) — "its own ZeRO stage 1 equivalent", as
// BLOOM's training script says of the ZeRO 0 it ran.
int ShardingStage(const TrainingSpec& training, std::optional<Framework> framework,
                  const ParallelConfig& c);

// Parameters on one GPU of the pipeline stage with the most (layers, embedding, head), after
// tensor parallelism and before data-parallel sharding.
int64_t StageParameters(const ModelSpec& model, const ModelFigures& figures,
                        const ParallelConfig& c);

// Bytes of model states per GPU for `params` parameters on it (ZeRO `stage`, data-parallel `d`).
int64_t ModelStateBytes(int64_t params, const StateBytes& bytes, int stage, int64_t d);

// Whether DeepSpeed's ZeRO 1-2 optimizer holds its contiguous reduce bucket (5e8 elements) during
// the backward pass: at ZeRO 2, and at ZeRO 1 with the optimizer offloaded (its
// `contiguous_gradients or cpu_offload`, runtime/zero/stage_1_and_2.py); plain ZeRO 1 turns
// contiguous gradients off and reduces after the backward passes.
bool DeepSpeedContiguousBucket(const ParallelConfig& c);

// Micro-batches an interleaved schedule runs through one model chunk before the next (its group):
// Megatron-Core's --microbatch-group-size-per-virtual-pipeline-stage, p by default, and refused
// unless the last group is empty or holds p or more (schedules.py at d98e8a6, since 4295be1 of
// November 2024); the planner writes the least such N in [p, m], p itself when p divides m.
// PyTorch's schedules (FrameworkTraits::pytorch_pipeline_schedules) run m / max(1, m / p), which
// is below p when m < p. `micro_batches` is m, per pipeline per step; 0 for an m that Megatron
// refuses (m < p).
int64_t InterleavedGroup(int64_t pipeline, int64_t micro_batches,
                         std::optional<Framework> framework = std::nullopt);

// Micro-batches whose activations pipeline stage `stage` holds at its peak, as the frameworks'
// schedules run (Megatron-Core's megatron/core/pipeline_parallel/schedules.py, PyTorch's
// torch/distributed/pipelining/schedules.py): its warm-up forward passes plus the first steady
// one. 1F1B: min(p - stage, m). Interleaved over v model chunks a stage: the warm-up is
// 2 (p - stage - 1) + (v - 1) N chunk passes (N the InterleavedGroup), each holding 1/v of the
// stage's layers, at most all m v of them; with N = p, stage 0 holds p + (p - 1)/v micro-batches,
// Korthikanti et al.'s 1 + (p - 1)/(p v) times 1F1B's, until m caps it.
double InFlightMicroBatches(const ParallelConfig& c, int64_t micro_batches, int64_t stage = 0,
                            std::optional<Framework> framework = std::nullopt);

// Activation bytes of one layer for one micro-batch of `c.micro_batch` sequences.
int64_t LayerActivationBytes(const ModelSpec& model, const TrainingSpec& training,
                             const ParallelConfig& c,
                             std::optional<Framework> framework = std::nullopt);

// Forward seconds of a layer's parts, what recomputing each costs (time_model.h computes them).
struct LayerPartSeconds {
  double attention_s = 0, mlp_s = 0, norms_s = 0;
};
// The same layer as the recomputation planner's input: the input kept, and the attention block
// (Q, K, V, output and the kernel's state or the eager scores), the MLP's intermediates and the
// norms' tensors as droppable parts. Nothing dropped: LayerActivationBytes with recompute none.
LayerActivations LayerActivationParts(const ModelSpec& model, const TrainingSpec& training,
                                      const ParallelConfig& c, const LayerPartSeconds& seconds,
                                      std::optional<Framework> framework = std::nullopt);

struct MemoryEstimate {
  // Of the pipeline stage with the larger total.
  int64_t parameters_on_gpu = 0;
  int64_t model_state_bytes = 0;
  int64_t activation_bytes = 0;       // every micro-batch in flight, recompute transients included
  int64_t pipeline_buffer_bytes = 0;  // of activation_bytes: DeepSpeed's pipeline engine's
  int64_t logits_bytes = 0;
  int64_t temporary_bytes = 0;
  int64_t fragmentation_bytes = 0;
  int64_t reserve_bytes = 0;
  int64_t measured_overhead_bytes = 0;  // MemorySettings::measured_overhead_fraction's share
  int64_t total_bytes = 0;
  int64_t host_bytes_per_node = 0;   // optimizer offload: the node's shards in host memory
  const char* peak_stage = "first";  // "first" or "last" pipeline stage
  int64_t capacity_bytes = 0;        // the GPU's memory the estimate was checked against
  bool host_fits = true;             // optimizer offload: the shards fit in the host's memory
  bool fits = false;                 // on the GPU and, with offload, in the host's memory
};

MemoryEstimate EstimateMemory(const JobSpec& spec, const ModelFigures& figures,
                              const ParallelConfig& c, int64_t capacity_bytes,
                              const MemorySettings& settings = {});

base::Report MemoryEstimateToReport(const MemoryEstimate& m);

}  // namespace seedance::plan
