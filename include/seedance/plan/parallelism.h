// How a training job is laid out on its GPUs: the configuration the planner evaluates and
// searches (feature CLI-1). The job spec's optional `parallelism:` section states the one a job
// runs with today; the planner's recommendation is the same struct.
//
//   data parallel size  d = gpus / (tensor * context * pipeline)
//   micro-batches per optimizer step per pipeline  m = global_batch / (micro_batch * d)
//
// Placement: tensor-parallel groups are consecutive GPUs inside one node, context parallelism
// next, data parallelism next, pipeline stages outermost (across nodes first), as Megatron-LM
// orders its groups.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "seedance/base/numeric_format.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/plan/grad_compression.h"

namespace seedance::plan {

struct JobSpec;

// Activation recomputation: none; selective (the attention core — scores, softmax — is dropped
// and recomputed in the backward pass, Korthikanti et al. 2022, Megatron's `--recompute-granularity
// selective`); op-selective (PyTorch's per-operator selective activation checkpointing as
// torchtitan runs it: the attention kernel's outputs and every other matmul's output are kept,
// everything else is recomputed); full (each layer keeps only its input and recomputes the rest;
// `recompute_layers` limits it to that many layers of each stage, Megatron's
// `--recompute-num-layers`).
enum class Recompute { kNone, kSelective, kOpSelective, kFull };
std::string_view RecomputeName(Recompute r);
base::StatusOr<Recompute> ParseRecompute(std::string_view text, std::string_view where);

struct ParallelConfig {
  int64_t tensor = 1;              // TP degree
  int64_t pipeline = 1;            // PP degree
  int64_t virtual_stages = 1;      // > 1: interleaved 1F1B with this many model chunks per GPU
  bool sequence_parallel = false;  // with TP: norms and dropout sharded along the sequence
  // CP degree: each sequence split over this many GPUs, attention as a ring over them
  // (Megatron's --context-parallel-size, torchtitan's context_parallel_degree).
  int64_t context_parallel = 1;
  int zero_stage = 0;  // 0..3 (FSDP full shard = 3, SHARD_GRAD_OP = 2)
  Recompute recompute = Recompute::kNone;
  // With full recomputation: the layers of each stage recomputed (0: all of them).
  int64_t recompute_layers = 0;
  // Pipelines whose end stages hold other layer counts than the middle ones (Megatron's
  // --decoder-first/last-pipeline-num-layers; BLOOM's 70 layers on 12 stages: 5, 6 x 10, 5).
  // 0: as even a split as the layers allow (StageLayers).
  int64_t first_stage_layers = 0;
  int64_t last_stage_layers = 0;
  int64_t micro_batch = 1;  // sequences per GPU per forward/backward pass
  // ZeRO-Offload: fp32 master weights and optimizer states in host memory, the optimizer step on
  // the CPU (DeepSpeed's offload_optimizer); needs ZeRO >= 1 and the spec's hardware.host.
  bool offload_optimizer = false;
  // Seedance's DDP hook instead of the gradient all-reduce (grad_compression.h): ZeRO 0/1, d > 1
  // and the spec's hardware.host.
  GradCompression gradient_compression = GradCompression::kNone;
  // The compute precision and the optimizer states' precision, when the search chose them
  // (training.search_precisions / search_optimizer_states); nullopt: the spec's.
  std::optional<base::NumericFormat> precision = std::nullopt;
  std::optional<base::NumericFormat> optimizer_states = std::nullopt;

  bool operator==(const ParallelConfig&) const = default;
};

// The data-parallel size for `gpus` GPUs.
inline int64_t DataParallel(const ParallelConfig& c, int64_t gpus) {
  return gpus / (c.tensor * c.context_parallel * c.pipeline);
}

// The micro-batches each pipeline runs per optimizer step (the gradient accumulation steps):
// global_batch / (micro_batch x data-parallel size), 0 when there are no GPUs to run it.
inline int64_t MicroBatchesPerStep(const ParallelConfig& c, int64_t gpus, int64_t global_batch) {
  const int64_t per_step = c.micro_batch * DataParallel(c, gpus);
  return per_step > 0 ? global_batch / per_step : 0;
}

// The layers pipeline stage `stage` (0-based) holds: the stated end-stage counts, the rest spread
// evenly over the middle stages. Without them, layers that pipeline x virtual_stages does not
// divide are split as DeepSpeed's uniform partition splits them: the p x v model chunks get layers
// / (p v) each and the first layers % (p v) chunks one more; stage s holds chunks s, s + p, ... (so
// the earlier stages, which also hold the most micro-batches, are the fuller ones).
int64_t StageLayers(const ParallelConfig& c, int64_t layers, int64_t stage);
// Whether every model chunk holds the same number of layers (no end-stage counts, and
// pipeline x virtual_stages divides the layers): the only split Megatron-LM runs without
// --decoder-first/last-pipeline-num-layers.
bool EvenStages(const ParallelConfig& c, int64_t layers);
// The most layers any stage holds.
int64_t MaxStageLayers(const ParallelConfig& c, int64_t layers);

// Whether `c` is a valid layout of `spec` (a training job): TP within a node and dividing the
// attention and key/value heads, TP x CP x PP dividing the GPUs, CP dividing the sequence,
// PP x virtual stages at most the layers (the middle stages sharing theirs equally when the end
// stages are stated), sequence parallelism only with TP, ZeRO 0..3, optimizer offload only with
// ZeRO >= 1 and a described host, gradient compression only with ZeRO <= 1, data parallelism and a
// described host, and a micro-batch such that micro_batch x d divides the global batch. The error
// names the key (`where_prefix` + key).
base::Status CheckParallelism(const ParallelConfig& c, const JobSpec& spec,
                              std::string_view where_prefix = "parallelism.");

// The spec's keys: tensor, pipeline, virtual_stages, sequence_parallel, context_parallel,
// zero_stage, recompute (with recompute_layers, first_stage_layers and last_stage_layers when
// set), offload_optimizer, gradient_compression, micro_batch.
base::Report ParallelismToReport(const ParallelConfig& c, int64_t gpus, int64_t global_batch);

}  // namespace seedance::plan
