#include "seedance/plan/optimize.h"

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

std::string_view ProfileName(Profile profile) { return profile == Profile::kProd ? "prod" : "dev"; }

base::StatusOr<Profile> ParseProfile(std::string_view text) {
  if (text == "dev") return Profile::kDev;
  if (text == "prod") return Profile::kProd;
  return base::InvalidArgumentError("profile must be dev or prod, got '" + std::string(text) + "'",
                                    "--profile");
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
  return report;
}

base::StatusOr<Report> OptimizeYaml(std::string_view yaml, const std::string& file,
                                    const cost::GpuCatalog& catalog,
                                    const OptimizeOptions& options) {
  SEEDANCE_ASSIGN_OR_RETURN(JobSpec spec, ParseJobSpec(yaml, file, catalog));
  return Optimize(spec, catalog, options);
}

}  // namespace seedance::plan
