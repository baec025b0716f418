#include "seedance/plan/optimize.h"

#include "seedance/base/enum_names.h"
#include "seedance/mem/planner.h"
#include "seedance/mem/training_step.h"
#include "seedance/plan/model_figures.h"

namespace seedance::plan {
namespace {

using base::Report;

Report TrainingFigures(const JobSpec& spec, const cost::GpuSpec& gpu, const ModelFigures& f) {
  const TrainingSpec& t = spec.training;
  const int64_t gpus = spec.hardware.total_gpus();
  // Pure data parallelism until the parallelism planner arrives.
  const int64_t data_parallel = gpus;
  const int64_t tokens_per_step = t.global_batch * spec.model.sequence_length;
  const double flops_per_token = TrainingFlopsPerToken(spec.model, f);
  const double flops_per_step = flops_per_token * static_cast<double>(tokens_per_step);
  const double peak_flops = *gpu.DenseTflops(t.precision) * 1e12 * static_cast<double>(gpus);
  const double step_seconds = flops_per_step / peak_flops;

  Report r = Report::object();
  r["parameters"] = f.parameters;
  r["layer_parameters"] = f.layer_parameters;
  r["embedding_parameters"] = f.embedding_parameters;
  r["weight_bytes"] = f.parameters * base::NumericFormatBytes(t.precision);
  r["data_parallel_size"] = data_parallel;
  r["gradient_accumulation_steps"] = t.global_batch / (t.micro_batch * data_parallel);
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

// What one GPU holds during a training step (pure data parallelism: every
// GPU keeps the whole model), for a given micro-batch.
mem::TrainingStepShape StepShape(const JobSpec& spec, const ModelFigures& f, int64_t micro_batch) {
  const TrainingSpec& t = spec.training;
  const bool low_precision =
      t.precision != base::NumericFormat::kFp32 && t.precision != base::NumericFormat::kTf32;
  mem::TrainingStepShape shape;
  shape.layers = spec.model.layers;
  shape.layer_parameters = f.layer_parameters;
  shape.embedding_parameters = f.embedding_parameters;
  shape.head_parameters = f.lm_head_parameters;
  shape.other_parameters = f.parameters - f.embedding_parameters -
                           spec.model.layers * f.layer_parameters - f.lm_head_parameters;
  shape.hidden_size = spec.model.hidden_size;
  shape.attention_heads = spec.model.attention_heads;
  shape.sequence_length = spec.model.sequence_length;
  shape.micro_batch = micro_batch;
  shape.vocab_size = spec.model.vocab_size;
  // FP8 training keeps weights, gradients and saved activations in 16 bits
  // and casts to FP8 for the matrix multiplies (as Transformer Engine does).
  shape.bytes_per_element = low_precision ? 2 : 4;
  shape.fp32_master_weights = low_precision;
  shape.optimizer_bytes_per_param = t.optimizer == "adamw" || t.optimizer == "adam" ? 8
                                    : t.optimizer == "sgd"                          ? 0
                                                                                    : 4;
  return shape;
}

base::StatusOr<Report> MemorySection(const JobSpec& spec, const cost::GpuSpec& gpu,
                                     const ModelFigures& f, const ProfileSettings& settings) {
  SEEDANCE_ASSIGN_OR_RETURN(const auto buffers, mem::TrainingStepLifetimes(
                                                    StepShape(spec, f, spec.training.micro_batch)));
  SEEDANCE_ASSIGN_OR_RETURN(
      mem::Plan plan, mem::PlanOffsets(buffers, {.time_limit_s = settings.search_time_limit_s}));
  int64_t no_reuse = 0;
  int64_t persistent = 0;
  for (const mem::Buffer& b : buffers) {
    no_reuse += b.size;
    if (b.kind == mem::BufferKind::kWeight || b.kind == mem::BufferKind::kGradient ||
        b.kind == mem::BufferKind::kOptimizerState) {
      persistent += b.size;
    }
  }
  const int64_t capacity = gpu.MemoryBytes();
  // The largest micro-batch whose planned step fits: the peak grows with the
  // micro-batch, so bisect; each probe is a greedy plan of a few hundred buffers.
  auto fits = [&](int64_t b) -> base::StatusOr<bool> {
    const auto step = mem::TrainingStepLifetimes(StepShape(spec, f, b));
    if (!step.ok()) return false;  // a buffer past 2^50 bytes fits no GPU
    const std::vector<mem::Buffer>& probe = *step;
    if (mem::MaxLiveBytes(probe) > capacity) return false;
    SEEDANCE_ASSIGN_OR_RETURN(mem::Plan p,
                              mem::PlanOffsets(probe, {.algo = mem::PlanAlgo::kGreedy}));
    return p.peak_bytes <= capacity;
  };
  int64_t lo = 0;  // largest known to fit
  int64_t hi = 1;  // smallest known not to fit (once found)
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool ok, fits(hi));
    if (!ok) break;
    lo = hi;
    if (hi >= spec.training.global_batch) {
      hi = spec.training.global_batch + 1;
      break;
    }
    hi *= 2;
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    SEEDANCE_ASSIGN_OR_RETURN(bool ok, fits(mid));
    (ok ? lo : hi) = mid;
  }

