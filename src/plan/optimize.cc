#include "seedance/plan/optimize.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "seedance/base/enum_names.h"
#include "seedance/cost/pareto.h"
#include "seedance/plan/calibration.h"
#include "seedance/plan/checkpoint.h"
#include "seedance/plan/html_report.h"
#include "seedance/plan/links.h"
#include "seedance/plan/memory_model.h"
#include "seedance/plan/model_figures.h"
#include "seedance/plan/recompute.h"
#include "seedance/plan/search.h"
#include "seedance/plan/serving.h"
#include "seedance/plan/step_replay.h"
#include "seedance/plan/time_model.h"
#include "seedance/plan/verdict.h"

namespace seedance::plan {
namespace {

using base::Report;

Report TrainingFigures(const JobSpec& spec, const cost::GpuSpec& gpu, const ModelFigures& f) {
  const TrainingSpec& t = spec.training;
  const int64_t gpus = spec.hardware.total_gpus();
  const int64_t tokens_per_step = t.global_batch * spec.model.sequence_length;
  const double flops_per_token = TrainingFlopsPerToken(spec.model, f);
  const double flops_per_step = flops_per_token * static_cast<double>(tokens_per_step);
  // The fastest precision the plan may use: the stated one or one the search may choose.
  double peak_tflops = *gpu.DenseTflops(t.precision);
  for (base::NumericFormat p : t.search_precisions) {
    peak_tflops = std::max(peak_tflops, gpu.DenseTflops(p).value_or(0));
  }
  const double peak_flops = peak_tflops * 1e12 * static_cast<double>(gpus);
  const double step_seconds = flops_per_step / peak_flops;

  Report r = Report::object();
  r["parameters"] = f.parameters;
  r["layer_parameters"] = f.layer_parameters;
  r["embedding_parameters"] = f.embedding_parameters;
  // The stored weights: 16-bit in fp8 training too (the memory model's accounting).
  r["weight_bytes"] = f.parameters * StateBytesFor(t).weight;
  r["tokens_per_step"] = tokens_per_step;
  r["model_flops_per_token"] = flops_per_token;
  r["model_flops_per_step"] = flops_per_step;
  r["cluster_peak_tflops"] = peak_flops / 1e12;
  // At 100% of the dense datasheet peak: no real step is faster.
  r["step_seconds_lower_bound"] = step_seconds;
  r["step_cost_usd_lower_bound"] =
      step_seconds / 3600.0 * spec.price_per_gpu_hour_usd * static_cast<double>(gpus);
  return r;
}

// A short entry for lists: the layout and its figures.
Report Summary(const Evaluation& e, const JobSpec& spec) {
  Report r = Report::object();
  r["parallelism"] =
      ParallelismToReport(e.config, spec.hardware.total_gpus(), spec.training.global_batch);
  r["step_time_s"] = e.time.step_s;
  r["memory_bytes_per_gpu"] = e.memory.total_bytes;
  r["memory_fit"] = std::string(MemoryFitName(MemoryFitOf(e.intervals, e.memory.capacity_bytes)));
  r["tokens_per_s_per_gpu"] = e.tokens_per_s_per_gpu;
  r["mfu"] = e.mfu;
  r["power_w"] = e.power_w;
  // The list's figures' intervals (the full set, with the regime and notes, is before's and
  // after's).
  const Report all = IntervalsToReport(e.intervals);
  r["interval"] = {{"step_time_s", all["step_time_s"]},
                   {"memory_bytes_per_gpu", all["memory_bytes_per_gpu"]},
                   {"tokens_per_s_per_gpu", all["tokens_per_s_per_gpu"]},
                   {"mfu", all["mfu"]}};
  return r;
}

// The step-time saving of `after` over `before` with its 90% interval (intervals.h), and whether
// it is a recommendation: significant (the interval excludes no saving) and at least the spec's
// planning.min_gain at the interval's pessimistic end.
struct SavingFigures {
  Interval ratio;  // after / before step time
  bool significant = false;
  bool recommended = false;
};

SavingFigures JudgeSaving(const Evaluation& before, const Evaluation& after, const JobSpec& spec,
                          const PublicFit& fit) {
  SavingFigures f;
  f.ratio =
      RatioInterval(before.time.step_s, after.time.step_s, before.intervals, after.intervals, fit);
  f.significant = f.ratio.high < 1;
  f.recommended = f.significant && 1 - f.ratio.high >= spec.planning.min_gain;
  return f;
}

Report Saving(const Evaluation& before, const Evaluation& after, const SavingFigures& f) {
  Report r = Report::object();
  r["step_time_pct"] = (1 - after.time.step_s / before.time.step_s) * 100;
  r["step_time_pct_interval"] = {(1 - f.ratio.high) * 100, (1 - f.ratio.low) * 100};
  r["significant"] = f.significant;
  if (!f.significant) {
    r["note"] = "not significant: the 90% interval of the saving includes zero";
  }
  r["throughput_ratio"] = after.tokens_per_s_per_gpu / before.tokens_per_s_per_gpu;
  r["throughput_ratio_interval"] = {1 / f.ratio.high, 1 / f.ratio.low};
  r["cost_per_step_usd"] = before.cost_per_step_usd - after.cost_per_step_usd;
  r["energy_per_step_j"] = before.energy_per_step_j - after.energy_per_step_j;
  return r;
}

// The Pareto front of the fitting layouts over (throughput max, memory min, power min), less the
// axes on which every layout is the same (power, when the layouts differ only in how they
// split the same GPUs' work): indexes into `fitting`, ascending (fastest first), and the axes.
struct FrontAxes {
  std::vector<size_t> layouts;
  std::vector<std::string> objectives;  // "tokens_per_s_per_gpu max", ...
  Report constant = Report::object();   // axis -> the value every layout has
};

base::StatusOr<FrontAxes> FrontOf(const std::vector<Evaluation>& fitting) {
  struct Axis {
    const char* name;
    cost::Direction direction;
    double (*of)(const Evaluation&);
  };
  static constexpr Axis kAxes[] = {
      {"tokens_per_s_per_gpu", cost::Direction::kMax,
       [](const Evaluation& e) { return e.tokens_per_s_per_gpu; }},
      {"memory_bytes_per_gpu", cost::Direction::kMin,
       [](const Evaluation& e) { return static_cast<double>(e.memory.total_bytes); }},
      {"power_w", cost::Direction::kMin, [](const Evaluation& e) { return e.power_w; }}};
  FrontAxes f;
  std::vector<const Axis*> used;
  for (const Axis& axis : kAxes) {
    const double first = axis.of(fitting.front());
    const bool varies = std::any_of(fitting.begin(), fitting.end(),
                                    [&](const Evaluation& e) { return axis.of(e) != first; });
    if (varies) {
      used.push_back(&axis);
      f.objectives.push_back(std::string(axis.name) +
                             (axis.direction == cost::Direction::kMax ? " max" : " min"));
    } else {
      f.constant[axis.name] = first;
    }
  }
  if (used.empty()) {  // every layout alike: the fastest stands for them
    f.layouts = {0};
    return f;
  }
  std::vector<double> points;
  points.reserve(fitting.size() * used.size());
  std::vector<cost::Direction> dirs;
  dirs.reserve(used.size());
  for (const Axis* axis : used) dirs.push_back(axis->direction);
  for (const Evaluation& e : fitting) {
    for (const Axis* axis : used) points.push_back(axis->of(e));
  }
  SEEDANCE_ASSIGN_OR_RETURN(f.layouts, cost::UniqueFront(points, dirs));
  std::sort(f.layouts.begin(), f.layouts.end());
  return f;
}

Report FrontToReport(const std::vector<Evaluation>& fitting, const FrontAxes& front,
                     const JobSpec& spec) {
  Report r = Report::object();
  r["objectives"] = front.objectives;
  if (!front.constant.empty()) r["same_for_every_layout"] = front.constant;
  r["size"] = front.layouts.size();
  Report list = Report::array();
  for (size_t i : front.layouts) list.push_back(Summary(fitting[i], spec));
  r["layouts"] = list;
  return r;
}

// When nothing fits: the smallest change that would make the job fit — more nodes (doubling),
// else a shorter sequence (halving) — under the spec's own keys.
Report SmallestChange(const JobSpec& spec, const cost::GpuSpec& gpu, const PlanSettings& settings) {
  Report r = Report::object();
  for (int64_t factor = 2; factor <= 64; factor *= 2) {
    JobSpec more = spec;
    more.hardware.nodes = spec.hardware.nodes * factor;
    if (!Search(more, gpu, settings).fitting.empty()) {
      r["hardware.nodes"] = more.hardware.nodes;
      return r;
    }
  }
  for (int64_t seq = spec.model.sequence_length / 2; seq >= 128; seq /= 2) {
    JobSpec shorter = spec;
    shorter.model.sequence_length = seq;
    if (!Search(shorter, gpu, settings).fitting.empty()) {
      r["model.sequence_length"] = seq;
      return r;
    }
  }
  r["none_found"] = "neither up to 64 times the nodes nor a sequence down to 128 tokens fits";
  return r;
}

// For a layout that recomputes every layer the same way: the per-layer plan (MEM-5) that fits
// the same memory at the least recompute time — which parts of which layers of the stage to
// drop, each layer's activations held for the in-flight micro-batches.
base::StatusOr<Report> RecomputeSection(const JobSpec& spec, const cost::GpuSpec& gpu,
                                        const Evaluation& e, const PlanSettings& settings) {
  ParallelConfig keep_all = e.config;
  keep_all.recompute = Recompute::kNone;
  keep_all.recompute_layers = 0;
  const int64_t micro_batches =
      MicroBatchesPerStep(e.config, spec.hardware.total_gpus(), spec.training.global_batch);
  const auto copies = static_cast<int64_t>(std::ceil(
      InFlightMicroBatches(e.config, micro_batches, 0, RunningFramework(spec, e.config))));
  LayerPartSeconds seconds =
      LayerPartForwardSeconds(spec, keep_all, gpu, settings.hardware);  // per micro-batch
  const auto per_step = static_cast<double>(micro_batches);
  seconds = {seconds.attention_s * per_step, seconds.mlp_s * per_step, seconds.norms_s * per_step};
  LayerActivations layer =
      LayerActivationParts(spec.model, TrainingOf(spec.training, e.config), keep_all, seconds,
                           RunningFramework(spec, e.config));
  layer.kept_bytes *= copies;
  for (DroppablePart& part : layer.parts) part.bytes *= copies;
  const std::vector<LayerActivations> chain(
      static_cast<size_t>(StageLayers(e.config, spec.model.layers, 0)), layer);
  // The bytes left for activations once everything else the estimate holds is placed, within
  // the headroom a recommendation leaves (the layout itself was chosen within it).
  const MemoryEstimate& m = e.memory;
  const std::optional<Framework> running = RunningFramework(spec, e.config);
  const double overhead =
      running ? settings.memory.measured_overhead_fraction[static_cast<size_t>(*running)] : 0;
  const double capacity = static_cast<double>(gpu.MemoryBytes()) * (1 - spec.planning.headroom);
  const double usable = (capacity / (1 + overhead) - static_cast<double>(m.reserve_bytes)) /
                        (1 + settings.memory.fragmentation_fraction);
  const auto budget = static_cast<int64_t>(usable) - m.model_state_bytes - m.logits_bytes -
                      m.temporary_bytes - m.pipeline_buffer_bytes;
  SEEDANCE_ASSIGN_OR_RETURN(RecomputePlan plan, PlanRecompute(chain, budget));
  Report r = RecomputePlanToReport(plan);
  r["activation_budget_bytes"] = budget;
  r["uniform_recompute_s"] = e.time.recompute_s;
  if (plan.fits) {
    r["step_time_s_with_plan"] = e.time.step_s - e.time.recompute_s + plan.recompute_s;
  }
  r["scope"] =
      "per step on one GPU of the first pipeline stage; apply it with "
      "seedance.torch.apply_recompute_plan";
  return r;
}

// How often the recommended layout should checkpoint (spec.reliability given).
Report CheckpointSection(const JobSpec& spec, const Evaluation& e) {
  const StateBytes b = StateBytesFor(TrainingOf(spec.training, e.config),
                                     RunningFramework(spec, e.config), &e.config);
  const int64_t parameters = ComputeModelFigures(spec.model).parameters;
  const int64_t bytes = parameters * (b.weight + b.master + b.optimizer);
  Report r = CheckpointPlanToReport(
      PlanCheckpoints(spec.reliability, bytes, spec.hardware.total_gpus(), e.time.step_s));
  r["for"] = "after";
  r["method"] = "Daly 2006 (Young 1974 beside it), whole steps of the recommended layout";
  return r;
}

// The fastest fitting layout `framework` runs, written as its configuration. A spec that names
// no framework had each layout counted as the first framework that runs it (RunningFramework);
// the written one is counted again as `framework` runs it (its kernels, copies and buffers), and
// must still fit with the headroom.
base::StatusOr<Report> EmitSection(Framework framework, const JobSpec& spec,
                                   const std::vector<Evaluation>& fitting, const cost::GpuSpec& gpu,
                                   const PlanSettings& settings) {
  const std::string after_blocker = Inexpressible(framework, spec, fitting.front().config);
  // Accelerate launches FSDP2 as the FSDP plan runs it, DDP with DDP's default buckets
  // (FrameworkTraits::ddp_buckets_beside_gradients), or DeepSpeed when the spec names it.
  const bool recount = !spec.framework || (framework == Framework::kAccelerate &&
                                           spec.framework != Framework::kDeepSpeed);
  JobSpec as_written = spec;
  if (recount) as_written.framework = framework;
  const double headroom_capacity =
      static_cast<double>(gpu.MemoryBytes()) * (1 - spec.planning.headroom);
  std::vector<Evaluation> recounted;
  for (const Evaluation& listed : fitting) {
    if (!Inexpressible(framework, spec, listed.config).empty()) continue;
    recounted.push_back(recount ? Evaluate(as_written, gpu, listed.config, settings) : listed);
    if (static_cast<double>(recounted.back().memory.total_bytes) > headroom_capacity ||
        !recounted.back().memory.fits) {
      recounted.pop_back();
    }
  }
  std::stable_sort(
      recounted.begin(), recounted.end(),
      [](const Evaluation& a, const Evaluation& b) { return a.time.step_s < b.time.step_s; });
  for (const Evaluation& e : recounted) {
    Report r = Report::object();
    r["framework"] = FrameworkName(framework);
    r["parallelism"] =
        ParallelismToReport(e.config, spec.hardware.total_gpus(), spec.training.global_batch);
    const bool same = e.config == fitting.front().config;
    r["same_as_after"] = same;
    if (!same) {
      r["differs_from_after_because"] =
          !after_blocker.empty()
              ? after_blocker
              : "counted as " + std::string(FrameworkName(framework)) +
                    " runs it (its kernels, copies and buffers), the recommended layout is slower "
                    "or does not fit with the headroom";
    }
    r["step_time_s"] = e.time.step_s;
    r["memory_bytes_per_gpu"] = e.memory.total_bytes;
    r["content"] = EmitContent(framework, spec, e.config);
    const std::string note = EmitNote(framework, spec);
    if (!note.empty()) r["note"] = note;
    return r;
  }
  return base::FailedPreconditionError("no layout that fits can be written for " +
                                           std::string(FrameworkName(framework)) +
                                           "; the fastest one cannot because " + after_blocker,
                                       "emit");
}

// The fragmentation margin every memory figure of a training report uses: the replayed margin of
// the stated layout, raised to the recommended layout's until the recommendation, searched with
// it, needs no more (at most three rounds). A failed replay keeps the assumed default.
struct Margin {
  Report section = Report::object();
  double stated = 0;  // the stated layout's own replayed margin (the default where it failed)
  std::optional<SearchResult> found;  // the search with the final margin (not evaluate-only)
};

base::StatusOr<Margin> ReplayMargin(const JobSpec& spec, const cost::GpuSpec& gpu,
                                    bool evaluate_only, PlanSettings& settings) {
  const ModelFigures figures = ComputeModelFigures(spec.model);
  Margin m;
  m.section["method"] =
      "the planned step's buffers replayed through the caching allocator (PyTorch's rules); "
      "margin = reserved peak / requested peak - 1, the largest of the stated and the "
      "recommended layouts'";
  const auto before = ReplayPlannedStep(spec, figures, spec.parallelism);
  if (!before.ok()) {
    m.section["method"] = "assumed (the replay failed: " + before.status().ToString() + ")";
    m.section["margin_fraction"] = settings.memory.fragmentation_fraction;
    m.stated = settings.memory.fragmentation_fraction;
    if (!evaluate_only) m.found = Search(spec, gpu, settings);
    return m;
  }
  settings.memory.fragmentation_fraction = before->margin_fraction;
  m.stated = before->margin_fraction;
  m.section["before"] = StepReplayToReport(*before);
  if (!evaluate_only) {
    for (int round = 0;; ++round) {
      m.found = Search(spec, gpu, settings);
      if (m.found->fitting.empty() || round == 3) break;
      SEEDANCE_ASSIGN_OR_RETURN(StepReplay after,
                                ReplayPlannedStep(spec, figures, m.found->fitting.front().config));
      m.section["after"] = StepReplayToReport(after);
      SEEDANCE_ASSIGN_OR_RETURN(StepReplay ours,
                                ReplayPlannedStep(spec, figures, m.found->fitting.front().config,
                                                  mem::AllocatorPolicy::kSeedance));
      m.section["after_with_seedance_allocator"] = StepReplayToReport(ours);
      if (after.margin_fraction <= settings.memory.fragmentation_fraction) break;
      settings.memory.fragmentation_fraction = after.margin_fraction;
    }
  }
  m.section["margin_fraction"] = settings.memory.fragmentation_fraction;
  m.section["scope"] =
      "the memory model's buffers, not every tensor a framework allocates (docs/design/plan.md)";
  return m;
}

// The user's calibration (--calibrate): the public fit with the refitted coefficients and
// measured memory overheads.
base::StatusOr<Report> CalibrationSection(const OptimizeOptions& options,
                                          const cost::GpuCatalog& catalog, PublicFit& fit) {
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<RunRecord> records,
                            ParseRunTable(*options.calibrate_csv, options.calibrate_file, catalog));
  const std::vector<FitRow> rows = FitRows(records, catalog);
  const bool memory_rows = std::any_of(records.begin(), records.end(), [](const RunRecord& r) {
    return r.kind != RunKind::kModelStates && r.gb_per_gpu.has_value();
  });
  if (rows.empty() && !memory_rows) {
    return base::InvalidArgumentError(
        "no row is a run with a measured step time, tokens/s, MFU, TFLOP/s or memory per GPU",
        options.calibrate_file);
  }
  Report r = Report::object();
  if (rows.empty()) {
    r["coefficients"] = "the public fit's: no row measures a step";
  } else {
    SEEDANCE_ASSIGN_OR_RETURN(Calibration c, Calibrate(rows, fit));
    fit.coefficients = c.after;
    r = CalibrationToReport(c, rows);
  }
  const MemoryCalibration memory = CalibrateMemoryOverhead(records, catalog, fit);
  fit.memory_overhead = memory.after;
  r["memory_overhead"] = MemoryCalibrationToReport(memory);
  r["file"] = options.calibrate_file;
  return r;
}

base::Status PlanTraining(const JobSpec& spec, const cost::GpuSpec& gpu,
                          const cost::GpuCatalog& catalog, const OptimizeOptions& options,
                          Report& report, std::optional<PlanPageInput>* page) {
  PlanSettings settings;
  settings.space = SettingsFor(options.profile).space;
  PublicFit fit = BuiltInFit();
  if (options.calibrate_csv) {
    SEEDANCE_ASSIGN_OR_RETURN(report["calibration"], CalibrationSection(options, catalog, fit));
  }
  settings.hardware.coefficients = fit.coefficients;
  settings.memory.measured_overhead_fraction = fit.memory_overhead;
  settings.fit = &fit;
  report["time_model"] = {
      {"coefficients", options.calibrate_csv ? "calibrated to " + options.calibrate_file
                                             : std::string("the public fit")},
      {"accuracy",
       "leave-one-source-out on the public set: see docs/benchmarks.md (build/bench/"
       "published_runs --fit)"},
      {"interval_level", 0.9}};
  report["links"] = LinksToReport(ResolveLinks(spec.hardware, gpu));
  report["gpu_memory_bytes"] = gpu.MemoryBytes();
  SEEDANCE_ASSIGN_OR_RETURN(Margin margin,
                            ReplayMargin(spec, gpu, options.evaluate_only, settings));
  report["fragmentation"] = margin.section;
  const Evaluation before = Evaluate(spec, gpu, spec.parallelism, settings);
  report["before"] = EvaluationToReport(before, spec);
  const auto headroom_capacity =
      static_cast<int64_t>(static_cast<double>(gpu.MemoryBytes()) * (1 - spec.planning.headroom));
  report["before"]["within_headroom"] = before.memory.total_bytes <= headroom_capacity;
  // The stated layout is judged by its memory interval: an estimate over the GPU by less than
  // the model's memory error is "at risk", not "does not fit" (intervals.h). It is judged at its
  // own replayed margin, as `--evaluate-only` judges it and as the interval was fitted, not at
  // the recommended layout's when that is larger.
  PlanSettings own = settings;
  own.memory.fragmentation_fraction = margin.stated;
  const MemoryFit verdict =
      margin.stated == settings.memory.fragmentation_fraction
          ? MemoryFitOf(before.intervals, static_cast<double>(gpu.MemoryBytes()))
          : MemoryFitOf(Evaluate(spec, gpu, spec.parallelism, own).intervals,
                        static_cast<double>(gpu.MemoryBytes()));
  const bool before_runs = verdict != MemoryFit::kDoesNotFit && before.memory.host_fits;
  report["before"]["memory_fit"] = std::string(MemoryFitName(verdict));
  report["before"]["fits"] = before_runs;
  if (options.evaluate_only) {
    report["fits"] = before_runs;
    return base::OkStatus();
  }
  const SearchResult& found = *margin.found;
  Report search = Report::object();
  search["layouts_evaluated"] = found.candidates;
  search["layouts_that_fit"] = found.fitting.size();
  search["ranking"] =
      "step time (the GPUs are fixed: the fastest is the cheapest), then memory; a precision the "
      "spec did not state ranks as if 1% slower per change";
  report["search"] = search;
  report["fits"] = !found.fitting.empty();
  PlanPageInput shown;
  shown.job_name = spec.name;
  shown.model_family = spec.model.family;
  shown.gpu = gpu.id;
  shown.parameters = ComputeModelFigures(spec.model).parameters;
  shown.gpus = spec.hardware.total_gpus();
  shown.gpu_memory_bytes = gpu.MemoryBytes();
  shown.before = before;
  shown.before_memory_fit = std::string(MemoryFitName(verdict));
  if (found.fitting.empty()) {
    const std::string reason = "no layout fits in " + std::to_string(gpu.MemoryBytes()) +
                               " bytes per GPU, ZeRO-3 with full recomputation included";
    report["after"] = nullptr;
    report["does_not_fit"] = {{"reason", reason},
                              {"smallest_change", SmallestChange(spec, gpu, settings)}};
    shown.does_not_fit = reason;
    if (page != nullptr) *page = std::move(shown);
    return base::OkStatus();
  }
  const Evaluation& fastest = found.fitting.front();
  // A change is recommended only when its saving is significant and at least planning.min_gain
  // at the interval's pessimistic end; else the stated layout stays (when it fits with the
  // headroom), and the fastest layout is named as not worth the change.
  const bool before_ok = before.memory.fits && before.memory.total_bytes <= headroom_capacity;
  const SavingFigures judged = JudgeSaving(before, fastest, spec, fit);
  const bool keep = before_ok && !judged.recommended;
  const Evaluation& best = keep ? before : fastest;
  report["after"] = EvaluationToReport(best, spec);
  shown.fits = true;
  shown.after = best;
  shown.after_memory_fit =
      MemoryFitName(MemoryFitOf(best.intervals, static_cast<double>(gpu.MemoryBytes())));
  report["after"]["memory_fit"] = shown.after_memory_fit;
  report["recommendation"] =
      keep ? (judged.significant
                  ? "keep the stated layout: the fastest layout's saving is below planning.min_gain"
                  : "keep the stated layout: no layout's saving is significant")
           : (before_ok ? "change to the layout under `after`"
                        : "change to the layout under `after` (the stated layout does not fit "
                          "with the headroom)");
  if (keep) {
    report["search"]["fastest"] = Summary(fastest, spec);
    report["search"]["fastest"]["saving"] = Saving(before, fastest, judged);
  }
  if (before_runs) {
    const SavingFigures judged_best = JudgeSaving(before, best, spec, fit);
    report["saving"] = Saving(before, best, judged_best);
    shown.saving =
        PlanSaving{(1 - best.time.step_s / before.time.step_s) * 100,
                   {(1 - judged_best.ratio.high) * 100, (1 - judged_best.ratio.low) * 100},
                   judged_best.significant,
                   before.cost_per_step_usd - best.cost_per_step_usd,
                   before.energy_per_step_j - best.energy_per_step_j};
  } else {
    shown.saving_note = "the configuration the spec states does not fit (" +
                        std::to_string(before.memory.total_bytes) +
                        " bytes per GPU): there is no run to save on";
    report["saving"] = {{"note", shown.saving_note}};
  }
  shown.reasons = Reasons(best, spec, gpu, settings);
  Report reasons = Report::array();
  for (const std::string& line : shown.reasons) reasons.push_back(line);
  report["reasons"] = reasons;
  Report alternatives = Report::array();
  for (size_t i = 1; i < std::min<size_t>(found.fitting.size(), 5); ++i) {
    alternatives.push_back(Summary(found.fitting[i], spec));
  }
  report["alternatives"] = alternatives;
  if (best.config.recompute != Recompute::kNone) {
    SEEDANCE_ASSIGN_OR_RETURN(report["recompute_plan"],
                              RecomputeSection(spec, gpu, best, settings));
  }
  SEEDANCE_ASSIGN_OR_RETURN(const FrontAxes front, FrontOf(found.fitting));
  report["pareto_front"] = FrontToReport(found.fitting, front, spec);
  if (spec.reliability.given) report["checkpoint"] = CheckpointSection(spec, best);
  if (options.emit) {
    SEEDANCE_ASSIGN_OR_RETURN(report["emit"],
                              EmitSection(*options.emit, spec, found.fitting, gpu, settings));
  }
  shown.recommendation = report["recommendation"].get<std::string>();
  for (size_t i : front.layouts) shown.front.push_back(found.fitting[i]);
  if (page != nullptr) *page = std::move(shown);
  return base::OkStatus();
}

Report ServingFigures(const JobSpec& spec, const cost::GpuSpec& gpu, const ModelFigures& f) {
  const ServingSpec& s = spec.serving;
  const int64_t gpus = spec.hardware.total_gpus();
  const int64_t weight_bytes = f.parameters * base::NumericFormatBytes(s.precision);
  // The cache unquantized (the activations' format: bf16 beside 8- and 16-bit weights).
  const int64_t kv_per_token = static_cast<int64_t>(KvCacheBytesPerTokenAtBits(
      spec.model, KvBitsPerValue(*FindKvPrecision(s.engine, "weights", ""), s.precision)));
  const int64_t kv_bytes = kv_per_token * s.context_length * s.concurrent_requests;

  Report r = Report::object();
  r["parameters"] = f.parameters;
  r["layer_parameters"] = f.layer_parameters;
  r["embedding_parameters"] = f.embedding_parameters;
  r["weight_bytes"] = weight_bytes;
  r["kv_cache_bytes_per_token"] = kv_per_token;
  r["kv_cache_bytes"] = kv_bytes;
  r["weights_and_kv_cache_bytes"] = weight_bytes + kv_bytes;
  r["cluster_memory_bytes"] = gpu.MemoryBytes() * gpus;
  return r;
}

// Which KV widths the search weighed, and by what rule.
Report KvChoice(const ServingSpec& s) {
  Report r = Report::object();
  r["engine"] = std::string(ServingEngineName(s.engine));
  r["rule"] = s.kv_precision == "auto"
                  ? "auto: every format serving.engine offers whose measured KL divergence from "
                    "its unquantized cache is at most serving.max_kv_kl; the fastest fitting one, "
                    "the lower KL on a tie"
                  : "as serving.kv_precision names it";
  r["max_kv_kl"] = s.max_kv_kl;
  Report admitted = Report::array();
  for (const KvPrecision& p : AdmittedKvPrecisions(s)) admitted.push_back(std::string(p.name));
  r["admitted"] = admitted;
  r["measured_on"] =
      "SmolLM2-135M-Instruct at a context of 8,128 tokens of real text, each engine against its "
      "own unquantized cache (bench/kv/quality_real.py, docs/benchmarks.md)";
  return r;
}

// Serving: every TP degree of a replica with every admitted KV width, the best as the verdict.
void PlanServing(const JobSpec& spec, const cost::GpuSpec& gpu, Report& report) {
  const std::vector<ServingEvaluation> all = SearchServing(spec, gpu);
  report["links"] = LinksToReport(ResolveLinks(spec.hardware, gpu));
  report["gpu_memory_bytes"] = gpu.MemoryBytes();
  const bool fits = !all.empty() && all.front().fits;
  report["fits"] = fits;
  if (all.empty()) {
    report["after"] = nullptr;
    report["does_not_fit"] = {
        {"reason",
         "no TP degree divides the heads inside a node, or no KV width has a KL at "
         "most serving.max_kv_kl"}};
    return;
  }
  report["after"] = ServingEvaluationToReport(all.front());
  if (!fits) {
    report["after"] = nullptr;
    report["does_not_fit"] = {
        {"reason", "no TP degree and KV width hold the weights and KV cache of the requests"},
        {"best_tensor", all.front().tensor},
        {"max_concurrent_requests", all.front().max_concurrent_requests},
        {"max_context_length", all.front().max_context_length}};
  }
  Report options = Report::array();
  for (const ServingEvaluation& e : all) options.push_back(ServingEvaluationToReport(e));
  report["options"] = options;
  report["kv_choice"] = KvChoice(spec.serving);
  report["scope"] =
      "decode (output tokens) at the spec's concurrency; prefill (prefill_s, the time to first "
      "token of one prompt of serving.prompt_length tokens) beside it";
}

}  // namespace

