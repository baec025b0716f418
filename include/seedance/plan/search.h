// The planner's search (feature CLI-1): every layout of a training job that the model admits —
// tensor parallelism (dividing the heads, inside a node), pipeline parallelism (dividing the
// layers; 1F1B, and interleaved with 2 chunks), sequence parallelism with TP, ZeRO 0-3,
// recomputation none/selective/full, and every micro-batch that keeps the global batch exact —
// evaluated by the memory model and the time model, the ones that fit ranked by step time (the
// GPUs are fixed, so the fastest is also the cheapest per step and per token), a layout in a
// precision the spec did not state ranked as if SearchSpace::precision_change_threshold slower
// per change.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/cost/power.h"
#include "seedance/plan/intervals.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/links.h"
#include "seedance/plan/memory_model.h"
#include "seedance/plan/model_figures.h"
#include "seedance/plan/parallelism.h"
#include "seedance/plan/time_model.h"

namespace seedance::plan {

// The fewest tokens of a sequence context parallelism leaves a GPU (the search's bound; a stated
// layout may hold fewer).
inline constexpr int64_t kMinContextChunk = 1024;

// What the search enumerates beyond the model's own limits.
struct SearchSpace {
  bool every_micro_batch = false;  // false: powers of two only
  int64_t max_virtual_stages = 2;  // interleaved 1F1B with up to this many chunks per GPU
  // A precision the spec did not state (search_precisions, search_optimizer_states) must buy
  // this share of step time, per precision changed, to rank above the stated one: numerics are
  // not traded for a rounding error.
  double precision_change_threshold = 0.01;
};

// The memory model's settings with the public fit's measured overheads (coefficients.h), as
// HardwareModel starts from the public fit's coefficients.
MemorySettings PublicMemorySettings();

struct PlanSettings {
  SearchSpace space;
  MemorySettings memory = PublicMemorySettings();
  HardwareModel hardware;
  cost::PowerCoefficients power;
  // Where the intervals' spreads and the calibrated region come from (intervals.h).
  const PublicFit* fit = &BuiltInFit();
};

// One layout, evaluated.
struct Evaluation {
  ParallelConfig config;
  MemoryEstimate memory;
  StepTime time;
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;     // achieved, model FLOPs
  double hardware_tflops_per_gpu = 0;  // achieved, with recomputation
  double mfu = 0;                      // model FLOPs / (GPUs x dense peak x step time)
  double hfu = 0;
  double cost_per_step_usd = 0;
  double energy_per_step_j = 0;   // facility energy (node power model x PUE)
  double power_w = 0;             // facility power of the job's nodes while it runs
  EvaluationIntervals intervals;  // 90% prediction intervals of the figures above
};

// Evaluates `c` (which must pass CheckParallelism) on the spec's hardware.
Evaluation Evaluate(const JobSpec& spec, const cost::GpuSpec& gpu, const ParallelConfig& c,
                    const PlanSettings& settings = {});

struct SearchResult {
  std::vector<Evaluation> fitting;  // fastest first
  int64_t candidates = 0;           // layouts evaluated
};

SearchResult Search(const JobSpec& spec, const cost::GpuSpec& gpu,
                    const PlanSettings& settings = {});

// The evaluation's figures and its configuration (under the spec's `parallelism` keys).
base::Report EvaluationToReport(const Evaluation& e, const JobSpec& spec);

// One line per dimension of `best` (tensor, pipeline, zero_stage, recompute, micro_batch and,
// with TP, sequence_parallel): what each other valid value of that dimension alone would do —
// the change in step time and the memory, or that it does not fit.
std::vector<std::string> Reasons(const Evaluation& best, const JobSpec& spec,
                                 const cost::GpuSpec& gpu, const PlanSettings& settings);

}  // namespace seedance::plan