  Report r = Report::object();
  r["scope"] = "one GPU, one micro-batch step, no model parallelism";
  r["buffers"] = buffers.size();
  r["persistent_bytes"] = persistent;
  r["activations_per_layer_bytes"] =
      *mem::ActivationBytesPerLayer(StepShape(spec, f, spec.training.micro_batch));
  r["peak_without_reuse_bytes"] = no_reuse;
  r["planned_peak_bytes"] = plan.peak_bytes;
  r["lower_bound_bytes"] = plan.lower_bound_bytes;
  r["planner"] = plan.algo;
  r["planner_optimal"] = plan.optimal;
  r["gpu_memory_bytes"] = capacity;
  r["fits"] = plan.peak_bytes <= capacity;
  r["max_micro_batch"] = std::min(lo, spec.training.global_batch);
  return r;
}

Report ServingFigures(const JobSpec& spec, const cost::GpuSpec& gpu, const ModelFigures& f) {
  const ServingSpec& s = spec.serving;
  const int64_t gpus = spec.hardware.total_gpus();
  const int64_t weight_bytes = f.parameters * base::NumericFormatBytes(s.precision);
  const int64_t kv_per_token = KvCacheBytesPerToken(spec.model, s.precision);
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

}  // namespace

ProfileSettings SettingsFor(Profile profile) {
  ProfileSettings s;
  s.search_time_limit_s = profile == Profile::kProd ? 10.0 : 1.0;
  return s;
}

namespace {

constexpr base::EnumTable<Profile, 2> kProfileNames = {
    {{Profile::kDev, "dev"}, {Profile::kProd, "prod"}}};

}  // namespace

std::string_view ProfileName(Profile profile) { return base::EnumName(kProfileNames, profile); }

base::StatusOr<Profile> ParseProfile(std::string_view text) {
  return base::ParseEnum(kProfileNames, text, "--profile");
}

base::StatusOr<Report> Optimize(const JobSpec& spec, const cost::GpuCatalog& catalog,
                                const OptimizeOptions& options) {
  SEEDANCE_ASSIGN_OR_RETURN(const cost::GpuSpec* gpu, catalog.Get(spec.hardware.gpu));
  Report report = JobSpecToReport(spec);
  Report& job = report["job"];
  job["profile"] = ProfileName(options.profile);
  job["dry_run"] = options.dry_run;
  job["search_time_limit_s"] = SettingsFor(options.profile).search_time_limit_s;
  if (options.dry_run) return report;

  const ModelFigures figures = ComputeModelFigures(spec.model);
  report["derived"] = spec.kind == JobKind::kTraining ? TrainingFigures(spec, *gpu, figures)
                                                      : ServingFigures(spec, *gpu, figures);
  if (spec.kind == JobKind::kTraining) {
    SEEDANCE_ASSIGN_OR_RETURN(report["memory"],
                              MemorySection(spec, *gpu, figures, SettingsFor(options.profile)));
  }
  return report;
}

base::StatusOr<Report> OptimizeYaml(std::string_view yaml, const std::string& file,
                                    const cost::GpuCatalog& catalog,
                                    const OptimizeOptions& options) {
  SEEDANCE_ASSIGN_OR_RETURN(JobSpec spec, ParseJobSpec(yaml, file, catalog));
  return Optimize(spec, catalog, options);
}

}  // namespace seedance::plan
