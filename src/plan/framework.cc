#include "seedance/plan/framework.h"

#include <algorithm>
#include <string>

#include "seedance/base/enum_names.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/memory_model.h"
#include "seedance/plan/parallelism.h"

namespace seedance::plan {
namespace {

using base::NumericFormat;

constexpr base::EnumTable<Framework, 5> kFrameworkNames = {
    {{Framework::kDeepSpeed, "deepspeed"},
     {Framework::kFsdp, "fsdp"},
     {Framework::kMegatron, "megatron"},
     {Framework::kTorchtitan, "torchtitan"},
     {Framework::kAccelerate, "accelerate"}}};
constexpr base::EnumTable<Framework, 4> kJobFrameworkNames = {
    {{Framework::kDeepSpeed, "deepspeed"},
     {Framework::kFsdp, "fsdp"},
     {Framework::kMegatron, "megatron"},
     {Framework::kTorchtitan, "torchtitan"}}};

// fp32, fp16 and bf16: the precisions torch's mixed-precision policies (and DeepSpeed's) name.
bool TorchPrecision(NumericFormat p) {
  return p == NumericFormat::kFp32 || p == NumericFormat::kFp16 || p == NumericFormat::kBf16;
}

// What no framework's configuration written here expresses.
std::string CommonBlocker(const JobSpec& spec, const ParallelConfig& c) {
  if (TrainingOf(spec.training, c).optimizer_states != NumericFormat::kFp32) {
    return "bf16 optimizer states are not a setting of the configuration this plan writes";
  }
  return "";
}

bool Uneven(const ParallelConfig& c) { return c.first_stage_layers > 0 || c.last_stage_layers > 0; }

// cuDNN's fused attention is Transformer Engine's (Megatron's): the configurations written for
// the PyTorch frameworks run PyTorch's SDPA or the flash-attn package, with no setting for it.
std::string CudnnAttentionBlocker(const JobSpec& spec, const char* framework) {
  if (spec.training.attention != "cudnn") return "";
  return std::string(framework) +
         "'s configuration has no setting for cuDNN's fused attention (Transformer Engine's); "
         "its attention is PyTorch's SDPA or flash-attn (attention: flash2)";
}

// Micro-batches per pipeline per step.
int64_t MicroBatches(const JobSpec& spec, const ParallelConfig& c) {
  return MicroBatchesPerStep(c, spec.hardware.total_gpus(), spec.training.global_batch);
}

std::string DeepSpeedBlocker(const JobSpec& spec, const ParallelConfig& c) {
  if (std::string cudnn = CudnnAttentionBlocker(spec, "DeepSpeed"); !cudnn.empty()) return cudnn;
  if (c.gradient_compression != GradCompression::kNone) {
    return "DeepSpeed's engine reduces gradients itself; Seedance's compression hook is a DDP hook";
  }
  const NumericFormat p = TrainingOf(spec.training, c).precision;
  if (!TorchPrecision(p)) {
    return "DeepSpeed's config has no " + std::string(base::NumericFormatName(p)) +
           " training setting";
  }
  if (c.sequence_parallel) return "DeepSpeed has no Megatron-style sequence parallelism";
  if (c.context_parallel > 1) return "DeepSpeed has no ring-attention context parallelism";
  if (c.recompute == Recompute::kSelective || c.recompute == Recompute::kOpSelective) {
    return "DeepSpeed checkpoints whole layers (selective recomputation is Megatron's and "
           "torchtitan's)";
  }
  if (c.recompute_layers > 0) return "DeepSpeed's checkpointing covers every layer";
  if (c.virtual_stages > 1) return "DeepSpeed's pipeline engine does not interleave stages";
  if (c.pipeline > 1 && c.tensor > 1) {
    return "DeepSpeed's pipeline with tensor parallelism needs Megatron's model code";
  }
  if (c.pipeline > 1 && c.zero_stage > 1) return "DeepSpeed's pipeline runs with ZeRO 0 or 1 only";
  if (c.tensor > 1 && c.zero_stage > 2) return "DeepSpeed's AutoTP runs with ZeRO 0 to 2";
  return "";
}

std::string FsdpBlocker(const JobSpec& spec, const ParallelConfig& c) {
  if (std::string cudnn = CudnnAttentionBlocker(spec, "The FSDP plan"); !cudnn.empty()) {
    return cudnn;
  }
  if (c.gradient_compression != GradCompression::kNone) {
    return "the FSDP plan's script does not register Seedance's compression hook";
  }
  const NumericFormat p = TrainingOf(spec.training, c).precision;
  if (!TorchPrecision(p)) {
    return "FSDP's mixed-precision policy has no " + std::string(base::NumericFormatName(p));
  }
  if (c.tensor > 1 || c.pipeline > 1 || c.context_parallel > 1) {
    return "the FSDP plan is data parallel only (tensor 1, pipeline 1, context 1)";
  }
  if (c.zero_stage == 1) return "FSDP has no optimizer-state-only sharding (ZeRO 1)";
  if (c.offload_optimizer) {
    return "FSDP's CPU offload moves the parameters too, not the optimizer states alone";
  }
  if (c.recompute == Recompute::kSelective || c.recompute == Recompute::kOpSelective ||
      c.recompute_layers > 0) {
    return "the FSDP plan checkpoints every decoder layer whole (selective recomputation is "
           "Megatron's and torchtitan's)";
  }
  return "";
}

std::string MegatronBlocker(const JobSpec& spec, const ParallelConfig& c) {
  if (c.gradient_compression != GradCompression::kNone) {
    return "Megatron-LM's data-parallel reduction cannot take a DDP communication hook";
  }
  if (c.offload_optimizer) {
    return "the Megatron-LM flags this plan is checked against (commit d98e8a6) have no "
           "optimizer offload";
  }
  if (c.zero_stage > 1) {
    return "Megatron-LM shards optimizer states (ZeRO 1, --use-distributed-optimizer), not "
           "gradients or weights";
  }
  if (c.recompute == Recompute::kOpSelective) {
    return "Megatron-LM's selective recomputation is the attention core's, not PyTorch's "
           "per-operator policy";
  }
  // Megatron-Core's unfused attention (Transformer Engine's UnfusedDotProductAttention, and the
  // local DotProductAttention, which asserts context_parallel_size == 1) runs no context
  // parallelism; Transformer Engine unfuses its softmax only through the environment
  // (NVTE_MASKED_SOFTMAX_FUSION=0), which the flags --emit writes cannot set.
  if (spec.training.attention == "eager" && c.context_parallel > 1) {
    return "Megatron's materialized (eager) attention runs without context parallelism";
  }
  if (spec.training.attention == "eager-unfused") {
    return "Megatron-Core on Transformer Engine unfuses the softmax through the environment "
           "(NVTE_MASKED_SOFTMAX_FUSION=0), not a flag this plan writes; attention: eager fuses it "
           "where the kernel takes the shape";
  }
  const std::string& opt = spec.training.optimizer;
  if (opt != "adam" && opt != "adamw" && opt != "sgd" && opt != "sgd-momentum") {
    return "Megatron-LM has no " + opt + " optimizer";
  }
  if (!Uneven(c) && !EvenStages(c, spec.model.layers)) {
    return "Megatron-LM splits the layers evenly over pipeline x virtual_stages unless the first "
           "and last stages' layer counts are set";
  }
  if (c.virtual_stages > 1 && Uneven(c) && c.pipeline > 1) {
    const int64_t v = c.virtual_stages;
    const int64_t middle =
        c.pipeline > 2
            ? (spec.model.layers - c.first_stage_layers - c.last_stage_layers) / (c.pipeline - 2)
            : v;
    if (c.first_stage_layers % v != 0 || c.last_stage_layers % v != 0 || middle % v != 0) {
      return "Megatron-LM needs every stage's layers divisible by virtual_stages when the end "
             "stages are set";
    }
  }
  if (c.virtual_stages > 1 && MicroBatches(spec, c) < c.pipeline) {
    return "Megatron-LM's interleaved schedule needs at least pipeline (" +
           std::to_string(c.pipeline) + ") micro-batches per step; this layout has " +
           std::to_string(MicroBatches(spec, c));
  }
  if (c.virtual_stages > 1 && c.recompute_layers > 0) {
    return "Megatron-LM's --recompute-num-layers counts per model chunk, not per stage, when "
           "stages interleave";
  }
  return "";
}

std::string TorchtitanBlocker(const JobSpec& spec, const ParallelConfig& c) {
  if (std::string cudnn = CudnnAttentionBlocker(spec, "torchtitan"); !cudnn.empty()) return cudnn;
  if (c.gradient_compression != GradCompression::kNone) {
    return "torchtitan's FSDP2 reduces gradients itself; Seedance's compression hook is a DDP "
           "hook";
  }
  if (c.offload_optimizer) return "torchtitan has no optimizer-state offload";
  const NumericFormat p = TrainingOf(spec.training, c).precision;
  if (p != NumericFormat::kBf16 && p != NumericFormat::kFp32 && p != NumericFormat::kFp8) {
    return "torchtitan trains in bf16 or fp32 (fp8 through torchao's float8), not " +
           std::string(base::NumericFormatName(p));
  }
  if (c.zero_stage == 1) return "torchtitan's FSDP2 has no optimizer-state-only sharding (ZeRO 1)";
  if (c.zero_stage == 0 && (c.tensor > 1 || c.pipeline > 1 || c.context_parallel > 1)) {
    return "torchtitan combines tensor, pipeline and context parallelism with FSDP only (its DDP "
           "is one-dimensional, and its autocast is off beside TP and PP): zero_stage 2 or 3";
  }
  if (c.tensor > 1 && !c.sequence_parallel) {
    return "torchtitan's tensor parallelism always shards the norms along the sequence "
           "(sequence_parallel: true)";
  }
  if (c.recompute == Recompute::kSelective) {
    return "torchtitan's selective checkpointing is per operator (op-selective), not Megatron's";
  }
  if (c.recompute_layers > 0 || !EvenStages(c, spec.model.layers)) {
    return "torchtitan's configuration has no per-stage layer counts or partial recomputation";
  }
  const int64_t m = MicroBatches(spec, c);
  const int64_t rounds = std::max<int64_t>(1, m / c.pipeline);
  if (c.virtual_stages > 1 && m % rounds != 0) {
    return "PyTorch's interleaved schedule runs the " + std::to_string(m) +
           " micro-batches per step in max(1, m / pipeline) = " + std::to_string(rounds) +
           " equal rounds, and " + std::to_string(rounds) + " does not divide " + std::to_string(m);
  }
  return "";
}

}  // namespace

std::string_view FrameworkName(Framework framework) {
  return base::EnumName(kFrameworkNames, framework);
}

base::StatusOr<Framework> ParseFramework(std::string_view text, std::string_view where) {
  return base::ParseEnum(kFrameworkNames, text, where);
}

base::StatusOr<Framework> ParseJobFramework(std::string_view text, std::string_view where) {
  // The names the systems built on these go by: NeMo and MegaScale run Megatron-Core,
  // Megatron-DeepSpeed (BLOOM's) DeepSpeed's engine with Megatron's model code, FSDP1 is
  // PyTorch's FullyShardedDataParallel and FSDP2 its fully_shard. The caller folds case.
  struct Alias {
    std::string_view name;
    Framework framework;
  };
  constexpr Alias kAliases[] = {{"nemo", Framework::kMegatron},
                                {"megatron-lm", Framework::kMegatron},
                                {"megatron-core", Framework::kMegatron},
                                {"megascale", Framework::kMegatron},
                                {"megatron-deepspeed", Framework::kDeepSpeed},
                                {"fsdp1", Framework::kFsdp},
                                {"fsdp2", Framework::kFsdp},
                                {"pytorch-fsdp", Framework::kFsdp}};
  for (const Alias& a : kAliases) {
    if (text == a.name) return a.framework;
  }
  return base::ParseEnum(kJobFrameworkNames, text, where);
}

FrameworkTraits TraitsOf(std::optional<Framework> framework) {
  FrameworkTraits t;
  // No framework stated: Megatron-Core's, the engine of most published large runs (and of
  // every group of the calibration set but BLOOM's).
  switch (framework.value_or(Framework::kMegatron)) {
    case Framework::kMegatron:
      t.tp_overlap = true;
      break;
    case Framework::kDeepSpeed:
      t.blocking_pipeline = true;
      t.serial_reduction_below_zero2 = true;
      t.parameter_passes = FrameworkTraits::ParameterPasses::kDeepSpeed;
      break;
    case Framework::kFsdp:
    case Framework::kAccelerate:
      t.fused_kernels = false;
      t.gather_in_compute_precision = true;
      t.reduce = FrameworkTraits::Reduce::kComputePrecision;
      t.parameter_passes = FrameworkTraits::ParameterPasses::kPyTorch;
      t.reshards_after_backward = true;
      t.default_zero_stage = 3;
      // Accelerate's FSDP2 is the FSDP plan's; its DDP keeps DDP's default buckets.
      t.ddp_buckets_beside_gradients = framework == Framework::kAccelerate;
      break;
    case Framework::kTorchtitan:
      t.fused_kernels = false;
      t.gather_in_compute_precision = true;
      t.reduce = FrameworkTraits::Reduce::kFp32;
      t.parameter_passes = FrameworkTraits::ParameterPasses::kPyTorch;
      t.reshards_after_backward = true;
      t.ddp_syncs_every_micro_batch = true;
      t.ddp_buckets_beside_gradients = true;
      t.pipeline_defers_resharding = true;
      t.keeps_head_gathered = true;
      t.pytorch_pipeline_schedules = true;
      t.default_zero_stage = 3;
      t.tensor_parallel_is_sequence_parallel = true;
      break;
  }
  return t;
}

namespace {

std::string FrameworkBlocker(Framework framework, const JobSpec& spec, const ParallelConfig& c) {
  switch (framework) {
    case Framework::kDeepSpeed:
      return DeepSpeedBlocker(spec, c);
    case Framework::kFsdp:
      return FsdpBlocker(spec, c);
    case Framework::kMegatron:
      return MegatronBlocker(spec, c);
    case Framework::kTorchtitan:
      return TorchtitanBlocker(spec, c);
    case Framework::kAccelerate:
      return spec.framework == Framework::kDeepSpeed ? DeepSpeedBlocker(spec, c)
                                                     : FsdpBlocker(spec, c);
  }
  return "unknown framework";
}

}  // namespace

std::string Inexpressible(Framework framework, const JobSpec& spec, const ParallelConfig& c) {
  std::string common = CommonBlocker(spec, c);
  if (!common.empty()) return common;
  return FrameworkBlocker(framework, spec, c);
}

std::optional<Framework> RunningFramework(const JobSpec& spec, const ParallelConfig& c) {
  if (spec.framework) return spec.framework;
  for (Framework f :
       {Framework::kMegatron, Framework::kTorchtitan, Framework::kDeepSpeed, Framework::kFsdp}) {
    if (FrameworkBlocker(f, spec, c).empty()) return f;
  }
  return std::nullopt;
}

bool GathersOnceAStep(std::optional<Framework> framework, const ParallelConfig& c) {
  return TraitsOf(framework).pipeline_defers_resharding && c.pipeline > 1 && c.zero_stage >= 2;
}

bool RunnableBySome(const JobSpec& spec, const ParallelConfig& c) {
  // Seedance's compression hook is a DDP hook: data parallelism alone.
  if (c.gradient_compression != GradCompression::kNone) {
    return c.tensor == 1 && c.pipeline == 1 && c.context_parallel == 1;
  }
  for (Framework f :
       {Framework::kMegatron, Framework::kDeepSpeed, Framework::kFsdp, Framework::kTorchtitan}) {
    if (FrameworkBlocker(f, spec, c).empty()) return true;
  }
  return false;
}

}  // namespace seedance::plan
