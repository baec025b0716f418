#include "seedance/plan/emit.h"

#include <string>
#include <vector>

#include "seedance/base/enum_names.h"
#include "seedance/plan/memory_model.h"

namespace seedance::plan {
namespace {

constexpr base::EnumTable<Framework, 3> kFrameworkNames = {{{Framework::kDeepSpeed, "deepspeed"},
                                                            {Framework::kFsdp, "fsdp"},
                                                            {Framework::kMegatron, "megatron"}}};

using base::NumericFormat;
using base::Report;

int64_t Accumulation(const JobSpec& spec, const ParallelConfig& c) {
  return spec.training.global_batch / (c.micro_batch * DataParallel(c, spec.hardware.total_gpus()));
}

// torch's dtype name for a 16-bit or 32-bit training precision.
std::string_view TorchDtype(NumericFormat f) {
  switch (f) {
    case NumericFormat::kBf16:
      return "bfloat16";
    case NumericFormat::kFp16:
      return "float16";
    default:
      return "float32";
  }
}

// fp32, fp16 and bf16: the precisions torch's mixed-precision policies (and DeepSpeed's) name.
bool TorchPrecision(NumericFormat p) {
  return p == NumericFormat::kFp32 || p == NumericFormat::kFp16 || p == NumericFormat::kBf16;
}

std::string DeepSpeedBlocker(const JobSpec& spec, const ParallelConfig& c) {
  if (TrainingOf(spec.training, c).optimizer_states != NumericFormat::kFp32) {
    return "bf16 optimizer states are not a setting of the configuration this plan writes";
  }
  if (c.gradient_compression != GradCompression::kNone) {
    return "DeepSpeed's engine reduces gradients itself; Seedance's compression hook is a DDP hook";
  }
  const NumericFormat p = TrainingOf(spec.training, c).precision;
  if (!TorchPrecision(p)) {
    return "DeepSpeed's config has no " + std::string(base::NumericFormatName(p)) +
           " training setting";
  }
  if (c.sequence_parallel) return "DeepSpeed has no Megatron-style sequence parallelism";
  if (c.recompute == Recompute::kSelective) {
    return "DeepSpeed checkpoints whole layers (selective recomputation is Megatron's)";
  }
  if (c.virtual_stages > 1) return "DeepSpeed's pipeline engine does not interleave stages";
  if (c.pipeline > 1 && c.tensor > 1) {
    return "DeepSpeed's pipeline with tensor parallelism needs Megatron's model code";
  }
  if (c.pipeline > 1 && c.zero_stage > 1) return "DeepSpeed's pipeline runs with ZeRO 0 or 1 only";
  if (c.tensor > 1 && c.zero_stage > 2) return "DeepSpeed's AutoTP runs with ZeRO 0 to 2";
  return "";
}

std::string FsdpBlocker(const JobSpec& spec, const ParallelConfig& c) {
  if (TrainingOf(spec.training, c).optimizer_states != NumericFormat::kFp32) {
    return "bf16 optimizer states are not a setting of the configuration this plan writes";
  }
  if (c.gradient_compression != GradCompression::kNone) {
    return "the FSDP plan's script does not register Seedance's compression hook";
  }
  const NumericFormat p = TrainingOf(spec.training, c).precision;
  if (!TorchPrecision(p)) {
    return "FSDP's mixed-precision policy has no " + std::string(base::NumericFormatName(p));
  }
  if (c.tensor > 1 || c.pipeline > 1) {
    return "the FSDP plan is data parallel only (tensor 1, pipeline 1)";
  }
  if (c.zero_stage == 1) return "FSDP has no optimizer-state-only sharding (ZeRO 1)";
  if (c.offload_optimizer) {
    return "FSDP's CPU offload moves the parameters too, not the optimizer states alone";
  }
  if (c.recompute == Recompute::kSelective) {
    return "the FSDP plan checkpoints whole decoder layers (selective recomputation is "
           "Megatron's)";
  }
  return "";
}

std::string MegatronBlocker(const JobSpec& spec, const ParallelConfig& c) {
  if (TrainingOf(spec.training, c).optimizer_states != NumericFormat::kFp32) {
    return "bf16 optimizer states are not a setting of the configuration this plan writes";
  }
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
  const std::string& opt = spec.training.optimizer;
  if (opt != "adam" && opt != "adamw" && opt != "sgd" && opt != "sgd-momentum") {
    return "Megatron-LM has no " + opt + " optimizer";
  }
  return "";
}

Report DeepSpeedConfig(const JobSpec& spec, const ParallelConfig& c) {
  Report r = Report::object();
  r["train_batch_size"] = spec.training.global_batch;
  r["train_micro_batch_size_per_gpu"] = c.micro_batch;
  r["gradient_accumulation_steps"] = Accumulation(spec, c);
  if (TrainingOf(spec.training, c).precision == NumericFormat::kBf16)
    r["bf16"] = {{"enabled", true}};
  if (TrainingOf(spec.training, c).precision == NumericFormat::kFp16) {
    // loss_scale 0: dynamic loss scaling from 2^16.
    r["fp16"] = {{"enabled", true}, {"loss_scale", 0}, {"initial_scale_power", 16}};
  }
  Report zero = Report::object();
  zero["stage"] = c.zero_stage;
  zero["overlap_comm"] = c.zero_stage > 0;
  zero["contiguous_gradients"] = true;
  if (c.zero_stage > 0) {
    zero["offload_optimizer"] = c.offload_optimizer
                                    ? Report{{"device", "cpu"}, {"pin_memory", true}}
                                    : Report{{"device", "none"}};
  }
  if (c.zero_stage == 3) zero["offload_param"] = {{"device", "none"}};
  r["zero_optimization"] = zero;
  if (c.recompute == Recompute::kFull) {
    r["activation_checkpointing"] = {{"partition_activations", false},
                                     {"cpu_checkpointing", false},
                                     {"contiguous_memory_optimization", false}};
  }
  if (c.tensor > 1) r["tensor_parallel"] = {{"autotp_size", c.tensor}};
  if (c.pipeline > 1) r["pipeline"] = {{"stages", c.pipeline}, {"partition", "uniform"}};
  return r;
}

Report FsdpPlan(const JobSpec& spec, const ParallelConfig& c) {
  const NumericFormat p = TrainingOf(spec.training, c).precision;
  Report r = Report::object();
  r["format"] = "seedance-fsdp-plan/1";
  r["sharding_strategy"] = c.zero_stage == 3   ? "FULL_SHARD"
                           : c.zero_stage == 2 ? "SHARD_GRAD_OP"
                                               : "NO_SHARD";
  r["reshard_after_forward"] = c.zero_stage == 3;  // FSDP2's spelling of the same choice
  if (p == NumericFormat::kFp32) {
    r["mixed_precision"] = nullptr;
  } else {
    // Gradients are reduced in the compute precision, as the planner's time model counts them.
    r["mixed_precision"] = {{"param_dtype", TorchDtype(p)},
                            {"reduce_dtype", TorchDtype(p)},
                            {"buffer_dtype", TorchDtype(p)}};
  }
  r["loss_scaling"] = p == NumericFormat::kFp16 ? "dynamic" : "none";
  r["activation_checkpointing"] = RecomputeName(c.recompute);
  r["world_size"] = spec.hardware.total_gpus();
  r["global_batch"] = spec.training.global_batch;
  r["micro_batch"] = c.micro_batch;
  r["gradient_accumulation_steps"] = Accumulation(spec, c);
  r["sequence_length"] = spec.model.sequence_length;
  return r;
}

Report MegatronArgs(const JobSpec& spec, const ParallelConfig& c) {
  const ModelSpec& m = spec.model;
  std::vector<std::string> a;
  auto flag = [&a](std::string name, int64_t value) {
    a.push_back(std::move(name));
    a.push_back(std::to_string(value));
  };
  flag("--tensor-model-parallel-size", c.tensor);
  flag("--pipeline-model-parallel-size", c.pipeline);
  if (c.virtual_stages > 1) {
    flag("--num-layers-per-virtual-pipeline-stage", m.layers / (c.pipeline * c.virtual_stages));
  }
  if (c.sequence_parallel) a.emplace_back("--sequence-parallel");
  if (c.zero_stage == 1) a.emplace_back("--use-distributed-optimizer");
  if (c.recompute == Recompute::kSelective) a.emplace_back("--recompute-activations");
  if (c.recompute == Recompute::kFull) {
    a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "uniform",
                       "--recompute-num-layers", "1"});
  }
  flag("--micro-batch-size", c.micro_batch);
  flag("--global-batch-size", spec.training.global_batch);
  switch (TrainingOf(spec.training, c).precision) {
    case NumericFormat::kBf16:
      a.emplace_back("--bf16");
      break;
    case NumericFormat::kFp16:
      a.emplace_back("--fp16");
      break;
    case NumericFormat::kFp8:  // Transformer Engine's FP8 GEMMs, bf16 elsewhere
      a.insert(a.end(), {"--bf16", "--fp8-format", "hybrid"});
      break;
    default:
      break;
  }
  const std::string& opt = spec.training.optimizer;
  a.insert(a.end(), {"--optimizer", opt == "sgd" || opt == "sgd-momentum" ? "sgd" : "adam"});
  flag("--num-layers", m.layers);
  flag("--hidden-size", m.hidden_size);
  flag("--ffn-hidden-size", m.ffn_size);
  flag("--num-attention-heads", m.attention_heads);
  if (m.kv_heads != m.attention_heads) {
    a.emplace_back("--group-query-attention");
    flag("--num-query-groups", m.kv_heads);
  }
  flag("--seq-length", m.sequence_length);
  flag("--max-position-embeddings", m.sequence_length);
  if (m.family == "llama") {
    a.insert(a.end(), {"--swiglu", "--normalization", "RMSNorm", "--disable-bias-linear",
                       "--position-embedding-type", "rope"});
  }
  if (!m.tie_embeddings) a.emplace_back("--untie-embeddings-and-output-weights");
  if (spec.training.attention == "flash") a.emplace_back("--use-flash-attn");
  return Report(a);
}

}  // namespace

