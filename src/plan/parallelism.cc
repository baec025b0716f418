#include "seedance/plan/parallelism.h"

#include <string>

#include "seedance/base/enum_names.h"
#include "seedance/plan/job_spec.h"

namespace seedance::plan {
namespace {

constexpr base::EnumTable<Recompute, 3> kRecomputeNames = {
    {{Recompute::kNone, "none"}, {Recompute::kSelective, "selective"}, {Recompute::kFull, "full"}}};

base::Status Bad(std::string what, std::string_view prefix, std::string_view key) {
  return base::InvalidArgumentError(std::move(what), std::string(prefix) + std::string(key));
}

}  // namespace

std::string_view RecomputeName(Recompute r) { return base::EnumName(kRecomputeNames, r); }

base::StatusOr<Recompute> ParseRecompute(std::string_view text, std::string_view where) {
  return base::ParseEnum(kRecomputeNames, text, where);
}

base::Status CheckParallelism(const ParallelConfig& c, const JobSpec& spec,
                              std::string_view where_prefix) {
  const ModelSpec& m = spec.model;
  const HardwareSpec& h = spec.hardware;
  auto n = [](int64_t v) { return std::to_string(v); };
  if (c.tensor < 1 || c.pipeline < 1 || c.virtual_stages < 1 || c.micro_batch < 1) {
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
  if (h.total_gpus() % (c.tensor * c.pipeline) != 0) {
    return Bad("tensor x pipeline (" + n(c.tensor * c.pipeline) + ") must divide the " +
                   n(h.total_gpus()) + " GPUs",
               where_prefix, "pipeline");
  }
  if (m.layers % (c.pipeline * c.virtual_stages) != 0) {
    return Bad("pipeline x virtual_stages (" + n(c.pipeline * c.virtual_stages) +
                   ") must divide the " + n(m.layers) + " layers",
               where_prefix, c.virtual_stages > 1 ? "virtual_stages" : "pipeline");
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
  if (c.virtual_stages > 1 && (global / (c.micro_batch * d)) % c.pipeline != 0) {
    return Bad("interleaved 1F1B needs the micro-batches per step to be a multiple of pipeline",
               where_prefix, "virtual_stages");
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
  r["zero_stage"] = c.zero_stage;
  r["recompute"] = std::string(RecomputeName(c.recompute));
  r["offload_optimizer"] = c.offload_optimizer;
  r["gradient_compression"] = std::string(GradCompressionName(c.gradient_compression));
  r["micro_batch"] = c.micro_batch;
  r["data_parallel"] = d;
  r["gradient_accumulation_steps"] = global_batch / (c.micro_batch * d);
  return r;
}

}  // namespace seedance::plan
