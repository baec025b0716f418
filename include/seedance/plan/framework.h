// The training frameworks the planner knows (feature CLI-1): which layouts each runs, and how
// each runs a step — the traits the time and memory models read. A job spec may name its
// framework (`framework:`); the search then weighs only the layouts that framework runs, and
// `--emit` writes its configuration (emit.h).
//
//                  tensor            pipeline            context  ZeRO   recompute
//   megatron       any (+ SP)        any, interleaved,   yes      0, 1   none, selective, full
//                                    uneven end stages                   (+ recompute_layers)
//   deepspeed      AutoTP, pp 1      1F1B, tp 1, ZeRO<=1 no       0..3   none, full
//                  (ZeRO <= 2)       (uneven stages)
//   fsdp           1                 1                   no       0,2,3  none, full
//   torchtitan     any (SP always)   any, interleaved    yes      0,2,3  none, op-selective, full
//                  (ZeRO 0: DDP, data parallelism alone)
//   accelerate     the FSDP rules (or DeepSpeed's when the spec names deepspeed): it is a
//                  launcher configuration for one of them, an --emit target only.
//
// Precisions: megatron and torchtitan run fp8 GEMMs (Transformer Engine, torchao float8); the
// others fp32, fp16 and bf16. bf16 optimizer states, Seedance's compression hook and optimizer
// offload outside DeepSpeed are not settings of the configurations --emit writes.
//
// Thread safety: pure functions and constants.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "seedance/base/status.h"

