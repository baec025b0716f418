// `seedancectl cost tco|roi|power|power-fit|breakdown|compare|pareto|report`: the cost model
// (features COST-2, COST-3, COST-6, COST-7), Pareto fronts (COST-4) and statistics for A/B
// comparisons (COST-5).
#include <iostream>
#include <limits>

#include "seedance/base/env.h"
#include "seedance/cost/bench_compare.h"
#include "seedance/cost/cost_page.h"
#include "seedance/cost/input_examples.h"
#include "seedance/cost/model_reports.h"
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
  cmd->add_option("A", f->a,
                  "Baseline: Google Benchmark JSON, {name: [samples]} JSON or "
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
  cmd->add_option("--seed", f->options.seed, "Bootstrap seed")
      ->check(IntIn(0, std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  cmd->add_option("--filter-a", f->options.filter_a,
                  "Two variants in one file (compare.py's filters mode): A's benchmarks whose "
                  "name contains this text ...");
  cmd->add_option("--filter-b", f->options.filter_b,
                  "... against B's whose name contains this one, matched by the rest of the name");
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
    auto report =
        cost::ParetoCsvReport(*text, f->input, *objectives,
                              *cost::ParseDominance(f->dominance, "--dominance"), f->unique);
    if (Failed(report.status(), context)) return;
    context.exit_code = PrintReport(*report, f->output);
  });
}

// A verb whose input is one optional YAML file (the defaults without it), turned into a report by
// `build(yaml, source, catalog)`.
void RegisterModelVerb(CLI::App* noun, Context& context, const char* name, const char* help,
                       const char* input_help, bool input_required,
                       base::StatusOr<base::Report> (*build)(std::string_view, const std::string&,
                                                             const cost::GpuCatalog&)) {
  struct Flags {
    std::string input, output;
    bool example = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(name, help);
  auto* input = cmd->add_option("--input", f->input, input_help);
  cmd->add_flag("--example", f->example,
                "Print a commented template of the input, every key with its unit, default and "
                "source, that --input accepts as it is")
      ->excludes(input);
  AddOutputFlag(cmd, &f->output);
  const std::string verb = name;
  cmd->callback([f, build, verb, input_required, &context] {
    if (f->example) {
      std::cout << *cost::InputExample(verb);
      context.exit_code = StdoutWritten() ? 0 : kExitFailure;
      return;
    }
    if (input_required && f->input.empty()) {
      PrintError(base::InvalidArgumentError(
          "--input is required (`seedancectl cost " + verb + " --example` prints a template)",
          "--input"));
      context.exit_code = kExitUsage;
      return;
    }
    auto catalog = LoadCatalog(context);
    if (Failed(catalog.status(), context)) return;
    std::string yaml = "{}";
    std::string source = "(defaults)";
    if (!f->input.empty()) {
      auto text = base::Env::Default()->ReadFile(f->input);
      if (Failed(text.status().Annotate("cannot read the input"), context)) return;
      yaml = std::move(*text);
      source = f->input;
    }
    auto report = build(yaml, source, *catalog);
    if (Failed(report.status(), context)) return;
    context.exit_code = PrintReport(*report, f->output);
  });
}

void RegisterPowerFit(CLI::App* noun, Context& context) {
  struct Flags {
    std::string input, output;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "power-fit", "Fit the power model's coefficients to measured samples (least squares)");
  cmd->add_option("--input", f->input,
                  "CSV: watts and any of cpu_utilization_pct, memory_bandwidth_gbytes_per_s, "
                  "nvme_kiops, inlet_above_setpoint_k, gpu_utilization (with gpus and "
                  "gpu_tdp_watts)")
      ->required();
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto text = base::Env::Default()->ReadFile(f->input);
    if (Failed(text.status().Annotate("cannot read the samples"), context)) return;
    auto report = cost::PowerFitCsvReport(*text, f->input);
    if (Failed(report.status(), context)) return;
    context.exit_code = PrintReport(*report, f->output);
  });
}

