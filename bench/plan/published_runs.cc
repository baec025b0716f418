// The planner against published, measured training runs (issue 39, feature CLI-1).
//
//   build/bench/published_runs [RUNS.csv] [--kernels KERNELS.csv] [--fit [--write FILE.cc]]
//                              [--explain ID]
//
// Without --fit: every row of RUNS.csv (default bench/plan/published_runs.csv) evaluated as
// `optimize --evaluate-only` evaluates the layout it states, with the public fit compiled into
// the library: the predicted figure against the published one (step time, tokens/s, MFU or
// TFLOP/s, whichever the row gives), whether it falls inside the printed 90% interval, and memory
// against a published memory figure. Any file in these columns can be given — that is how a
// held-out set is scored.
//
// With --fit: the fit itself. The kernel curves from KERNELS.csv (default
// bench/plan/kernel_refs.csv), then the coefficients from RUNS.csv with their standard errors,
// then the leave-one-source-out cross-validation (each group predicted by a fit without it) —
// the error docs/benchmarks.md quotes — then the intervals' quantiles (each source one share),
// how often they cover a source left out of them, the widening that makes that 90% over the
// sources (NewSourceWidening), and that widening chosen once per source without its rows and
// scored on them. --write FILE.cc writes the fit as the library's src/plan/public_fit.cc.
//
// Prints one JSON document.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/calibration.h"
#include "seedance/plan/intervals.h"
#include "seedance/plan/kernel_fit.h"
#include "seedance/plan/memory_model.h"
#include "seedance/plan/optimize.h"
#include "seedance/plan/public_fit_writer.h"
#include "seedance/plan/run_table.h"
#include "seedance/plan/search.h"

namespace {

namespace plan = seedance::plan;
using seedance::base::Report;

int Fail(const seedance::base::Status& s) {
  std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
  return 1;
}

double Pct(double predicted, double published) { return (predicted / published - 1) * 100; }

// Share of |errors| within `bound` percent.
std::string Within(const std::vector<double>& log_residuals, double bound) {
  int n = 0;
  for (double r : log_residuals) n += std::fabs(std::exp(-r) - 1) * 100 <= bound ? 1 : 0;
  char buf[64];
  std::snprintf(
      buf, sizeof buf, "%d of %zu (%.0f%%)", n, log_residuals.size(),
      log_residuals.empty() ? 0.0 : 100.0 * n / static_cast<double>(log_residuals.size()));
  return buf;
}

double MedianAbsPct(std::vector<double> log_residuals) {
  if (log_residuals.empty()) return 0;
  for (double& r : log_residuals) r = std::fabs(std::exp(-r) - 1) * 100;
  std::sort(log_residuals.begin(), log_residuals.end());
  return log_residuals[log_residuals.size() / 2];
}

// The cross-validation per group and pooled.
Report CrossValidationReport(const std::vector<plan::FitRow>& rows,
                             const plan::CrossValidation& cv) {
  std::map<std::string, std::vector<double>> by_group;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string& g = rows[i].record->group;
    by_group[g.empty() ? "ungrouped" : g].push_back(cv.residuals[i]);
  }
  Report groups = Report::object();
  for (const auto& [name, residuals] : by_group) {
    groups[name] = {{"rows", residuals.size()},
                    {"within_15_pct", Within(residuals, 15)},
                    {"median_abs_error_pct", MedianAbsPct(residuals)}};
  }
  // What each coefficient became without the group: a source that alone sets a coefficient
  // shows here as the one whose absence moves it.
  for (size_t g = 0; g < cv.groups.size(); ++g) {
    Report without = Report::object();
    for (size_t c = 0; c < plan::kCoefCount; ++c) {
      without[std::string(plan::InfoOf(static_cast<plan::Coef>(c)).name)] = cv.fits[g].value[c];
    }
    groups[cv.groups[g]]["coefficients_fitted_without"] = without;
  }
  Report r = Report::object();
  r["method"] =
      "each group (source) predicted by the model fitted to every other group's rows; error = "
      "predicted / published - 1";
  r["groups"] = groups;
  r["all"] = {{"rows", rows.size()},
              {"within_15_pct", Within(cv.residuals, 15)},
              {"within_25_pct", Within(cv.residuals, 25)},
              {"median_abs_error_pct", MedianAbsPct(cv.residuals)}};
  return r;
}

