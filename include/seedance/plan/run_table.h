// Measured training runs in the columns of bench/plan/published_runs.csv (feature CLI-1): the
// planner's calibration set, a user's own runs for `optimize --calibrate`, and the rows that
// `seedance.torch.enable(..., record_run=...)` writes. One row is one run: the job (model,
// training, hardware, framework) and the layout it ran with, and what was measured.
//
// Columns (docs/job-spec.md, "Runs"): kind (run, model_states or memory), id, group, source,
// then the job spec's keys by their last name — family, layers, hidden_size, attention_heads,
// kv_heads, ffn_size, vocab_size, sequence_length, tie_embeddings, gpu, gpus_per_node, nodes,
// inter_node_gbytes_per_s, global_batch, micro_batch, precision, optimizer, attention,
// framework, and the parallelism keys tensor, pipeline, virtual_stages, sequence_parallel,
// context_parallel, zero_stage, recompute, recompute_layers, first_stage_layers,
// last_stage_layers — then the measurements: published_step_s, published_tokens_per_s_per_gpu,
// published_tflops_per_gpu, published_mfu, published_gb_per_gpu, with flops_formula naming how
// the source counts FLOPs (palm, palm-causal or megatron-recompute; empty: palm). Model-state
// rows use parameters and data_parallel. An empty field is the job spec's default; notes is free
// text. Columns may come in any order; unknown columns are an error.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/job_spec.h"

namespace seedance::plan {

// How a source counts the FLOPs behind its TFLOP/s and MFU figures, per token:
//   palm                6 N + 12 L h s (N: matmul weights with the LM head; full attention)
//   palm-causal         6 N + 6 L h s (causal attention counted half: Megatron-Bridge)
//   megatron-recompute  8 N + 16 L h s (full recomputation's extra forward counted:
//                       Megatron-DeepSpeed's logged "hardware" TFLOP/s)
enum class FlopsFormula { kPalm, kPalmCausal, kMegatronRecompute };

enum class RunKind { kRun, kModelStates, kMemory };

struct RunRecord {
  RunKind kind = RunKind::kRun;
  std::string id, group, source;
  std::string where;  // "<file>:<line>"
  JobSpec spec;       // kRun and kMemory
  // What was measured (each only when the source states it).
  std::optional<double> step_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu, gb_per_gpu;
  FlopsFormula formula = FlopsFormula::kPalm;
  // kModelStates: the ZeRO paper's rows.
  int64_t parameters = 0, data_parallel = 0;
};

// Parses a runs table; `file` names it in errors ("<file>:<line>: <column>: ...").
base::StatusOr<std::vector<RunRecord>> ParseRunTable(std::string_view csv, const std::string& file,
                                                     const cost::GpuCatalog& catalog);

// The measured step time a row implies: the stated step time, else tokens/s per GPU, else MFU,
// else TFLOP/s per GPU through the row's FLOPs formula; nullopt when the row states none.
std::optional<double> MeasuredStepSeconds(const RunRecord& r, const cost::GpuSpec& gpu);

// Which figure MeasuredStepSeconds used ("step_s", "tokens_per_s_per_gpu", "mfu",
// "tflops_per_gpu").
std::string_view MeasuredFigure(const RunRecord& r);

// Model FLOPs per token under `formula`.
double FlopsPerToken(const ModelSpec& model, FlopsFormula formula);

// The header line of a runs table, and one row for a measured run (the columns above; the
// measurements given, the others empty): what record_run appends.
std::string RunTableHeader();
std::string FormatRunRow(const RunRecord& r);

}  // namespace seedance::plan
