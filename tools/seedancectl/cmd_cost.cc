// `seedancectl cost compare|pareto`: statistics for A/B benchmark comparisons and Pareto fronts
// (features COST-4, COST-5).
#include "seedance/base/env.h"
#include "seedance/cost/bench_compare.h"
#include "seedance/cost/reports.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

base::StatusOr<cost::SampleSet> ReadSampleFile(const std::string& path) {
  auto text = base::Env::Default()->ReadFile(path);
  if (!text.ok()) return text.status().Annotate("cannot read the results");
  return cost::ReadSamples(*text, path);
}

void RegisterCompare(CLI::App* noun, Context& context) {
  struct Flags {
    std::string a, b, metric = "real_time", output;
    cost::CompareOptions options;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "compare",
      "Compare two benchmark result files per benchmark: the median's change with its BCa "
      "interval, the Mann-Whitney U p-value and a verdict");
  // The two files are the subject of the verb, in the order compare.py takes them.
  cmd->add_option("A", f->a, "Baseline: Google Benchmark JSON, {name: [samples]} JSON or "
                             "name,value CSV")
      ->required();
  cmd->add_option("B", f->b, "Contender, in any of the same formats")->required();
  cmd->add_option("--metric", f->metric, "real_time or cpu_time (Google Benchmark input)")
      ->check(CLI::IsMember({"real_time", "cpu_time"}))
      ->capture_default_str();
  cmd->add_option("--alpha", f->options.alpha, "Significance level of the U test")
      ->check(RealIn(1e-12, 0.5))
      ->capture_default_str();
  cmd->add_option("--noise", f->options.noise_threshold,
                  "Relative change of the median below which no verdict is given")
      ->check(RealIn(0, 10))
      ->capture_default_str();
  cmd->add_option("--confidence", f->options.confidence, "Level of the change's interval")
      ->check(RealIn(0.5, 0.9999))
      ->capture_default_str();
  cmd->add_option("--resamples", f->options.resamples, "Bootstrap resamples")
      ->check(IntIn(100, 10'000'000))
      ->capture_default_str();
  cmd->add_option("--seed", f->options.seed, "Bootstrap seed")->capture_default_str();
  cmd->add_flag("--higher-is-better", f->options.higher_is_better,
                "The samples are throughputs: a larger median is faster");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto a = ReadSampleFile(f->a);
    if (Failed(a.status(), context)) return;
    auto b = ReadSampleFile(f->b);
    if (Failed(b.status(), context)) return;
    f->options.metric = *cost::ParseCompareMetric(f->metric, "--metric");  // checked above
    auto report = cost::CompareSamples(*a, *b, f->options);
    if (Failed(report.status(), context)) return;
    context.exit_code = PrintReport(*report, f->output);
  });
}

void RegisterPareto(CLI::App* noun, Context& context) {
  struct Flags {
    std::string input, objectives, dominance = "pareto", output;
    bool unique = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "pareto", "The Pareto front of the points of a CSV over 1 to 3 objectives");
  cmd->add_option("--input", f->input, "CSV with a header; one point a line")->required();
  cmd->add_option("--objectives", f->objectives,
                  "Columns and directions, e.g. throughput:max,memory:min,power:min")
      ->required();
  cmd->add_option("--dominance", f->dominance,
                  "pareto (better or equal in all, better in one) or strict (better in all)")
      ->check(CLI::IsMember({"pareto", "strict"}))
      ->capture_default_str();
  cmd->add_flag("--unique", f->unique, "One row per distinct point (the first in the file)");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto objectives = cost::ParseObjectives(f->objectives, "--objectives");
    if (Failed(objectives.status(), context)) return;
    auto text = base::Env::Default()->ReadFile(f->input);
    if (Failed(text.status().Annotate("cannot read the points"), context)) return;
    auto report = cost::ParetoCsvReport(*text, f->input, *objectives,
                                        *cost::ParseDominance(f->dominance, "--dominance"),
                                        f->unique);
    if (Failed(report.status(), context)) return;
    context.exit_code = PrintReport(*report, f->output);
  });
}

}  // namespace

void RegisterCost(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand("cost", "Cost model and benchmark statistics");
  noun->require_subcommand(1);
  RegisterCompare(noun, context);
  RegisterPareto(noun, context);
}

}  // namespace seedance::cli