// NewSourceCoverage's figures: each source's, the rows', and the mean of the sources' shares.
Report CoverageReport(const std::vector<plan::SourceCoverage>& coverage) {
  Report by_source = Report::object();
  int inside = 0, rows = 0;
  for (const plan::SourceCoverage& c : coverage) {
    by_source[c.source] = std::to_string(c.inside) + " of " + std::to_string(c.rows);
    inside += c.inside;
    rows += c.rows;
  }
  Report r = Report::object();
  r["by_source"] = by_source;
  r["rows"] = std::to_string(inside) + " of " + std::to_string(rows);
  r["mean_of_sources_pct"] = 100 * plan::MeanShareInside(coverage);
  return r;
}

// The widening checked out of sample: for each source, the factor chosen from the other sources
// alone (cross-validated, their quantiles built and scored, without the source's rows), and how
// many of its runs fall inside its intervals widened by that factor. `held_out` holds every
// source's runs against the other sources' quantiles.
seedance::base::StatusOr<Report> NestedWideningReport(const std::vector<plan::FitRow>& rows,
                                                      const plan::CrossValidation& cv,
                                                      const std::vector<plan::HeldOutRun>& held_out,
                                                      const plan::KernelCurves& curves,
                                                      const plan::Prior& prior) {
  Report by_source = Report::object();
  std::vector<plan::SourceCoverage> nested;
  for (const std::string& source : cv.groups) {
    std::vector<plan::FitRow> others;
    std::vector<plan::HeldOutRun> own;
    for (const plan::FitRow& r : rows) {
      if (plan::SourceOf(*r.record) != source) others.push_back(r);
    }
    for (const plan::HeldOutRun& run : held_out) {
      if (run.source == source) own.push_back(run);
    }
    SEEDANCE_ASSIGN_OR_RETURN(plan::CrossValidation cv_others,
                              plan::CrossValidate(others, curves, prior));
    const std::optional<double> w =
        plan::NewSourceWidening(plan::HeldOutRuns(others, cv_others), plan::kNewSourceTarget);
    if (!w) continue;
    for (const plan::SourceCoverage& c : plan::NewSourceCoverage(own, *w)) {
      nested.push_back(c);
      by_source[c.source] = {
          {"widening", *w}, {"inside", std::to_string(c.inside) + " of " + std::to_string(c.rows)}};
    }
  }
  Report r = CoverageReport(nested);
  r["by_source"] = by_source;
  return r;
}

// `--calibrate` on a cluster the fit has not seen: each source held out, a few of its runs
// calibrating the fit without it, its other runs predicted before and after.
seedance::base::StatusOr<Report> HeldOutCalibrationReport(const std::vector<plan::FitRow>& rows,
                                                          const plan::CrossValidation& cv,
                                                          const plan::PublicFit& fit) {
  Report r = Report::object();
  r["method"] =
      "each source held out: the fit without it calibrated (optimize --calibrate) with N of its "
      "runs, every (runs / N)-th from the first; its other runs predicted before and after; "
      "error = predicted / published - 1";
  for (int given : {3, 5}) {
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<plan::HeldOutCalibration> all,
                              plan::CalibrateHeldOutSources(rows, cv, fit, given));
    Report by_source = Report::object();
    int held = 0, before = 0, after = 0;
    for (const plan::HeldOutCalibration& h : all) {
      Report refitted = Report::array();
      for (size_t i = 0; i < plan::kCoefCount; ++i) {
        if (h.calibration.refitted[i]) {
          refitted.push_back(std::string(plan::InfoOf(static_cast<plan::Coef>(i)).name));
        }
      }
      const auto of = [&](int n) { return std::to_string(n) + " of " + std::to_string(h.held); };
      by_source[h.source] = {{"within_15_pct_before", of(h.within_before)},
                             {"within_15_pct_after", of(h.within_after)},
                             {"median_abs_error_pct_before", 100 * h.median_abs_before},
                             {"median_abs_error_pct_after", 100 * h.median_abs_after},
                             {"refitted", refitted}};
      held += h.held;
      before += h.within_before;
      after += h.within_after;
    }
    r[std::to_string(given) + "_runs"] = {
        {"by_source", by_source},
        {"within_15_pct_before", std::to_string(before) + " of " + std::to_string(held)},
        {"within_15_pct_after", std::to_string(after) + " of " + std::to_string(held)}};
  }
  return r;
}