std::string_view FrameworkName(Framework framework) {
  return base::EnumName(kFrameworkNames, framework);
}

base::StatusOr<Framework> ParseFramework(std::string_view text, std::string_view where) {
  return base::ParseEnum(kFrameworkNames, text, where);
}

std::string Inexpressible(Framework framework, const JobSpec& spec, const ParallelConfig& c) {
  switch (framework) {
    case Framework::kDeepSpeed:
      return DeepSpeedBlocker(spec, c);
    case Framework::kFsdp:
      return FsdpBlocker(spec, c);
    case Framework::kMegatron:
      return MegatronBlocker(spec, c);
  }
  return "unknown framework";
}

Report EmitContent(Framework framework, const JobSpec& spec, const ParallelConfig& c) {
  switch (framework) {
    case Framework::kDeepSpeed:
      return DeepSpeedConfig(spec, c);
    case Framework::kFsdp:
      return FsdpPlan(spec, c);
    case Framework::kMegatron:
      return MegatronArgs(spec, c);
  }
  return nullptr;
}

std::string EmitText(Framework framework, const Report& content) {
  if (framework != Framework::kMegatron) return content.dump(2) + "\n";
  // One flag per line, its value (if any) on the same line.
  std::string out;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string arg = content[i].get<std::string>();
    if (i > 0) out += arg.starts_with("--") ? "\n" : " ";
    out += arg;
  }
  return out + "\n";
}

}  // namespace seedance::plan