void RegisterReport(CLI::App* noun, Context& context) {
  struct Flags {
    std::string tco, roi, breakdown, pareto, objectives, dominance = "pareto", out, output;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "report",
      "One self-contained HTML page: cost per GPU-hour, a run's breakdown, the ROI "
      "heat map and the Pareto front (each from its verb's input)");
  cmd->add_option("--tco", f->tco, "TCO spec (YAML), as for `cost tco`");
  cmd->add_option("--breakdown", f->breakdown, "Run spec (YAML), as for `cost breakdown`");
  cmd->add_option("--roi", f->roi, "ROI spec (YAML), as for `cost roi`");
  cmd->add_option("--pareto", f->pareto, "Points (CSV), as for `cost pareto`");
  cmd->add_option("--objectives", f->objectives,
                  "With --pareto: columns and directions, e.g. throughput:max,memory:min");
  cmd->add_option("--dominance", f->dominance, "With --pareto: pareto or strict")
      ->check(CLI::IsMember({"pareto", "strict"}))
      ->capture_default_str();
  cmd->add_option("--out", f->out, "The page to write (atomically)")
      ->required()
      ->check(OutputPath());
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto catalog = LoadCatalog(context);
    if (Failed(catalog.status(), context)) return;
    const cost::CostPageRequest request{.tco = f->tco,
                                        .breakdown = f->breakdown,
                                        .roi = f->roi,
                                        .pareto = f->pareto,
                                        .objectives = f->objectives,
                                        .dominance = *cost::ParseDominance(f->dominance, "")};
    auto page = cost::BuildCostPage(*base::Env::Default(), request, *catalog);
    if (Failed(WithFlag(page.status(), {{"request", "command line"},
                                        {"tco", "--tco"},
                                        {"breakdown", "--breakdown"},
                                        {"roi", "--roi"},
                                        {"pareto", "--pareto"},
                                        {"objectives", "--objectives"}}),
               context)) {
      return;
    }
    base::Status written = base::Env::Default()->WriteFileAtomic(f->out, page->html);
    if (Failed(written.Annotate("cannot write the page"), context)) return;
    base::Report r = base::Report::object();
    r["out"] = f->out;
    r["bytes"] = page->html.size();
    r["sections"] = base::Report::array();
    for (const std::string& s : page->sections) r["sections"].push_back(s);
    context.exit_code = PrintReport(r, f->output);
  });
}

}  // namespace

void RegisterCost(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand("cost", "Cost model and benchmark statistics");
  noun->require_subcommand(1);
  RegisterModelVerb(noun, context, "tco",
                    "Total cost of ownership: cost per GPU-hour, per PFLOP-hour and per 1,000 "
                    "requests, with its breakdown",
                    "TCO spec (YAML, see docs/design/cost.md); without it, a rented H100-SXM at "
                    "the catalog's price",
                    false, &cost::TcoYamlReport);
  RegisterModelVerb(noun, context, "roi",
                    "ROI of an optimization and the utilization x scale-out sensitivity matrix",
                    "ROI spec (YAML, see docs/design/cost.md)", true, &cost::RoiYamlReport);
  RegisterModelVerb(noun, context, "power",
                    "Node power, energy per step and per token from the power model",
                    "Power spec (YAML, see docs/design/cost.md); without it, an 8 x H100-SXM "
                    "node at full load",
                    false, &cost::PowerYamlReport);
  RegisterPowerFit(noun, context);
  RegisterModelVerb(noun, context, "breakdown",
                    "A training run's cost: compute, storage I/O, network, scheduling overhead",
                    "Run spec (YAML, see docs/design/cost.md)", true, &cost::BreakdownYamlReport);
  RegisterCompare(noun, context);
  RegisterPareto(noun, context);
  RegisterReport(noun, context);
}

}  // namespace seedance::cli