int RunFit(const std::vector<plan::RunRecord>& records, const std::string& kernels_path,
           const std::string& write_path, const seedance::cost::GpuCatalog& catalog) {
  auto text = seedance::base::Env::Default()->ReadFile(kernels_path);
  if (!text.ok()) return Fail(text.status());
  auto kernel_rows = plan::ParseKernelTable(*text, kernels_path);
  if (!kernel_rows.ok()) return Fail(kernel_rows.status());
  auto kernels = plan::FitKernelCurves(*kernel_rows);
  if (!kernels.ok()) return Fail(kernels.status());
  const std::vector<plan::FitRow> rows = plan::FitRows(records, catalog);
  const plan::Prior prior = plan::DefaultPrior();
  auto fit = plan::FitCoefficients(rows, kernels->curves, prior);
  if (!fit.ok()) return Fail(fit.status());
  auto cv = plan::CrossValidate(rows, kernels->curves, prior);
  if (!cv.ok()) return Fail(cv.status());

  plan::PublicFit out;
  out.curves = kernels->curves;
  out.coefficients = fit->coefficients;
  for (const plan::FitRow& row : rows) {
    const plan::JobSpec& spec = row.record->spec;
    out.max_sequence_length =
        std::max(out.max_sequence_length, static_cast<double>(spec.model.sequence_length));
    out.max_gpus = std::max(out.max_gpus, spec.hardware.total_gpus());
  }
  const plan::StepTimeSpread spread = plan::StepTimeSpreadOf(rows, cv->residuals);
  out.step_time = spread.by_regime;
  out.step_time_all = spread.all;
  const std::vector<plan::HeldOutRun> held_out = plan::HeldOutRuns(rows, *cv);
  const std::optional<double> widening = plan::NewSourceWidening(held_out, plan::kNewSourceTarget);
  if (!widening) {
    return Fail(seedance::base::FailedPreconditionError(
        "no widening up to " + std::to_string(plan::kMaxStepTimeWidening) +
            " covers a source left out on 90% of its runs: too few sources, or too far apart",
        "published_runs --fit"));
  }
  out.step_time_widening = *widening;
  auto nested = NestedWideningReport(rows, *cv, held_out, kernels->curves, prior);
  if (!nested.ok()) return Fail(nested.status());
  out.paired = plan::QuantilesOf(plan::PairedResiduals(rows, cv->residuals));
  // The frameworks' measured overheads first, then the memory interval around the estimate
  // they make.
  const plan::MemoryOverheadFit overhead = plan::FitMemoryOverhead(records, catalog);
  out.memory_overhead = overhead.value;
  out.memory_overhead_se = overhead.standard_error;
  out.memory = plan::QuantilesOf(
      plan::ResidualsOf(plan::MemoryResiduals(records, catalog, out.memory_overhead)));
  for (const plan::RunRecord& r : records) {
    // The framework each row was counted as (its own, else the first that runs its layout).
    if (r.kind == plan::RunKind::kModelStates) continue;
    if (const auto f = plan::RunningFramework(r.spec, r.spec.parallelism)) {
      if (r.kind == plan::RunKind::kRun)
        out.frameworks_with_rows |= 1u << static_cast<unsigned>(*f);
      if (r.gb_per_gpu) out.memory_frameworks_with_rows |= 1u << static_cast<unsigned>(*f);
    }
  }

  Report report = Report::object();
  report["kernel_curves"] = kernels->report;
  report["coefficients"] = plan::CoefficientsToReport(fit->coefficients);
  report["fit"] = {{"rows", rows.size()},
                   {"iterations", fit->iterations},
                   {"converged", fit->converged},
                   {"in_sample_within_15_pct", Within(fit->residuals, 15)},
                   {"in_sample_median_abs_error_pct", MedianAbsPct(fit->residuals)}};
  report["leave_one_source_out"] = CrossValidationReport(rows, *cv);
  Report per_row = Report::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    per_row.push_back({{"id", rows[i].record->id},
                       {"group", rows[i].record->group},
                       {"measured_s", rows[i].measured_s},
                       {"error_pct_fit", (std::exp(-fit->residuals[i]) - 1) * 100},
                       {"error_pct_cross_validated", (std::exp(-cv->residuals[i]) - 1) * 100}});
  }
  report["rows"] = per_row;
  report["intervals"] = plan::PublicFitSpreadToReport(out);
  report["interval_coverage_of_a_new_source"] = {
      {"method",
       "each source's cross-validated residuals against the 90% quantiles of the other sources' "
       "in its regime"},
      {"sources_balanced", CoverageReport(plan::NewSourceCoverage(held_out))},
      {"rows_pooled", CoverageReport(plan::NewSourceCoverage(plan::HeldOutRuns(rows, *cv, false)))},
      {"widening", out.step_time_widening},
      {"sources_balanced_widened",
       CoverageReport(plan::NewSourceCoverage(held_out, out.step_time_widening))},
      {"widening_chosen_without_the_source", *nested}};
  auto calibrated = HeldOutCalibrationReport(rows, *cv, out);
  if (!calibrated.ok()) return Fail(calibrated.status());
  report["calibration_of_a_held_out_source"] = *calibrated;
  if (!write_path.empty()) {
    const auto written =
        seedance::base::Env::Default()->WriteFileAtomic(write_path, plan::PublicFitSource(out));
    if (!written.ok()) return Fail(written);
    report["written"] = write_path;
  }
  std::printf("%s\n", report.dump(1).c_str());
  return 0;
}