ProfileSettings SettingsFor(Profile profile) {
  ProfileSettings s;
  if (profile == Profile::kProd) {
    s.space.every_micro_batch = true;
    s.space.max_virtual_stages = 4;
  }
  return s;
}

namespace {

constexpr base::EnumTable<Profile, 2> kProfileNames = {
    {{Profile::kDev, "dev"}, {Profile::kProd, "prod"}}};

}  // namespace

std::string_view ProfileName(Profile profile) { return base::EnumName(kProfileNames, profile); }

base::StatusOr<Profile> ParseProfile(std::string_view text) {
  return base::ParseEnum(kProfileNames, text, "profile");
}

base::StatusOr<Report> Optimize(const JobSpec& spec, const cost::GpuCatalog& catalog,
                                const OptimizeOptions& options,
                                std::optional<PlanPageInput>* page) {
  if (page != nullptr) page->reset();
  SEEDANCE_ASSIGN_OR_RETURN(const cost::GpuSpec* gpu, catalog.Get(spec.hardware.gpu));
  Report report = JobSpecToReport(spec);
  Report& job = report["job"];
  job["profile"] = ProfileName(options.profile);
  job["dry_run"] = options.dry_run;
  const SearchSpace& space = SettingsFor(options.profile).space;
  job["search_micro_batches"] = space.every_micro_batch ? "every divisor" : "powers of two";
  job["search_max_virtual_stages"] = space.max_virtual_stages;
  if (options.emit &&
      (options.dry_run || options.evaluate_only || spec.kind != JobKind::kTraining)) {
    return base::InvalidArgumentError(
        "writing a framework's configuration needs a training job's full plan (not --dry-run, "
        "--evaluate-only or a serving job)",
        "emit");
  }
  if (options.emit && spec.framework && *options.emit != *spec.framework &&
      !(*options.emit == Framework::kAccelerate &&
        (*spec.framework == Framework::kFsdp || *spec.framework == Framework::kDeepSpeed))) {
    return base::InvalidArgumentError(
        "the job spec runs on " + std::string(FrameworkName(*spec.framework)) +
            ", so the plan weighs only its layouts; --emit " +
            std::string(FrameworkName(*options.emit)) +
            " would write another framework's (remove `framework:` from the spec to weigh every "
            "framework's layouts)",
        "emit");
  }
  if (options.dry_run) return report;

  const ModelFigures figures = ComputeModelFigures(spec.model);
  if (spec.kind == JobKind::kTraining) {
    report["derived"] = TrainingFigures(spec, *gpu, figures);
    SEEDANCE_RETURN_IF_ERROR(PlanTraining(spec, *gpu, catalog, options, report, page));
  } else {
    report["derived"] = ServingFigures(spec, *gpu, figures);
    PlanServing(spec, *gpu, report);
  }
  return WithVerdictFirst(report);
}

base::StatusOr<Report> OptimizeYaml(std::string_view yaml, const std::string& file,
                                    const cost::GpuCatalog& catalog, const OptimizeOptions& options,
                                    std::optional<PlanPageInput>* page) {
  SEEDANCE_ASSIGN_OR_RETURN(JobSpec spec, ParseJobSpec(yaml, file, catalog));
  return Optimize(spec, catalog, options, page);
}

}  // namespace seedance::plan
