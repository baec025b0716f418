// `seedancectl optimize [JOB.yaml] [--profile dev|prod] [--dry-run]` (feature CLI-1).
#include "seedance/base/env.h"
#include "seedance/plan/optimize.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {

void RegisterOptimize(CLI::App& app, Context& context) {
  struct Flags {
    std::string job_file;
    std::string profile = "dev";
    bool dry_run = false;
    std::string output;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "optimize", "Pre-flight plan and cost report for a training or serving job");
  cmd->add_option("job", flags->job_file,
                  "Job spec (YAML, see docs/job-spec.md); without it, the built-in default job");
  cmd->add_option("--profile", flags->profile, "Planning effort: dev (quick) or prod (thorough)")
      ->check(CLI::IsMember({"dev", "prod"}))
      ->capture_default_str();
  cmd->add_flag("--dry-run", flags->dry_run, "Validate and print the normalised job spec only");
  AddOutputFlag(cmd, &flags->output);
  cmd->callback([flags, &context] {
    auto catalog = LoadCatalog(context);
    if (Failed(catalog.status(), context)) return;
    std::string yaml(plan::DefaultJobYaml());
    std::string source(plan::kDefaultJobSource);
    if (!flags->job_file.empty()) {
      auto text = base::Env::Default()->ReadFile(flags->job_file);
      if (!text.ok()) {
        context.exit_code = PrintError(text.status().Annotate("cannot read the job spec"));
        return;
      }
      yaml = std::move(*text);
      source = flags->job_file;
    }
    plan::OptimizeOptions options;
    options.profile = *plan::ParseProfile(flags->profile);  // checked by CLI11 above
    options.dry_run = flags->dry_run;
    auto report = plan::OptimizeYaml(yaml, source, *catalog, options);
    if (Failed(report.status(), context)) return;
    context.exit_code = PrintReport(*report, flags->output);
  });
}

}  // namespace seedance::cli