// Every row evaluated with the library's public fit, as optimize --evaluate-only does.
int RunEvaluate(const std::vector<plan::RunRecord>& records,
                const seedance::cost::GpuCatalog& catalog, const std::string& explain) {
  Report rows = Report::array();
  int runs = 0, within = 0, covered = 0, memory_rows = 0, memory_within = 0, fits = 0;
  std::vector<double> residuals;
  for (const plan::RunRecord& r : records) {
    Report row = Report::object();
    row["id"] = r.id;
    row["group"] = r.group;
    if (r.kind == plan::RunKind::kModelStates) {
      const double gb = static_cast<double>(plan::ModelStateBytes(
                            r.parameters, plan::StateBytesFor(r.spec.training),
                            r.spec.parallelism.zero_stage, r.data_parallel)) /
                        1e9;
      row["predicted_gb"] = gb;
      row["published_gb"] = *r.gb_per_gpu;
      row["memory_error_pct"] = Pct(gb, *r.gb_per_gpu);
      ++memory_rows;
      memory_within += std::fabs(Pct(gb, *r.gb_per_gpu)) <= 10 ? 1 : 0;
      rows.push_back(row);
      continue;
    }
    const auto gpu = catalog.Get(r.spec.hardware.gpu);
    if (!gpu.ok()) return Fail(gpu.status());
    // As `optimize --evaluate-only` evaluates the stated layout (the replayed fragmentation
    // margin included).
    plan::OptimizeOptions options;
    options.evaluate_only = true;
    auto report = plan::Optimize(r.spec, catalog, options);
    if (!report.ok()) return Fail(report.status().Annotate(r.where));
    const Report& before = (*report)["before"];
    if (!explain.empty() && r.id == explain) {
      row["time"] = before["time"];
      row["memory"] = before["memory"];
    }
    const double gb = before["memory_bytes_per_gpu"].get<double>() / 1e9;
    row["predicted_fits"] = before["fits"];
    row["predicted_gb"] = gb;
    if (r.gb_per_gpu) {
      row["published_gb"] = *r.gb_per_gpu;
      row["memory_error_pct"] = Pct(gb, *r.gb_per_gpu);
      ++memory_rows;
      memory_within += std::fabs(Pct(gb, *r.gb_per_gpu)) <= 10 ? 1 : 0;
    }
    if (r.kind == plan::RunKind::kRun) {
      ++runs;
      fits += before["fits"].get<bool>() ? 1 : 0;
      const auto measured = plan::MeasuredStepSeconds(r, **gpu);
      const std::string_view figure = plan::MeasuredFigure(r);
      row["figure"] = std::string(figure);
      // The figure the source states, against the same figure of the report; an MFU or TFLOP/s
      // counted another way than the report's (PaLM) is compared through the step time it
      // implies.
      std::string key = "step_time_s";
      double published = *measured;
      if (figure == "step_s") {
        published = *r.step_s;
      } else if (figure == "tokens_per_s_per_gpu") {
        key = "tokens_per_s_per_gpu";
        published = *r.tokens_per_s_per_gpu;
      } else if (figure == "mfu" && r.formula == plan::FlopsFormula::kPalm) {
        key = "mfu";
        published = *r.mfu;
      }
      const double predicted = before[key].get<double>();
      const double low = before["interval"][key][0].get<double>();
      const double high = before["interval"][key][1].get<double>();
      row["predicted"] = predicted;
      row["published"] = published;
      row["error_pct"] = Pct(predicted, published);
      row["interval"] = {low, high};
      const bool inside = published >= low && published <= high;
      row["inside_interval"] = inside;
      within += std::fabs(Pct(predicted, published)) <= 15 ? 1 : 0;
      covered += inside ? 1 : 0;
      residuals.push_back(std::log(*measured / before["step_time_s"].get<double>()));
    }
    rows.push_back(row);
  }
  Report out = Report::object();
  out["rows"] = rows;
  auto share = [](int a, int b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%d of %d (%.0f%%)", a, b, b ? 100.0 * a / b : 0.0);
    return std::string(buf);
  };
  out["within_15_pct"] = share(within, runs);
  out["inside_90_pct_interval"] = share(covered, runs);
  out["memory_within_10_pct"] = share(memory_within, memory_rows);
  out["published_layouts_that_fit"] = share(fits, runs);
  out["median_abs_error_pct"] = MedianAbsPct(residuals);
  std::printf("%s\n", out.dump(1).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string runs_path = "bench/plan/published_runs.csv";
  std::string kernels_path = "bench/plan/kernel_refs.csv";
  std::string write_path;
  bool fit = false;
  std::string explain;  // --explain ID: the row's time and memory breakdown
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--fit") {
      fit = true;
    } else if (a == "--kernels" && i + 1 < argc) {
      kernels_path = argv[++i];
    } else if (a == "--explain" && i + 1 < argc) {
      explain = argv[++i];
    } else if (a == "--write" && i + 1 < argc) {
      write_path = argv[++i];
    } else if (!a.starts_with("--")) {
      runs_path = a;
    } else {
      std::fprintf(stderr,
                   "usage: published_runs [RUNS.csv] [--kernels KERNELS.csv] [--fit [--write "
                   "FILE.cc]]\n");
      return 2;
    }
  }
  const auto& catalog = seedance::cost::GpuCatalog::BuiltIn();
  auto text = seedance::base::Env::Default()->ReadFile(runs_path);
  if (!text.ok()) return Fail(text.status());
  auto records = plan::ParseRunTable(*text, runs_path, catalog);
  if (!records.ok()) return Fail(records.status());
  return fit ? RunFit(*records, kernels_path, write_path, catalog)
             : RunEvaluate(*records, catalog, explain);
}
