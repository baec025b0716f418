// `optimize`: the pre-flight plan and cost report for one job (feature CLI-1).
// Every predicted figure of `before`, `after` and the alternatives carries its 90% prediction
// interval under `interval` (intervals.h); `saving` says whether it is significant; a change
// whose saving is not significant, or below planning.min_gain, is not recommended (`after` is
// then the stated layout, and `search.fastest` the layout that was not worth the change).
// It composes the other modules. A training job's report: the normalised spec
// (with the layout it runs with today under `parallelism`), the figures derived
// from the model shape, the links, `before` (that layout evaluated by the memory
// and time models), `search`, `fits`, and — when a layout fits — `after` (the
// fastest one), `saving`, `reasons`, `alternatives` and the `pareto_front`; when
// none fits, `does_not_fit` with the smallest change that would (and `emit` when asked
// for). A serving job's
// report: the spec and the weight and KV-cache sizes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/emit.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/search.h"

namespace seedance::plan {

// How much effort the planners may spend. Each engine section reads the
// settings of the chosen profile (the memory planner's search budget, etc.).
enum class Profile { kDev, kProd };

struct ProfileSettings {
  SearchSpace space;
};

// dev: micro-batches that are powers of two and up to 2 virtual pipeline stages; prod: every
// micro-batch that divides the batch and up to 4 virtual stages.
ProfileSettings SettingsFor(Profile profile);
std::string_view ProfileName(Profile profile);
// "dev" or "prod"; InvalidArgument otherwise.
base::StatusOr<Profile> ParseProfile(std::string_view text);

struct OptimizeOptions {
  Profile profile = Profile::kDev;
  // Validate and print the normalised spec only; run no planner.
  bool dry_run = false;
  // Training: evaluate the configuration the spec states ("before") without searching.
  bool evaluate_only = false;
  // Training: also write the fastest fitting layout the framework runs as its configuration
  // (section `emit`: the layout, why it differs from `after` if it does, and the content).
  // Needs the full plan: an error with dry_run, evaluate_only or a serving job.
  std::optional<Framework> emit = std::nullopt;
  // Training: runs measured on the user's own cluster, in the columns of
  // bench/plan/published_runs.csv (run_table.h): the model is calibrated to them (calibration.h)
  // and plans with the calibrated coefficients; section `calibration` says what changed.
  // `calibrate_file` names the text in errors.
  std::optional<std::string> calibrate_csv = std::nullopt;
  std::string calibrate_file = {};
};

struct PlanPageInput;  // html_report.h

// The report for a parsed spec. With `page`, a training job's full plan (not dry_run or
// evaluate_only) also sets *page to the typed figures the report was written from, for
// RenderPlanHtml; otherwise *page is left empty.
base::StatusOr<base::Report> Optimize(const JobSpec& spec, const cost::GpuCatalog& catalog,
                                      const OptimizeOptions& options,
                                      std::optional<PlanPageInput>* page = nullptr);

// Parses `yaml` (named `file` in errors) and plans it.
base::StatusOr<base::Report> OptimizeYaml(std::string_view yaml, const std::string& file,
                                          const cost::GpuCatalog& catalog,
                                          const OptimizeOptions& options,
                                          std::optional<PlanPageInput>* page = nullptr);

}  // namespace seedance::plan
