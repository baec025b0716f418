#include "seedance/plan/job_spec.h"

#include "seedance/base/ascii.h"
#include "seedance/base/enum_names.h"
#include "seedance/base/yaml_map.h"
#include "seedance/mem/training_step.h"
#include "seedance/plan/kv_precision.h"

namespace seedance::plan {
namespace {

using base::InvalidArgumentError;
using base::NumericFormat;
using base::Status;
using base::StatusOr;
using base::YamlMap;

constexpr int64_t kMaxCount = int64_t{1} << 40;  // keeps every product below 2^63

constexpr std::string_view kFamilies[] = {"llama", "gpt", "nemotron"};
constexpr std::string_view kTrainingPrecisions[] = {"fp32", "tf32", "bf16", "fp16", "fp8"};
constexpr std::string_view kServingPrecisions[] = {"fp32", "bf16", "fp16", "fp8", "int8"};
constexpr std::string_view kOptimizerStates[] = {"fp32", "bf16"};
constexpr std::string_view kOptimizers[] = {"adamw", "adam", "sgd", "sgd-momentum", "lion"};
constexpr std::string_view kIntraNode[] = {"nvlink", "xgmi", "pcie"};
constexpr std::string_view kInterNode[] = {"infiniband", "roce", "ethernet", "none"};
constexpr std::string_view kAttention[] = {"flash", "flash2", "cudnn", "eager", "eager-unfused"};

StatusOr<int64_t> Count(const YamlMap& m, std::string_view key) {
  return m.GetInt(key, std::nullopt, 1, kMaxCount);
}

StatusOr<ModelSpec> ParseModel(const YamlMap& m) {
  SEEDANCE_RETURN_IF_ERROR(
      m.CheckKeys({"family", "layers", "hidden_size", "attention_heads", "kv_heads", "ffn_size",
                   "vocab_size", "sequence_length", "tie_embeddings"}));
  ModelSpec model;
  SEEDANCE_ASSIGN_OR_RETURN(model.family, m.GetChoice("family", kFamilies));
  SEEDANCE_ASSIGN_OR_RETURN(model.layers, m.GetInt("layers", std::nullopt, 1, 100'000));
  SEEDANCE_ASSIGN_OR_RETURN(model.hidden_size, m.GetInt("hidden_size", std::nullopt, 1, 1'000'000));
  SEEDANCE_ASSIGN_OR_RETURN(model.attention_heads,
                            m.GetInt("attention_heads", std::nullopt, 1, 100'000));
  SEEDANCE_ASSIGN_OR_RETURN(model.kv_heads,
                            m.GetInt("kv_heads", model.attention_heads, 1, 100'000));
  SEEDANCE_ASSIGN_OR_RETURN(model.ffn_size, m.GetInt("ffn_size", std::nullopt, 1, 10'000'000));
  SEEDANCE_ASSIGN_OR_RETURN(model.vocab_size, m.GetInt("vocab_size", std::nullopt, 1, 100'000'000));
  SEEDANCE_ASSIGN_OR_RETURN(model.sequence_length,
                            m.GetInt("sequence_length", std::nullopt, 1, 100'000'000));
  SEEDANCE_ASSIGN_OR_RETURN(model.tie_embeddings,
                            m.GetBool("tie_embeddings", model.family == "gpt"));
  if (model.hidden_size % model.attention_heads != 0) {
    return InvalidArgumentError("'model.hidden_size' (" + std::to_string(model.hidden_size) +
                                    ") must be a multiple of 'model.attention_heads' (" +
                                    std::to_string(model.attention_heads) + ")",
                                m.Where("attention_heads"));
  }
  if (model.kv_heads > model.attention_heads || model.attention_heads % model.kv_heads != 0) {
    return InvalidArgumentError("'model.kv_heads' (" + std::to_string(model.kv_heads) +
                                    ") must divide 'model.attention_heads' (" +
                                    std::to_string(model.attention_heads) + ")",
                                m.Where("kv_heads"));
  }
  return model;
}

// The buffers of one micro-batch step must be representable (each at most 2^50 bytes): checked
// here, so that a sequence length or micro-batch past it is reported at its YAML key instead of
// deep inside the memory planner.
Status CheckStepSizes(const JobSpec& spec, const YamlMap& model) {
  mem::TrainingStepShape shape;
  shape.layers = 1;
  shape.hidden_size = spec.model.hidden_size;
  shape.attention_heads = spec.model.attention_heads;
  shape.sequence_length = spec.model.sequence_length;
  shape.micro_batch = spec.training.micro_batch;
  shape.vocab_size = spec.model.vocab_size;
  shape.bytes_per_element = spec.training.precision == base::NumericFormat::kFp32 ? 4 : 2;
  const auto step = mem::TrainingStepLifetimes(shape);
  if (step.ok()) return base::OkStatus();
  return InvalidArgumentError(
      "'model.sequence_length' (" + std::to_string(spec.model.sequence_length) +
          ") with 'training.micro_batch' (" + std::to_string(spec.training.micro_batch) +
          "): " + std::string(step.status().message()),
      model.Where("sequence_length"));
}

// The GPU must have a published peak for the format the job computes in.
Status CheckGpuRuns(const YamlMap& m, std::string_view key, NumericFormat format,
                    const cost::GpuSpec& gpu) {
  if (gpu.DenseTflops(format)) return base::OkStatus();
  return InvalidArgumentError("'" + m.KeyPath(key) + "' is " +
                                  std::string(base::NumericFormatName(format)) + ", which GPU '" +
                                  gpu.id + "' does not run (the catalog has no " +
                                  std::string(base::NumericFormatName(format)) + " peak for it)",
                              m.Where(key));
}

StatusOr<TrainingSpec> ParseTraining(const YamlMap& m, const cost::GpuSpec& gpu) {
  SEEDANCE_RETURN_IF_ERROR(
      m.CheckKeys({"global_batch", "micro_batch", "precision", "optimizer", "attention",
                   "optimizer_states", "search_precisions", "search_optimizer_states"}));
  TrainingSpec t;
  SEEDANCE_ASSIGN_OR_RETURN(t.global_batch, Count(m, "global_batch"));
  SEEDANCE_ASSIGN_OR_RETURN(t.micro_batch, Count(m, "micro_batch"));
  SEEDANCE_ASSIGN_OR_RETURN(std::string precision, m.GetChoice("precision", kTrainingPrecisions));
  SEEDANCE_ASSIGN_OR_RETURN(t.precision, base::ParseNumericFormat(precision, m.Where("precision")));
  SEEDANCE_RETURN_IF_ERROR(CheckGpuRuns(m, "precision", t.precision, gpu));
  SEEDANCE_ASSIGN_OR_RETURN(t.optimizer, m.GetChoice("optimizer", kOptimizers, "adamw"));
  SEEDANCE_ASSIGN_OR_RETURN(t.attention, m.GetChoice("attention", kAttention, "flash"));
  SEEDANCE_ASSIGN_OR_RETURN(std::string states,
                            m.GetChoice("optimizer_states", kOptimizerStates, "fp32"));
  SEEDANCE_ASSIGN_OR_RETURN(t.optimizer_states,
                            base::ParseNumericFormat(states, m.Where("optimizer_states")));
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<std::string> precisions,
                            m.GetChoiceList("search_precisions", kTrainingPrecisions));
  for (size_t i = 0; i < precisions.size(); ++i) {
    const std::string key = "search_precisions[" + std::to_string(i) + "]";
    SEEDANCE_ASSIGN_OR_RETURN(NumericFormat f,
                              base::ParseNumericFormat(precisions[i], m.Where(key)));
    if (!gpu.DenseTflops(f)) {
      return InvalidArgumentError("'" + m.KeyPath(key) + "' is " + precisions[i] + ", which GPU '" +
                                      gpu.id + "' does not run",
                                  m.Where("search_precisions"));
    }
    t.search_precisions.push_back(f);
  }
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<std::string> state_list,
                            m.GetChoiceList("search_optimizer_states", kOptimizerStates));
  for (const std::string& s : state_list) {
    SEEDANCE_ASSIGN_OR_RETURN(NumericFormat f,
                              base::ParseNumericFormat(s, m.Where("search_optimizer_states")));
    t.search_optimizer_states.push_back(f);
  }
  if (t.micro_batch > t.global_batch) {
    return InvalidArgumentError("'training.micro_batch' (" + std::to_string(t.micro_batch) +
                                    ") must not exceed 'training.global_batch' (" +
                                    std::to_string(t.global_batch) + ")",
                                m.Where("micro_batch"));
  }
  return t;
}

StatusOr<ServingSpec> ParseServing(const YamlMap& m, const cost::GpuSpec& gpu,
                                   const ModelSpec& model) {
  SEEDANCE_RETURN_IF_ERROR(m.CheckKeys({"context_length", "concurrent_requests", "precision",
                                        "prompt_length", "engine", "kv_precision", "max_kv_kl"}));
  ServingSpec s;
  SEEDANCE_ASSIGN_OR_RETURN(s.context_length, Count(m, "context_length"));
  if (s.context_length > model.sequence_length) {
    return InvalidArgumentError("'serving.context_length' (" + std::to_string(s.context_length) +
                                    ") exceeds the model's 'model.sequence_length' (" +
                                    std::to_string(model.sequence_length) + ")",
                                m.Where("context_length"));
  }
  SEEDANCE_ASSIGN_OR_RETURN(s.concurrent_requests, Count(m, "concurrent_requests"));
  SEEDANCE_ASSIGN_OR_RETURN(std::string precision,
                            m.GetChoice("precision", kServingPrecisions, "bf16"));
  SEEDANCE_ASSIGN_OR_RETURN(s.precision, base::ParseNumericFormat(precision, m.Where("precision")));
  SEEDANCE_RETURN_IF_ERROR(CheckGpuRuns(m, "precision", s.precision, gpu));
  SEEDANCE_ASSIGN_OR_RETURN(
      s.prompt_length,
      m.GetInt("prompt_length", std::max<int64_t>(1, s.context_length / 2), 1, s.context_length));
  if (m.Has("engine")) {
    SEEDANCE_ASSIGN_OR_RETURN(std::string engine, m.GetString("engine"));
    SEEDANCE_ASSIGN_OR_RETURN(s.engine, ParseServingEngine(engine, m.Where("engine")));
  }
  if (m.Has("kv_precision")) {
    SEEDANCE_ASSIGN_OR_RETURN(s.kv_precision, m.GetString("kv_precision"));
    if (s.kv_precision != "auto") {
      SEEDANCE_RETURN_IF_ERROR(
          FindKvPrecision(s.engine, s.kv_precision, m.Where("kv_precision")).status());
    }
  }
  SEEDANCE_ASSIGN_OR_RETURN(s.max_kv_kl, m.GetNumber("max_kv_kl", 1e-3, 0.0, 1e3));
  return s;
}

StatusOr<HardwareSpec> ParseHardware(const YamlMap& m, const cost::GpuCatalog& catalog,
                                     const cost::GpuSpec** gpu_out) {
  SEEDANCE_RETURN_IF_ERROR(m.CheckKeys({"gpu", "gpus_per_node", "nodes", "interconnect", "host"}));
  HardwareSpec h;
  SEEDANCE_ASSIGN_OR_RETURN(std::string gpu_name, m.GetString("gpu"));
  auto gpu = catalog.Get(gpu_name);
  if (!gpu.ok()) return gpu.status().WithWhere(m.Where("gpu"));
  *gpu_out = *gpu;
  h.gpu = (*gpu)->id;
  SEEDANCE_ASSIGN_OR_RETURN(h.gpus_per_node, m.GetInt("gpus_per_node", std::nullopt, 1, 1024));
  SEEDANCE_ASSIGN_OR_RETURN(h.nodes, m.GetInt("nodes", int64_t{1}, 1, 1'000'000));

  // Defaults follow the form factor: SXM boards have NVLink, OAM boards
  // Infinity Fabric (xGMI), PCIe cards talk over PCIe.
  const std::string& ff = (*gpu)->form_factor;
  std::string intra_default = ff.rfind("SXM", 0) == 0 ? "nvlink" : ff == "OAM" ? "xgmi" : "pcie";
  std::string inter_default = h.nodes > 1 ? "infiniband" : "none";
  SEEDANCE_ASSIGN_OR_RETURN(std::optional<YamlMap> ic, m.GetOptionalMap("interconnect"));
  if (ic) {
    SEEDANCE_RETURN_IF_ERROR(ic->CheckKeys(
        {"intra_node", "inter_node", "intra_node_gbytes_per_s", "inter_node_gbytes_per_s"}));
    SEEDANCE_ASSIGN_OR_RETURN(h.intra_node_gbytes_per_s,
                              ic->GetNumber("intra_node_gbytes_per_s", 0.0, 0.0, 1e6));
    SEEDANCE_ASSIGN_OR_RETURN(h.inter_node_gbytes_per_s,
                              ic->GetNumber("inter_node_gbytes_per_s", 0.0, 0.0, 1e6));
    SEEDANCE_ASSIGN_OR_RETURN(h.intra_node, ic->GetChoice("intra_node", kIntraNode, intra_default));
    SEEDANCE_ASSIGN_OR_RETURN(h.inter_node, ic->GetChoice("inter_node", kInterNode, inter_default));
    if (h.intra_node != intra_default && h.intra_node != "pcie") {
      return InvalidArgumentError("'hardware.interconnect.intra_node' is " + h.intra_node +
                                      ", but GPU '" + h.gpu + "' (" + ff + ") has " +
                                      intra_default + " at most",
                                  ic->Where("intra_node"));
    }
    if (h.nodes > 1 && h.inter_node == "none") {
      return InvalidArgumentError(
          "'hardware.interconnect.inter_node' is none, but 'hardware.nodes' is " +
              std::to_string(h.nodes),
          ic->Where("inter_node"));
    }
  } else {
    h.intra_node = intra_default;
    h.inter_node = inter_default;
  }
  SEEDANCE_ASSIGN_OR_RETURN(std::optional<YamlMap> host, m.GetOptionalMap("host"));
  if (host) {
    SEEDANCE_RETURN_IF_ERROR(
        host->CheckKeys({"memory_gbytes", "memory_gbytes_per_s", "pcie_gbytes_per_s"}));
    SEEDANCE_ASSIGN_OR_RETURN(h.host.memory_gbytes,
                              host->GetNumber("memory_gbytes", std::nullopt, 1e-3, 1e9));
    SEEDANCE_ASSIGN_OR_RETURN(h.host.memory_gbytes_per_s,
                              host->GetNumber("memory_gbytes_per_s", std::nullopt, 1e-3, 1e9));
    SEEDANCE_ASSIGN_OR_RETURN(h.host.pcie_gbytes_per_s,
                              host->GetNumber("pcie_gbytes_per_s", std::nullopt, 1e-3, 1e9));
  }
  return h;
}

// A name parsed through its enum table without regard to ASCII case; an error quotes the name
// as written.
template <typename Parse>
auto ParseFolded(Parse parse, const std::string& text, std::string_view where)
    -> decltype(parse(text, where)) {
  auto folded = parse(base::AsciiLower(text), where);
  return folded.ok() ? folded : parse(text, where);
}

// The `parallelism:` section into spec.parallelism (training.micro_batch already set); CheckLayout
// then checks it against the model, the hardware and the batch.
Status ParseParallelism(const YamlMap& p, JobSpec& spec) {
  SEEDANCE_RETURN_IF_ERROR(
      p.CheckKeys({"tensor", "pipeline", "virtual_stages", "sequence_parallel", "context_parallel",
                   "zero_stage", "recompute", "recompute_layers", "first_stage_layers",
                   "last_stage_layers", "offload_optimizer", "gradient_compression"}));
  ParallelConfig& c = spec.parallelism;
  SEEDANCE_ASSIGN_OR_RETURN(c.tensor, p.GetInt("tensor", int64_t{1}, 1, 1024));
  SEEDANCE_ASSIGN_OR_RETURN(c.pipeline, p.GetInt("pipeline", int64_t{1}, 1, 100'000));
  SEEDANCE_ASSIGN_OR_RETURN(c.virtual_stages, p.GetInt("virtual_stages", int64_t{1}, 1, 1024));
  // Under torchtitan tensor parallelism is sequence-parallel (FrameworkTraits): that is the
  // default here, and `false` is a layout it does not run.
  const bool torchtitan_tp =
      TraitsOf(spec.framework).tensor_parallel_is_sequence_parallel && c.tensor > 1;
  SEEDANCE_ASSIGN_OR_RETURN(c.sequence_parallel, p.GetBool("sequence_parallel", torchtitan_tp));
  if (torchtitan_tp && !c.sequence_parallel) {
    return InvalidArgumentError(
        "torchtitan's tensor parallelism always shards the norms along the sequence: "
        "sequence_parallel must be true (or left out) with framework torchtitan and tensor > 1",
        p.Where("sequence_parallel"));
  }
  SEEDANCE_ASSIGN_OR_RETURN(c.context_parallel,
                            p.GetInt("context_parallel", int64_t{1}, 1, 1'000'000));
  SEEDANCE_ASSIGN_OR_RETURN(std::string compression, p.GetString("gradient_compression", "none"));
  SEEDANCE_ASSIGN_OR_RETURN(c.gradient_compression, ParseFolded(ParseGradCompression, compression,
                                                                p.Where("gradient_compression")));
  // A compression hook is DDP's: with one, zero_stage left out is 0 under any framework.
  const int64_t zero_default = c.gradient_compression == GradCompression::kNone ? c.zero_stage : 0;
  SEEDANCE_ASSIGN_OR_RETURN(int64_t zero, p.GetInt("zero_stage", zero_default, 0, 3));
  c.zero_stage = static_cast<int>(zero);
  SEEDANCE_ASSIGN_OR_RETURN(std::string recompute, p.GetString("recompute", "none"));
  SEEDANCE_ASSIGN_OR_RETURN(c.recompute,
                            ParseFolded(ParseRecompute, recompute, p.Where("recompute")));
  SEEDANCE_ASSIGN_OR_RETURN(c.recompute_layers,
                            p.GetInt("recompute_layers", int64_t{0}, 0, 100'000));
  SEEDANCE_ASSIGN_OR_RETURN(c.first_stage_layers,
                            p.GetInt("first_stage_layers", int64_t{0}, 0, 100'000));
  SEEDANCE_ASSIGN_OR_RETURN(c.last_stage_layers,
                            p.GetInt("last_stage_layers", int64_t{0}, 0, 100'000));
  SEEDANCE_ASSIGN_OR_RETURN(c.offload_optimizer, p.GetBool("offload_optimizer", false));
  spec.parallelism_given = true;
  return base::OkStatus();
}

// The `reliability:` section: the per-GPU MTBF and the checkpoint store's write bandwidth are
// required (no neutral default exists), the restart time defaults to 0.
StatusOr<ReliabilitySpec> ParseReliability(const YamlMap& m) {
  SEEDANCE_RETURN_IF_ERROR(
      m.CheckKeys({"gpu_mtbf_hours", "checkpoint_write_gbytes_per_s", "restart_s"}));
  ReliabilitySpec r;
  r.given = true;
  SEEDANCE_ASSIGN_OR_RETURN(r.gpu_mtbf_hours,
                            m.GetNumber("gpu_mtbf_hours", std::nullopt, 1e-3, 1e9));
  SEEDANCE_ASSIGN_OR_RETURN(r.checkpoint_write_gbytes_per_s,
                            m.GetNumber("checkpoint_write_gbytes_per_s", std::nullopt, 1e-6, 1e9));
  SEEDANCE_ASSIGN_OR_RETURN(r.restart_s, m.GetNumber("restart_s", 0.0, 0.0, 1e9));
  return r;
}

// The layout (stated or the pure data-parallel default) checked against the model, the hardware
// and the batch; the error points at the line of the key it names.
Status CheckLayout(const JobSpec& spec, const YamlMap& training, const YamlMap* parallelism) {
  Status ok = CheckParallelism(spec.parallelism, spec, "parallelism.");
  if (ok.ok()) return ok;
  const std::string_view where = ok.where();
  const std::string_view key = where.substr(where.find('.') + 1);
  const YamlMap* map = where.starts_with("training.") ? &training : parallelism;
  if (map == nullptr) return ok;
  return base::Status(ok.code(), std::string(ok.message()), map->Where(key));
}

}  // namespace

inline constexpr base::EnumTable<JobKind, 2> kJobKindNames = {{
    {JobKind::kTraining, "training"},
    {JobKind::kServing, "serving"},
}};

std::string_view JobKindName(JobKind kind) { return base::EnumName(kJobKindNames, kind); }

StatusOr<JobSpec> ParseJobSpec(std::string_view yaml, const std::string& file,
                               const cost::GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(YAML::Node root, base::ParseYaml(yaml, file));
  SEEDANCE_ASSIGN_OR_RETURN(YamlMap doc, YamlMap::FromNode(root, file, ""));
  SEEDANCE_RETURN_IF_ERROR(
      doc.CheckKeys({"name", "model", "training", "serving", "hardware", "parallelism",
                     "reliability", "framework", "planning", "price_per_gpu_hour_usd"}));

  JobSpec spec;
  spec.source = file;
  SEEDANCE_ASSIGN_OR_RETURN(spec.name, doc.GetString("name"));

  // Hardware first: the other sections are checked against the GPU.
  const cost::GpuSpec* gpu = nullptr;
  SEEDANCE_ASSIGN_OR_RETURN(YamlMap hardware, doc.GetMap("hardware"));
  SEEDANCE_ASSIGN_OR_RETURN(spec.hardware, ParseHardware(hardware, catalog, &gpu));

  SEEDANCE_ASSIGN_OR_RETURN(YamlMap model, doc.GetMap("model"));
  SEEDANCE_ASSIGN_OR_RETURN(spec.model, ParseModel(model));

  const bool has_training = doc.Has("training");
  const bool has_serving = doc.Has("serving");
  if (has_training == has_serving) {
    return InvalidArgumentError(has_training ? "give either 'training' or 'serving', not both"
                                             : "missing section: give 'training' or 'serving'",
                                has_training ? doc.Where("serving") : doc.WhereSelf());
  }
  if (has_training) {
    spec.kind = JobKind::kTraining;
    SEEDANCE_ASSIGN_OR_RETURN(YamlMap t, doc.GetMap("training"));
    SEEDANCE_ASSIGN_OR_RETURN(spec.training, ParseTraining(t, *gpu));
    SEEDANCE_RETURN_IF_ERROR(CheckStepSizes(spec, model));
    if (doc.Has("framework")) {
      SEEDANCE_ASSIGN_OR_RETURN(std::string framework, doc.GetString("framework"));
      SEEDANCE_ASSIGN_OR_RETURN(spec.framework,
                                ParseFolded(ParseJobFramework, framework, doc.Where("framework")));
      // A precision the framework cannot train in is the spec's error, not a search that finds
      // nothing.
      ParallelConfig plain;
      plain.micro_batch = spec.training.micro_batch;
      const std::string why = Inexpressible(*spec.framework, spec, plain);
      if (why.find(base::NumericFormatName(spec.training.precision)) != std::string::npos) {
        return InvalidArgumentError(
            "'training.precision' is " +
                std::string(base::NumericFormatName(spec.training.precision)) + ", which " +
                framework + " does not train in: " + why,
            t.Where("precision"));
      }
    }
    SEEDANCE_ASSIGN_OR_RETURN(std::optional<YamlMap> planning, doc.GetOptionalMap("planning"));
    if (planning) {
      SEEDANCE_RETURN_IF_ERROR(planning->CheckKeys({"headroom", "min_gain"}));
      SEEDANCE_ASSIGN_OR_RETURN(spec.planning.headroom,
                                planning->GetNumber("headroom", 0.10, 0.0, 0.9));
      SEEDANCE_ASSIGN_OR_RETURN(spec.planning.min_gain,
                                planning->GetNumber("min_gain", 0.0, 0.0, 0.9));
    }
    SEEDANCE_ASSIGN_OR_RETURN(std::optional<YamlMap> p, doc.GetOptionalMap("parallelism"));
    spec.parallelism.micro_batch = spec.training.micro_batch;
    // The framework's ZeRO stage when the spec leaves it out (FrameworkTraits), with a
    // parallelism section or without (but for a DDP compression hook, ParseParallelism).
    spec.parallelism.zero_stage = TraitsOf(spec.framework).default_zero_stage;
    if (p) {
      SEEDANCE_RETURN_IF_ERROR(ParseParallelism(*p, spec));
    }
    SEEDANCE_RETURN_IF_ERROR(CheckLayout(spec, t, p ? &*p : nullptr));
    SEEDANCE_ASSIGN_OR_RETURN(std::optional<YamlMap> rel, doc.GetOptionalMap("reliability"));
    if (rel) {
      SEEDANCE_ASSIGN_OR_RETURN(spec.reliability, ParseReliability(*rel));
    }
  } else {
    spec.kind = JobKind::kServing;
    for (const char* key : {"parallelism", "reliability", "framework", "planning"}) {
      if (doc.Has(key)) {
        return InvalidArgumentError(
            "'" + std::string(key) + "' describes a training job; serving jobs have none",
            doc.Where(key));
      }
    }
    SEEDANCE_ASSIGN_OR_RETURN(YamlMap s, doc.GetMap("serving"));
    SEEDANCE_ASSIGN_OR_RETURN(spec.serving, ParseServing(s, *gpu, spec.model));
  }

  if (doc.Has("price_per_gpu_hour_usd")) {
    SEEDANCE_ASSIGN_OR_RETURN(spec.price_per_gpu_hour_usd,
                              doc.GetNumber("price_per_gpu_hour_usd", std::nullopt, 0.0, 1e6));
    spec.price_origin = "job spec";
  } else {
    spec.price_per_gpu_hour_usd = gpu->price_per_hour_usd;
    spec.price_origin = "catalog: " + gpu->price_source + ", " + gpu->price_date;
  }
  return spec;
}

base::Report JobSpecToReport(const JobSpec& spec) {
  base::Report r = base::Report::object();
  r["job"]["name"] = spec.name;
  r["job"]["kind"] = JobKindName(spec.kind);
  r["job"]["source"] = spec.source;

  base::Report& model = r["model"];
  model["family"] = spec.model.family;
  model["layers"] = spec.model.layers;
  model["hidden_size"] = spec.model.hidden_size;
  model["attention_heads"] = spec.model.attention_heads;
  model["kv_heads"] = spec.model.kv_heads;
  model["head_dim"] = spec.model.head_dim();
  model["ffn_size"] = spec.model.ffn_size;
  model["vocab_size"] = spec.model.vocab_size;
  model["sequence_length"] = spec.model.sequence_length;
  model["tie_embeddings"] = spec.model.tie_embeddings;

  if (spec.kind == JobKind::kTraining) {
    base::Report& t = r["training"];
    t["global_batch"] = spec.training.global_batch;
    t["micro_batch"] = spec.training.micro_batch;
    t["precision"] = base::NumericFormatName(spec.training.precision);
    t["optimizer"] = spec.training.optimizer;
    t["attention"] = spec.training.attention;
    t["optimizer_states"] = base::NumericFormatName(spec.training.optimizer_states);
    auto names = [](const std::vector<NumericFormat>& formats) {
      base::Report list = base::Report::array();
      for (NumericFormat f : formats) list.push_back(std::string(base::NumericFormatName(f)));
      return list;
    };
    if (!spec.training.search_precisions.empty()) {
      t["search_precisions"] = names(spec.training.search_precisions);
    }
    if (!spec.training.search_optimizer_states.empty()) {
      t["search_optimizer_states"] = names(spec.training.search_optimizer_states);
    }
    r["parallelism"] = ParallelismToReport(spec.parallelism, spec.hardware.total_gpus(),
                                           spec.training.global_batch);
    r["framework"] =
        spec.framework ? base::Report(std::string(FrameworkName(*spec.framework))) : nullptr;
    r["planning"] = {{"headroom", spec.planning.headroom}, {"min_gain", spec.planning.min_gain}};
  } else {
    base::Report& s = r["serving"];
    s["context_length"] = spec.serving.context_length;
    s["concurrent_requests"] = spec.serving.concurrent_requests;
    s["precision"] = base::NumericFormatName(spec.serving.precision);
    s["prompt_length"] = spec.serving.prompt_length;
    s["engine"] = std::string(ServingEngineName(spec.serving.engine));
    s["kv_precision"] = spec.serving.kv_precision;
    s["max_kv_kl"] = spec.serving.max_kv_kl;
  }

  base::Report& hw = r["hardware"];
  hw["gpu"] = spec.hardware.gpu;
  hw["gpus_per_node"] = spec.hardware.gpus_per_node;
  hw["nodes"] = spec.hardware.nodes;
  hw["gpus_total"] = spec.hardware.total_gpus();
  hw["intra_node"] = spec.hardware.intra_node;
  hw["inter_node"] = spec.hardware.inter_node;
  if (spec.hardware.intra_node_gbytes_per_s > 0) {
    hw["intra_node_gbytes_per_s"] = spec.hardware.intra_node_gbytes_per_s;
  }
  if (spec.hardware.inter_node_gbytes_per_s > 0) {
    hw["inter_node_gbytes_per_s"] = spec.hardware.inter_node_gbytes_per_s;
  }
  if (spec.hardware.host.given()) {
    base::Report& host = hw["host"];
    host["memory_gbytes"] = spec.hardware.host.memory_gbytes;
    host["memory_gbytes_per_s"] = spec.hardware.host.memory_gbytes_per_s;
    host["pcie_gbytes_per_s"] = spec.hardware.host.pcie_gbytes_per_s;
  }

  if (spec.reliability.given) {
    base::Report& rel = r["reliability"];
    rel["gpu_mtbf_hours"] = spec.reliability.gpu_mtbf_hours;
    rel["checkpoint_write_gbytes_per_s"] = spec.reliability.checkpoint_write_gbytes_per_s;
    rel["restart_s"] = spec.reliability.restart_s;
  }

  base::Report& price = r["price"];
  price["per_gpu_hour_usd"] = spec.price_per_gpu_hour_usd;
  price["origin"] = spec.price_origin;
  price["cluster_per_hour_usd"] =
      spec.price_per_gpu_hour_usd * static_cast<double>(spec.hardware.total_gpus());
  return r;
}

}  // namespace seedance::plan