namespace seedance::plan {

struct JobSpec;
struct ParallelConfig;

enum class Framework { kDeepSpeed, kFsdp, kMegatron, kTorchtitan, kAccelerate };
inline constexpr size_t kFrameworkCount = static_cast<size_t>(Framework::kAccelerate) + 1;

std::string_view FrameworkName(Framework framework);
// "deepspeed", "fsdp", "megatron", "torchtitan" or "accelerate"; the error lists them.
base::StatusOr<Framework> ParseFramework(std::string_view text, std::string_view where);
// The same without "accelerate" (a launcher, not what a job spec's `framework` names), with the
// names of the systems built on them: nemo, megatron-lm, megatron-core, megascale (megatron),
// fsdp2 (fsdp).
base::StatusOr<Framework> ParseJobFramework(std::string_view text, std::string_view where);

// How a framework runs a step, as the time and memory models count it.
struct FrameworkTraits {
  // Fused elementwise kernels (Megatron-Core with Transformer Engine: fused norms, rotary,
  // activation, bias-dropout-add, vocabulary-parallel cross-entropy) rather than PyTorch's eager
  // operators, each a kernel reading and writing its tensors in full.
  bool fused_kernels = true;
  // What the data-parallel collectives carry. FSDP and torchtitan (FSDP2) all-gather the
  // weights cast to the compute precision (param_dtype), not their fp32 shards; FSDP reduces
  // the gradients in the compute precision (the FSDP plan's reduce_dtype, emit.h), torchtitan
  // in fp32 (its mixed_precision_reduce); under either, ZeRO 0 is DDP with autocast, which
  // all-reduces the fp32 gradients (DDP has no reduce precision). Megatron and DeepSpeed move
  // their state bytes (StateBytesFor, memory_model.h).
  enum class Reduce { kStateBytes, kComputePrecision, kFp32 };
  bool gather_in_compute_precision = false;
  Reduce reduce = Reduce::kStateBytes;
  // Tensor-parallel collectives overlapped with the GEMMs (Transformer Engine's userbuffers).
  bool tp_overlap = false;
  // DeepSpeed's pipeline engine runs its schedule's instructions one after another: a middle
  // stage's four transfers a micro-batch (receive and send the activation, receive and send its
  // gradient; p2p.send/recv refuse async_op; a tensor-parallel stage sends its 1/t partition)
  // and its three tensor-parallel all-gathers (the received input, its output again for the
  // backward pass, the received gradient) stretch every slot of the schedule, and the
  // data-parallel reduction (ReduceGrads, after the flush) and ZeRO 1's all-gather of the
  // updated weights (in the optimizer's step) overlap no compute. Source: DeepSpeed v0.6
  // runtime/pipe/schedule.py, p2p.py, engine.py.
  bool blocking_pipeline = false;
  // DeepSpeed at ZeRO 0 and 1 reduces the gradients once the last micro-batch's backward pass
  // is over, and ZeRO 1 all-gathers the updated weights inside the optimizer's step: neither
  // overlaps compute (ZeRO 1's optimizer runs without backward hooks: v0.6-v0.12 force
  // overlap_comm off). The engine's buffered all-reduce, and ZeRO 1's without its contiguous
  // buckets (forced off too, unless offload turns them on), move the whole gradient; with
  // offload each partition is reduced to its owner. Either casts to the engine's
  // communication_data_type, the compute precision by default: bf16's BF16_Optimizer sends its
  // fp32 accumulation buffer in bf16. Source: DeepSpeed v0.6-v0.12 runtime/engine.py
  // (communication_data_type, allreduce_bucket), zero/stage_1_and_2.py, pipe/engine.py; from
  // v0.13 ZeRO 1 keeps its contiguous buckets (on by default) and reduces each partition to its
  // owner without offload too, half the bytes of the all-reduce.
  bool serial_reduction_below_zero2 = false;
  // The passes over the parameters a micro-batch makes outside the GEMMs: gradient
  // accumulation, copies into and out of the collectives' buffers, casts. Megatron makes none
  // that scale with the parameters: it fuses the accumulation into the weight-gradient GEMM
  // (gradient_accumulation_fusion, fp32 main_grad) and its buffers are the gradients.
  //
  // kDeepSpeed. Below ZeRO 2 autograd accumulates: from the second micro-batch on,
  // AccumulateGrad adds the new 16-bit (or fp32) gradient to the parameter's .grad in place,
  // reading both and writing the sum; in bf16 at ZeRO 0 BF16_Optimizer instead adds every
  // micro-batch's bf16 gradients into its fp32 accumulator (update_hp_grads:
  // `hp_grad.add_(lp.grad.to(fp32))` casts to an fp32 temporary, 2 bytes read and 4 written,
  // then adds it, 8 read and 4 written: 18 bytes a parameter). At ZeRO 2 and 3 each
  // micro-batch's gradients are copied into the contiguous reduce bucket (read and written once)
  // and, reduced, added into the rank's partition (a 1/d share); under ZeRO-Offload that running
  // sum lives in host memory and moves over PCIe both ways every micro-batch
  // (async_accumulate_grad_in_cpu_via_gpu at ZeRO 2, partition_grads at 3). Source: DeepSpeed
  // v0.6.2-v0.16 runtime/engine.py, pipe/engine.py (_exec_backward_pass), bf16_optimizer.py,
  // zero/stage_1_and_2.py, zero/stage3.py.
  //
  // kPyTorch (FSDP2's fully_shard, DDP; PyTorch 2.13). FSDP2 on the compute stream: every
  // all-gather's copy-out splits the gathered buffer into the layers' unsharded parameters
  // (read and written in the gathered precision; two gathers a micro-batch at ZeRO 3, one at
  // ZeRO 2, which reshards after the backward pass as well), and every micro-batch's
  // reduce-scatter copy-in reads the unsharded gradients into the reduce buffer in the reduce
  // precision (_fsdp_param_group.py wait_for_unshard, _fsdp_collectives.py foreach_reduce). The
  // shard's cast before the gather and the add into the sharded gradient run on the
  // collectives' streams over a 1/d share: not counted. DDP under autocast keeps fp32 weights
  // and gradients: each forward pass (and each recomputation) casts every layer's and the LM
  // head's weights to the compute precision (the embedding is looked up in fp32), the backward
  // pass casts their gradients back to fp32, and AccumulateGrad adds each micro-batch's
  // gradient to .grad in place. The FSDP plan's script keeps .grad as views of the reducer's
  // buckets (gradient_as_bucket_view, zeroed in place once a step) and divides them in place
  // once a step (reducer.cpp mark_variable_ready_dense); torchtitan's DDP
  // (ddp_syncs_every_micro_batch) copies them into its buckets, divided, and back every
  // micro-batch, Accelerate's (ddp_buckets_beside_gradients) once a step.
  enum class ParameterPasses { kNone, kDeepSpeed, kPyTorch };
  ParameterPasses parameter_passes = ParameterPasses::kNone;
  // FSDP2 reshards a unit's weights after its backward pass whatever reshard_after_forward says
  // (FSDPParamGroup.reshard_after_backward, on by default; torchtitan and the FSDP plan's
  // script leave gradient sync on): at ZeRO 2 too, each micro-batch gathers the weights for its
  // forward pass and reduce-scatters its gradients.
  bool reshards_after_backward = false;
  // torchtitan's DDP (composable replicate, bucket_cap_mb=100): no no_sync during gradient
  // accumulation and DDP's default gradient_as_bucket_view=False, so every micro-batch
  // all-reduces, copies the gradients into the buckets and back, and the buckets are a second
  // gradient-sized copy (torchtitan 0.2.2 models/llama3/infra/parallelize.py apply_ddp,
  // train.py; torch/distributed/_composable/replicate.py).
  bool ddp_syncs_every_micro_batch = false;
  // DDP at its default gradient_as_bucket_view=False, as torchtitan's replicate and Accelerate's
  // MULTI_GPU launch run it (Accelerate's config file has no key for it; only a script's
  // DistributedDataParallelKwargs sets it): the reducer's buckets are a second gradient-sized
  // copy beside .grad, filled from it divided (mul_out) when a bucket is ready and copied back
  // after the all-reduce (reducer.cpp mark_variable_ready_dense, finalize_bucket_dense).
  // Accelerate accumulates under no_sync and its zero_grad sets .grad to None, so the copies
  // run once a step and AccumulateGrad adds from the second micro-batch on.
  bool ddp_buckets_beside_gradients = false;
  // torchtitan's FSDP2 under a pipeline. PyTorch's pipeline stage runs every backward pass but a
  // stage's last with resharding after backward and gradient sync off, and reduce-scatters
  // after the last (torch.distributed.pipelining stage.py backward_maybe_with_nosync,
  // set_reshard_after_backward(False), set_requires_gradient_sync(False)); torchtitan turns
  // reshard_after_forward off when it pipelines (apply_fsdp: "default" is `not pp_enabled`).
  // So at ZeRO 2 and 3 alike a stage gathers its 16-bit weights once a step and keeps them,
  // accumulates unsharded gradients in the reduce precision
  // (FSDPParam.to_accumulated_grad_if_needed, accumulate_unsharded_grad_if_needed), and
  // reduce-scatters them once, after its last backward pass (GathersOnceAStep).
  bool pipeline_defers_resharding = false;
  // torchtitan wraps the final norm and the output head in one FSDP unit it does not reshard
  // after the forward pass (apply_fsdp: reshard_after_forward only under the "always" policy):
  // at ZeRO 3 the head is gathered once a micro-batch, not twice.
  bool keeps_head_gathered = false;
  // torchtitan pipelines through torch.distributed.pipelining, whose interleaved schedule
  // (ScheduleInterleaved1F1B, _get_warmup_ops) warms up in rounds of m / max(1, m / p)
  // micro-batches and has no case that runs every forward pass first when m = p, as Megatron's
  // has (InFlightMicroBatches).
  bool pytorch_pipeline_schedules = false;
  // What a layout that leaves it out means under the framework. PyTorch's FSDP and torchtitan
  // shard everything unless told otherwise (FULL_SHARD, fully_shard): ZeRO 3. torchtitan's
  // tensor parallelism always shards the norms and the residual stream along the sequence (its
  // TP plan puts SequenceParallel on every norm): sequence parallelism whenever tensor > 1.
  int default_zero_stage = 0;
  bool tensor_parallel_is_sequence_parallel = false;
};

// The traits of `framework`; no framework stated: Megatron-Core's (fused kernels, tensor-parallel
// overlap). The state bytes of no framework are the ZeRO paper's accounting (plan/memory_model.h).
FrameworkTraits TraitsOf(std::optional<Framework> framework);

// Why `framework` cannot run `c` for `spec` (one sentence), or "" when it can.
std::string Inexpressible(Framework framework, const JobSpec& spec, const ParallelConfig& c);

// The framework whose kernels, copies and overlap the models count for `c`: the spec's, else the
// first of Megatron-Core, torchtitan, DeepSpeed and FSDP that runs `c` (the engines of most
// published runs first; torchtitan before DeepSpeed and FSDP for the layouts they share, as the
// newer code), else none (Megatron-Core's traits).
std::optional<Framework> RunningFramework(const JobSpec& spec, const ParallelConfig& c);

// Whether some framework runs `c` (what a search weighs when the spec names none): the rules
// above, each framework's alone (no mixing torchtitan's op-selective recomputation into
// DeepSpeed's offload), bf16 optimizer states allowed, and Seedance's compression hook on plain
// data parallelism (it is a DDP hook).
bool RunnableBySome(const JobSpec& spec, const ParallelConfig& c);

// Whether `framework` runs `c`'s sharded data parallelism (ZeRO 2 or 3) inside a pipeline with
// one gather and one reduce-scatter a step, the weights and the unsharded gradients kept for
// the whole step (FrameworkTraits::pipeline_defers_resharding).
bool GathersOnceAStep(std::optional<Framework> framework, const ParallelConfig& c);

}  // namespace seedance::plan
