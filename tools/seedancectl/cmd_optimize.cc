// `seedancectl optimize [JOB.yaml] [--profile dev|prod] [--dry-run] [--evaluate-only]
// [--report PAGE.html] [--emit FRAMEWORK FILE] [--calibrate RUNS.csv] [--set KEY=VALUE]...
// [-v]` (feature CLI-1).
#include <iostream>

#include "seedance/base/env.h"
#include "seedance/base/yaml_override.h"
#include "seedance/plan/html_report.h"
#include "seedance/plan/optimize.h"
#include "seedance/plan/verdict.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

// A CI gate can tell "the job does not fit" from an error (1) and a usage error (2).
constexpr int kExitDoesNotFit = 3;

}  // namespace

void RegisterOptimize(CLI::App& app, Context& context) {
  struct Flags {
    std::string job_file;
    std::string profile = "dev";
    bool dry_run = false;
    bool evaluate_only = false;
    std::string output, report;
    std::vector<std::string> emit;  // FRAMEWORK FILE
    std::string calibrate;          // RUNS.csv
    std::vector<std::string> set;   // KEY=VALUE
    bool verbose = false;
    bool example = false;
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
  cmd->add_flag("--evaluate-only", flags->evaluate_only,
                "Training: evaluate the layout the spec states (its parallelism section) without "
                "searching");
  cmd->add_option("--report", flags->report,
                  "Training: also write the plan as a self-contained HTML page (memory and "
                  "step-time breakdowns, Pareto front, before and after)")
      ->check(OutputPath());
  cmd->add_option("--emit", flags->emit,
                  "Training: also write the fastest fitting layout FRAMEWORK runs (deepspeed: a "
                  "DeepSpeed config JSON; fsdp: the plan examples/fsdp_train.py reads; megatron: "
                  "Megatron-LM's flags, one per line; torchtitan: its TOML job config; "
                  "accelerate: an `accelerate launch --config_file` YAML) to FILE")
      ->expected(2)
      ->type_name("FRAMEWORK FILE")
      ->check(CLI::IsMember({"deepspeed", "fsdp", "megatron", "torchtitan", "accelerate"})
                  .application_index(0))
      ->check(OutputPath().application_index(1));
  cmd->add_option("--calibrate", flags->calibrate,
                  "Training: runs measured on your cluster (CSV in the columns of "
                  "bench/plan/published_runs.csv): the time model is refitted to them, with the "
                  "public fit as its prior, and plans with the result (section `calibration`)")
      ->type_name("RUNS.csv");
  cmd->add_option("--set", flags->set,
                  "Override one key of the job spec (repeatable): a dotted key and a YAML value, "
                  "e.g. --set hardware.gpu=H200 --set training.seq_len=8192")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--example", flags->example,
                "Print the built-in default job, a commented job spec that optimize accepts as "
                "it is (every key: docs/job-spec.md)");
  cmd->add_flag("-v,--verbose", flags->verbose,
                "Table output: also print the spec as read and the derived figures");
  cmd->footer(
      "Exit codes: 0 a plan that fits (or --dry-run), 1 an error (bad spec or catalog), 2 a "
      "usage error, 3 the job does not fit (fits: false; the report says the smallest change "
      "that would make it fit).");
  AddOutputFlag(cmd, &flags->output);
  cmd->callback([flags, &context] {
    if (flags->example) {
      std::cout << plan::DefaultJobYaml();
      context.exit_code = StdoutWritten() ? 0 : kExitFailure;
      return;
    }
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
    if (!flags->set.empty()) {
      std::vector<base::YamlOverride> overrides;
      for (const std::string& text : flags->set) {
        auto parsed = base::ParseYamlOverride(text);
        if (Failed(parsed.status(), context)) return;
        overrides.push_back(std::move(*parsed));
      }
      auto applied = base::ApplyYamlOverrides(yaml, source, overrides);
      if (Failed(applied.status(), context)) return;
      yaml = std::move(*applied);
      source += " (rewritten by --set: lines are the rewritten text's)";
    }
    plan::OptimizeOptions options;
    options.profile = *plan::ParseProfile(flags->profile);  // checked by CLI11 above
    options.dry_run = flags->dry_run;
    options.evaluate_only = flags->evaluate_only;
    if (!flags->emit.empty()) options.emit = *plan::ParseFramework(flags->emit[0], "--emit");
    if (!flags->calibrate.empty()) {
      auto runs = base::Env::Default()->ReadFile(flags->calibrate);
      if (!runs.ok()) {
        context.exit_code =
            PrintError(runs.status().Annotate("cannot read the runs to calibrate with"));
        return;
      }
      options.calibrate_csv = std::move(*runs);
      options.calibrate_file = flags->calibrate;
    }
    std::optional<plan::PlanPageInput> page;
    auto report = plan::OptimizeYaml(yaml, source, *catalog, options, &page);
    if (Failed(WithFlag(report.status(), {{"emit", "--emit"}, {"calibrate", "--calibrate"}}),
               context)) {
      return;
    }
    if (!flags->report.empty()) {
      if (!page) {
        context.exit_code = PrintError(base::InvalidArgumentError(
            "a plan page needs a training job's full plan (not --dry-run, --evaluate-only or a "
            "serving job)",
            "--report"));
        return;
      }
      const auto written =
          base::Env::Default()->WriteFileAtomic(flags->report, plan::RenderPlanHtml(*page));
      if (Failed(written.Annotate("cannot write the report"), context)) return;
    }
    if (options.emit && report->contains("emit")) {
      const base::Report& emit = (*report)["emit"];
      const auto written = base::Env::Default()->WriteFileAtomic(
          flags->emit[1], plan::EmitText(*options.emit, emit["content"]));
      if (Failed(written.Annotate("cannot write the framework's configuration"), context)) return;
    }
    base::TableOptions table;
    table.verbose = flags->verbose;
    table.verbose_sections = plan::kVerboseSections;
    context.exit_code =
        PrintReport(flags->output == "table" ? plan::OptimizeTableView(*report) : *report,
                    flags->output, table);
    if (context.exit_code == 0 && report->contains("fits") && !(*report)["fits"].get<bool>()) {
      context.exit_code = kExitDoesNotFit;
    }
  });
}

}  // namespace seedance::cli
