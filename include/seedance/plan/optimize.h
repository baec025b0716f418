// `optimize`: the pre-flight plan and cost report for one job (feature CLI-1).
// It composes the other modules; each engine adds its own section as it
// arrives. Today: the normalised job spec, the hardware and price, and the
// figures derived from the model shape (parameters, tokens and FLOPs per
// step, the compute-bound lower bound on step time, KV-cache size).
#pragma once

#include <string>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/job_spec.h"

namespace seedance::plan {

// How much effort the planners may spend. Each engine section reads the
// settings of the chosen profile (the memory planner's search budget, etc.).
enum class Profile { kDev, kProd };

struct ProfileSettings {
  // Wall-clock budget of each exact search (e.g. the offline memory planner).
  double search_time_limit_s = 0;
};

// dev: quick answers while iterating (1 s searches); prod: thorough (10 s).
ProfileSettings SettingsFor(Profile profile);
std::string_view ProfileName(Profile profile);
// "dev" or "prod"; InvalidArgument otherwise.
base::StatusOr<Profile> ParseProfile(std::string_view text);

struct OptimizeOptions {
  Profile profile = Profile::kDev;
  // Validate and print the normalised spec only; run no planner.
  bool dry_run = false;
};

// The report for a parsed spec.
base::StatusOr<base::Report> Optimize(const JobSpec& spec, const cost::GpuCatalog& catalog,
                                      const OptimizeOptions& options);

// Parses `yaml` (named `file` in errors) and plans it.
base::StatusOr<base::Report> OptimizeYaml(std::string_view yaml, const std::string& file,
                                          const cost::GpuCatalog& catalog,
                                          const OptimizeOptions& options);

}  // namespace seedance::plan
