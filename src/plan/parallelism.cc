#include "seedance/plan/parallelism.h"

#include <algorithm>
#include <string>

#include "seedance/base/enum_names.h"
#include "seedance/plan/job_spec.h"

namespace seedance::plan {
namespace {

constexpr base::EnumTable<Recompute, 4> kRecomputeNames = {
    {{Recompute::kNone, "none"},
     {Recompute::kSelective, "selective"},
     {Recompute::kOpSelective, "op-selective"},
     {Recompute::kFull, "full"}}};

base::Status Bad(std::string what, std::string_view prefix, std::string_view key) {
  return base::InvalidArgumentError(std::move(what), std::string(prefix) + std::string(key));
}

}  // namespace

std::string_view RecomputeName(Recompute r) { return base::EnumName(kRecomputeNames, r); }

base::StatusOr<Recompute> ParseRecompute(std::string_view text, std::string_view where) {
  return base::ParseEnum(kRecomputeNames, text, where);
}

int64_t StageLayers(const ParallelConfig& c, int64_t layers, int64_t stage) {
  const int64_t p = c.pipeline;
  if (c.first_stage_layers == 0 && c.last_stage_layers == 0) {
    const int64_t chunks = p * c.virtual_stages;
    const int64_t each = layers / chunks, extra = layers % chunks;
    int64_t held = 0;
    for (int64_t j = stage; j < chunks; j += p) held += each + (j < extra ? 1 : 0);
    return held;
  }
  if (p == 1) return layers;
  const int64_t first = c.first_stage_layers, last = c.last_stage_layers;
  if (stage == 0) return first;
  if (stage == p - 1) return last;
  return (layers - first - last) / (p - 2);
}

bool EvenStages(const ParallelConfig& c, int64_t layers) {
  return c.first_stage_layers == 0 && c.last_stage_layers == 0 &&
         layers % (c.pipeline * c.virtual_stages) == 0;
}

int64_t MaxStageLayers(const ParallelConfig& c, int64_t layers) {
  int64_t most = StageLayers(c, layers, 0);
  if (c.pipeline > 1) most = std::max(most, StageLayers(c, layers, c.pipeline - 1));
  if (c.pipeline > 2) most = std::max(most, StageLayers(c, layers, 1));
  return most;
}

base::Status CheckParallelism(const ParallelConfig& c, const JobSpec& spec,
                              std::string_view where_prefix) {
  const ModelSpec& m = spec.model;
  const HardwareSpec& h = spec.hardware;
  auto n = [](int64_t v) { return std::to_string(v); };
  if (c.tensor < 1 || c.pipeline < 1 || c.virtual_stages < 1 || c.micro_batch < 1 ||
      c.context_parallel < 1) {
    return Bad("degrees and the micro-batch must be >= 1", where_prefix, "tensor");
  }
  if (c.tensor > h.gpus_per_node) {
    return Bad("tensor parallelism " + n(c.tensor) + " exceeds the " + n(h.gpus_per_node) +
                   " GPUs of one node (TP groups stay inside a node)",
               where_prefix, "tensor");
  }
  if (m.attention_heads % c.tensor != 0 || m.kv_heads % c.tensor != 0) {
    return Bad("tensor parallelism " + n(c.tensor) + " must divide the attention heads (" +
                   n(m.attention_heads) + ") and the key/value heads (" + n(m.kv_heads) + ")",
               where_prefix, "tensor");
  }
  if (h.total_gpus() % (c.tensor * c.context_parallel * c.pipeline) != 0) {
    return Bad("tensor x context_parallel x pipeline (" +
                   n(c.tensor * c.context_parallel * c.pipeline) + ") must divide the " +
                   n(h.total_gpus()) + " GPUs",
               where_prefix, c.context_parallel > 1 ? "context_parallel" : "pipeline");
  }
  if (m.sequence_length % (2 * c.context_parallel) != 0 && c.context_parallel > 1) {
    return Bad("context_parallel " + n(c.context_parallel) + " needs a sequence length (" +
                   n(m.sequence_length) +
                   ") that splits into 2 x context_parallel equal chunks (the causal load "
                   "balance)",
               where_prefix, "context_parallel");
  }
  const bool uneven = c.first_stage_layers != 0 || c.last_stage_layers != 0;
  if (uneven) {
    const int64_t first = c.first_stage_layers, last = c.last_stage_layers;
    const int64_t middle = m.layers - first - last;
    const int64_t middle_stages = c.pipeline - 2;
    std::string why;
    if (c.pipeline < 2)
      why = "needs pipeline >= 2";
    else if (first < 1 || last < 1)
      why = "must both be >= 1";
    else if (middle_stages == 0 && middle != 0)
      why = "must add up to the " + n(m.layers) + " layers on 2 stages";
    else if (middle_stages > 0 && (middle < middle_stages || middle % middle_stages != 0))
      why = "must leave the middle " + n(middle_stages) + " stages an equal share of the other " +
            n(middle) + " layers";
    if (!why.empty()) {
      return Bad(
          "first_stage_layers (" + n(first) + ") and last_stage_layers (" + n(last) + ") " + why,
          where_prefix, "first_stage_layers");
    }
  } else if (m.layers < c.pipeline * c.virtual_stages) {
    // Layers that do not divide are split as evenly as they go (StageLayers); each model chunk
    // needs one.
    return Bad("pipeline x virtual_stages (" + n(c.pipeline * c.virtual_stages) + ") exceeds the " +
                   n(m.layers) + " layers (each model chunk holds one or more)",
               where_prefix, c.virtual_stages > 1 ? "virtual_stages" : "pipeline");
  }
  if (c.recompute_layers < 0 || (c.recompute_layers > 0 && c.recompute != Recompute::kFull)) {
    return Bad(
        "recompute_layers needs recompute: full (it counts the layers of each stage "
        "recomputed)",
        where_prefix, "recompute_layers");
  }
  if (c.recompute_layers > MaxStageLayers(c, m.layers)) {
    return Bad("recompute_layers (" + n(c.recompute_layers) + ") exceeds the " +
                   n(MaxStageLayers(c, m.layers)) + " layers of a stage",
               where_prefix, "recompute_layers");
  }
  if (c.virtual_stages > 1 && c.pipeline == 1) {
    return Bad("virtual_stages > 1 needs pipeline > 1", where_prefix, "virtual_stages");
  }
  if (c.sequence_parallel && c.tensor == 1) {
    return Bad("sequence_parallel needs tensor > 1", where_prefix, "sequence_parallel");
  }
  if (c.zero_stage < 0 || c.zero_stage > 3) {
    return Bad("zero_stage must be 0, 1, 2 or 3", where_prefix, "zero_stage");
  }
  if (c.offload_optimizer && c.zero_stage == 0) {
    return Bad("offload_optimizer needs zero_stage >= 1 (each rank offloads its shard)",
               where_prefix, "offload_optimizer");
  }
  if (c.offload_optimizer && !h.host.given()) {
    return Bad("offload_optimizer needs 'hardware.host' (host memory, its bandwidth, PCIe)",
               where_prefix, "offload_optimizer");
  }
  const int64_t d = DataParallel(c, h.total_gpus());
  if (c.gradient_compression != GradCompression::kNone) {
    std::string why;
    if (c.zero_stage > 1) why = "zero_stage <= 1 (the hook replaces DDP's gradient all-reduce)";
    if (d == 1) why = "data parallelism (d > 1)";
    if (!h.host.given()) why = "'hardware.host' (the hook compresses on the host)";
    if (!why.empty()) {
      return Bad("gradient_compression needs " + why, where_prefix, "gradient_compression");
    }
  }
  const int64_t global = spec.training.global_batch;
  if (global % (c.micro_batch * d) != 0) {
    return Bad("'training.global_batch' (" + n(global) +
                   ") must be a multiple of micro_batch x data-parallel size (" + n(c.micro_batch) +
                   " x " + n(d) + " = " + n(c.micro_batch * d) +
                   ") so that every GPU runs whole micro-batches",
               "training.", "global_batch");
  }
  return base::OkStatus();
}

base::Report ParallelismToReport(const ParallelConfig& c, int64_t gpus, int64_t global_batch) {
  const int64_t d = DataParallel(c, gpus);
  base::Report r = base::Report::object();
  r["tensor"] = c.tensor;
  r["pipeline"] = c.pipeline;
  r["virtual_stages"] = c.virtual_stages;
  r["sequence_parallel"] = c.sequence_parallel;
  r["context_parallel"] = c.context_parallel;
  r["zero_stage"] = c.zero_stage;
  r["recompute"] = std::string(RecomputeName(c.recompute));
  if (c.recompute_layers > 0) r["recompute_layers"] = c.recompute_layers;
  if (c.first_stage_layers > 0 || c.last_stage_layers > 0) {
    r["first_stage_layers"] = c.first_stage_layers;
    r["last_stage_layers"] = c.last_stage_layers;
  }
  r["offload_optimizer"] = c.offload_optimizer;
  r["gradient_compression"] = std::string(GradCompressionName(c.gradient_compression));
  r["micro_batch"] = c.micro_batch;
  r["data_parallel"] = d;
  r["gradient_accumulation_steps"] = MicroBatchesPerStep(c, gpus, global_batch);
  return r;
}

}  // namespace seedance::plan
