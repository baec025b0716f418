#include "seedance/plan/emit.h"

#include <string>
#include <vector>

#include "seedance/base/enum_names.h"
#include "seedance/plan/attention_softmax.h"
#include "seedance/plan/memory_model.h"

namespace seedance::plan {
namespace {

using base::NumericFormat;
using base::Report;

int64_t Accumulation(const JobSpec& spec, const ParallelConfig& c) {
  return MicroBatchesPerStep(c, spec.hardware.total_gpus(), spec.training.global_batch);
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
  // Overlapped reduction at ZeRO 2-3, as the time and memory models count it (two buckets).
  // ZeRO 1 reduces after the backward passes, the whole gradient all-reduced with no bucket
  // held (DeepSpeedContiguousBucket): v0.6-v0.12 force its contiguous buckets off, and later
  // releases, which keep them on by default and allocate a 5e8-element bucket in the backward
  // pass, run it so when the config turns them off (offload turns them back on).
  zero["overlap_comm"] = c.zero_stage >= 2;
  zero["contiguous_gradients"] = c.zero_stage != 1 || c.offload_optimizer;
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
    // FSDP reduces the gradients in the compute precision, as the planner's time model counts
    // them; NO_SHARD is DDP under autocast, whose all-reduce carries the fp32 gradients.
    const NumericFormat reduce = c.zero_stage >= 2 ? p : NumericFormat::kFp32;
    r["mixed_precision"] = {{"param_dtype", TorchDtype(p)},
                            {"reduce_dtype", TorchDtype(reduce)},
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
  if (c.virtual_stages > 1 && c.first_stage_layers > 0) {
    flag("--num-virtual-stages-per-pipeline-rank", c.virtual_stages);
  } else if (c.virtual_stages > 1) {
    flag("--num-layers-per-virtual-pipeline-stage", m.layers / (c.pipeline * c.virtual_stages));
  }
  if (c.virtual_stages > 1) {
    // Megatron-LM runs p micro-batches through a model chunk before the next by default and
    // refuses a step whose last group holds fewer than p; the memory model counts this group.
    const int64_t group = InterleavedGroup(c.pipeline, Accumulation(spec, c));
    if (group != 0 && group != c.pipeline)
      flag("--microbatch-group-size-per-virtual-pipeline-stage", group);
  }
  if (c.sequence_parallel) a.emplace_back("--sequence-parallel");
  if (c.zero_stage == 1) a.emplace_back("--use-distributed-optimizer");
  // The overlap the time model counts for Megatron, off by default in Megatron-LM: the
  // data-parallel reduction behind the backward pass, the distributed optimizer's gather behind
  // the next forward pass, and Transformer Engine's tensor-parallel overlap, which needs
  // sequence parallelism (its arguments.py asserts it).
  a.emplace_back("--overlap-grad-reduce");
  if (c.zero_stage == 1) a.emplace_back("--overlap-param-gather");
  if (c.tensor > 1 && c.sequence_parallel) a.emplace_back("--tp-comm-overlap");
  if (c.recompute == Recompute::kSelective) a.emplace_back("--recompute-activations");
  if (c.first_stage_layers > 0) {
    flag("--decoder-first-pipeline-num-layers", c.first_stage_layers);
    flag("--decoder-last-pipeline-num-layers", c.last_stage_layers);
  }
  if (c.recompute == Recompute::kFull && c.recompute_layers > 0) {
    // The first recompute_layers layers of each stage recomputed, the rest kept.
    a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "block"});
    flag("--recompute-num-layers", c.recompute_layers);
  } else if (c.recompute == Recompute::kFull) {
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
  // Materialized scores: Transformer Engine's unfused attention, whose softmax is fused where
  // its kernel takes the shape (attention_softmax.h).
  if (MaterializesScores(spec.training)) {
    a.insert(a.end(), {"--attention-backend", "unfused"});
  } else {
    a.emplace_back("--use-flash-attn");
  }
  // A named kernel pins Transformer Engine's backend (Megatron-Core sets NVTE_FLASH_ATTN and
  // NVTE_FUSED_ATTN from it, and refuses to start if the environment sets them otherwise);
  // "flash" leaves it on auto, cuDNN's on Hopper.
  // flash2 pins FlashAttention's generation too: TE runs FA3 on Hopper where it is installed.
  if (spec.training.attention == "flash2") {
    a.insert(a.end(), {"--attention-backend", "flash", "--flash-attention-version", "2"});
  }
  if (spec.training.attention == "cudnn") a.insert(a.end(), {"--attention-backend", "fused"});
  return Report(a);
}

// The torchtitan flavor with this model's shape (v0.2's llama3 flavors), or "".
std::string TorchtitanFlavor(const ModelSpec& m) {
  struct Flavor {
    const char* name;
    int64_t layers, hidden, heads, kv, ffn;
  };
  constexpr Flavor kFlavors[] = {{"8B", 32, 4096, 32, 8, 14336},
                                 {"70B", 80, 8192, 64, 8, 28672},
                                 {"405B", 126, 16384, 128, 8, 53248}};
  if (m.family != "llama" || m.tie_embeddings) return "";
  for (const Flavor& f : kFlavors) {
    if (m.layers == f.layers && m.hidden_size == f.hidden && m.attention_heads == f.heads &&
        m.kv_heads == f.kv && m.ffn_size == f.ffn) {
      return f.name;
    }
  }
  return "";
}

// torchtitan's job config (v0.2, the last release configured by TOML): sections of
// torchtitan/config/job_config.py's JobConfig.
Report TorchtitanConfig(const JobSpec& spec, const ParallelConfig& c) {
  const ModelSpec& m = spec.model;
  const int64_t d = DataParallel(c, spec.hardware.total_gpus());
  const NumericFormat p = TrainingOf(spec.training, c).precision;
  Report r = Report::object();
  r["job"] = {{"description", spec.name}};
  const std::string flavor = TorchtitanFlavor(m);
  r["model"] = {{"name", "llama3"}, {"flavor", flavor.empty() ? spec.name : flavor}};
  if (p == NumericFormat::kFp8) r["model"]["converters"] = {"quantize.linear.float8"};
  Report training = Report::object();
  // local_batch_size is one data-parallel rank's batch per optimizer step's pass: the
  // micro-batch (accumulation makes up global_batch_size), or with a pipeline every
  // micro-batch of the step, cut into pipeline_parallel_microbatch_size pieces.
  training["local_batch_size"] = c.pipeline > 1 ? spec.training.global_batch / d : c.micro_batch;
  training["global_batch_size"] = spec.training.global_batch;
  training["seq_len"] = m.sequence_length;
  training["mixed_precision_param"] = p == NumericFormat::kFp32 ? "float32" : "bfloat16";
  training["mixed_precision_reduce"] = "float32";
  r["training"] = training;
  Report par = Report::object();
  par["data_parallel_replicate_degree"] = c.zero_stage == 0 ? d : 1;
  par["data_parallel_shard_degree"] = c.zero_stage == 0 ? 1 : d;
  par["fsdp_reshard_after_forward"] = c.zero_stage == 2 ? "never" : "default";
  par["tensor_parallel_degree"] = c.tensor;
  par["pipeline_parallel_degree"] = c.pipeline;
  if (c.pipeline > 1) {
    par["pipeline_parallel_schedule"] = c.virtual_stages > 1 ? "Interleaved1F1B" : "1F1B";
    par["pipeline_parallel_microbatch_size"] = c.micro_batch;
    par["pipeline_parallel_layers_per_stage"] = m.layers / (c.pipeline * c.virtual_stages);
  }
  par["context_parallel_degree"] = c.context_parallel;
  r["parallelism"] = par;
  Report ac = Report::object();
  ac["mode"] = c.recompute == Recompute::kFull          ? "full"
               : c.recompute == Recompute::kOpSelective ? "selective"
                                                        : "none";
  if (c.recompute == Recompute::kOpSelective) ac["selective_ac_option"] = "op";
  r["activation_checkpoint"] = ac;
  if (p == NumericFormat::kFp8) {
    r["quantize"] = {{"linear", {{"float8", {{"filter_fqns", {"output"}}}}}}};
    // torchao's float8 casts are fast only compiled (torchtitan's docs/float8.md: "required for
    // competitive performance"); the time model counts them compiled.
    r["compile"] = {{"enable", true}, {"components", {"model", "loss"}}};
  }
  return r;
}

// Accelerate's launcher configuration (`accelerate launch --config_file`): FSDP2 through its
// FSDP plugin, or DeepSpeed's ZeRO when the spec names deepspeed.
Report AccelerateConfig(const JobSpec& spec, const ParallelConfig& c) {
  const NumericFormat p = TrainingOf(spec.training, c).precision;
  Report r = Report::object();
  r["compute_environment"] = "LOCAL_MACHINE";
  r["mixed_precision"] = p == NumericFormat::kBf16   ? "bf16"
                         : p == NumericFormat::kFp16 ? "fp16"
                                                     : "no";
  r["num_machines"] = spec.hardware.nodes;
  r["num_processes"] = spec.hardware.total_gpus();
  r["machine_rank"] = 0;
  r["main_training_function"] = "main";
  if (spec.framework == Framework::kDeepSpeed) {
    r["distributed_type"] = "DEEPSPEED";
    r["deepspeed_config"] = {{"zero_stage", c.zero_stage},
                             {"gradient_accumulation_steps", Accumulation(spec, c)},
                             {"offload_optimizer_device", c.offload_optimizer ? "cpu" : "none"},
                             {"offload_param_device", "none"},
                             {"zero3_init_flag", c.zero_stage == 3}};
  } else if (c.zero_stage == 0) {
    r["distributed_type"] = spec.hardware.total_gpus() > 1 ? "MULTI_GPU" : "NO";
  } else {
    r["distributed_type"] = "FSDP";
    r["fsdp_config"] = {{"fsdp_version", 2},
                        {"fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP"},
                        {"fsdp_reshard_after_forward", c.zero_stage == 3},
                        {"fsdp_activation_checkpointing", c.recompute == Recompute::kFull},
                        {"fsdp_state_dict_type", "SHARDED_STATE_DICT"},
                        {"fsdp_cpu_ram_efficient_loading", true},
                        {"fsdp_offload_params", false}};
  }
  return r;
}

// A TOML value: strings quoted, arrays of strings, numbers and booleans as JSON writes them.
std::string TomlValue(const Report& v) {
  if (v.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + TomlValue(v[i]);
    return out + "]";
  }
  return v.dump();
}

void TomlTables(const Report& table, const std::string& path, std::string& out) {
  std::string scalars;
  for (const auto& [key, value] : table.items()) {
    if (!value.is_object()) scalars += key + " = " + TomlValue(value) + "\n";
  }
  if (!path.empty() && !scalars.empty()) out += "\n[" + path + "]\n" + scalars;
  for (const auto& [key, value] : table.items()) {
    if (value.is_object()) TomlTables(value, path.empty() ? key : path + "." + key, out);
  }
}

// YAML for a two-level mapping of scalars (what accelerate's config holds).
void Yaml(const Report& map, int indent, std::string& out) {
  for (const auto& [key, value] : map.items()) {
    out += std::string(static_cast<size_t>(indent), ' ') + key + ":";
    if (value.is_object()) {
      out += "\n";
      Yaml(value, indent + 2, out);
    } else {
      out += " " + (value.is_string() ? value.get<std::string>() : value.dump()) + "\n";
    }
  }
}

}  // namespace

Report EmitContent(Framework framework, const JobSpec& spec, const ParallelConfig& c) {
  switch (framework) {
    case Framework::kDeepSpeed:
      return DeepSpeedConfig(spec, c);
    case Framework::kFsdp:
      return FsdpPlan(spec, c);
    case Framework::kMegatron:
      return MegatronArgs(spec, c);
    case Framework::kTorchtitan:
      return TorchtitanConfig(spec, c);
    case Framework::kAccelerate:
      return AccelerateConfig(spec, c);
  }
  return nullptr;
}

std::string EmitNote(Framework framework, const JobSpec& spec) {
  if (framework != Framework::kTorchtitan || !TorchtitanFlavor(spec.model).empty()) return "";
  const ModelSpec& m = spec.model;
  return "torchtitan's llama3 has no flavor of this shape: register TransformerModelArgs(dim=" +
         std::to_string(m.hidden_size) + ", n_layers=" + std::to_string(m.layers) +
         ", n_heads=" + std::to_string(m.attention_heads) +
         ", n_kv_heads=" + std::to_string(m.kv_heads) +
         ", vocab_size=" + std::to_string(m.vocab_size) + ") with an FFN of " +
         std::to_string(m.ffn_size) + " in llama3_args as flavor '" + spec.name + "'";
}

std::string EmitText(Framework framework, const Report& content) {
  if (framework == Framework::kTorchtitan) {
    std::string out =
        "# torchtitan job config (v0.2 TOML), written by seedancectl optimize --emit\n";
    TomlTables(content, "", out);
    return out;
  }
  if (framework == Framework::kAccelerate) {
    std::string out = "# accelerate launch --config_file, written by seedancectl optimize --emit\n";
    Yaml(content, 0, out);
    return out;
  }
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
