// Fitting the time model to measured runs (feature CLI-1): the public fit behind every plan
// (`build/bench/published_runs --fit`), its leave-one-source-out cross-validation, and a user's
// calibration to their own cluster (`optimize --calibrate RUNS.csv`).
//
// The fit is a maximum a posteriori estimate in log space: it minimises
//   sum over runs of w (log predicted_s - log measured_s)^2 / sigma^2
//   + sum over coefficients of (log value - log prior)^2 / prior_log_sd^2
// by Levenberg-Marquardt with a finite-difference Jacobian, each coefficient kept within
// (0, max]. w weighs every source (group) alike in total — N / (G n_g) a row — so a source that
// published one configuration in many releases does not outvote the others. sigma is the runs'
// noise (kRunNoise: published figures of one configuration differ
// by about that much between software versions). Standard errors come from the inverse of the
// Gauss-Newton Hessian with sigma replaced by the residuals' own spread when that is larger
// (delta method from log value to value).
//
// Calibration keeps the public fit as the prior (its values, and its standard errors as the
// prior's spread, floored at kMinCalibrationLogSd) and frees only the coefficients the user's
// runs inform: those whose e-fold change moves some run's predicted step time by at least
// kInformativeShare. Rows the public fit already predicts leave it where it is.
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/coefficients.h"
#include "seedance/plan/framework.h"
#include "seedance/plan/intervals.h"
#include "seedance/plan/kernel_anchors.h"
#include "seedance/plan/run_table.h"

namespace seedance::plan {

inline constexpr double kRunNoise = 0.1;
// Levenberg-Marquardt stops when a step lowers the cost by less than this share, or after
// kMaxFitIterations steps.
inline constexpr double kFitTolerance = 1e-7;
inline constexpr int kMaxFitIterations = 500;
inline constexpr double kMinCalibrationLogSd = 0.05;
inline constexpr double kInformativeShare = 0.02;

// One run ready for the fit: its spec, its GPU and the step time it measured.
struct FitRow {
  const RunRecord* record = nullptr;
  const cost::GpuSpec* gpu = nullptr;
  double measured_s = 0;
};

// The rows of `records` that measure a step (kind run, a figure MeasuredStepSeconds reads).
std::vector<FitRow> FitRows(const std::vector<RunRecord>& records, const cost::GpuCatalog& catalog);

// The time model's step time for a row under `curves` and `coefficients`.
double PredictStepSeconds(const FitRow& row, const KernelCurves& curves,
                          const ModelCoefficients& coefficients);

struct Prior {
  ModelCoefficients mean;                   // values
  std::array<double, kCoefCount> log_sd{};  // spread on log(value)
  std::array<bool, kCoefCount> free{};      // fitted, else held at the mean
};
// Every coefficient free, at InfoOf's prior.
Prior DefaultPrior();

struct FitResult {
  ModelCoefficients coefficients;  // with standard errors for the free ones
  std::vector<double> residuals;   // log(measured / predicted), one per row
  double rms = 0;                  // of the residuals
  int iterations = 0;
  bool converged = false;  // stopped by the tolerance, not the iteration bound
};

base::StatusOr<FitResult> FitCoefficients(const std::vector<FitRow>& rows,
                                          const KernelCurves& curves, const Prior& prior);

// The source a run is held out with: its group, or "ungrouped" for a run that names none.
std::string SourceOf(const RunRecord& r);

// Leave-one-group-out: each row predicted by a fit to every other group's rows.
struct CrossValidation {
  std::vector<double> residuals;  // log(measured / predicted), one per row, out of sample
  std::vector<std::string> groups;
  std::vector<ModelCoefficients> fits;  // fits[g]: fitted without groups[g]'s rows
};
base::StatusOr<CrossValidation> CrossValidate(const std::vector<FitRow>& rows,
                                              const KernelCurves& curves, const Prior& prior);

// Pairs of runs of one job (the same group, model, sequence, GPUs and batch) in two layouts
// (tensor, pipeline, virtual stages, context, recomputation, micro-batch or precision differ):
// residual differences r_a - r_b of each pair, the spread of a predicted ratio between layouts.
std::vector<double> PairedResiduals(const std::vector<FitRow>& rows,
                                    const std::vector<double>& residuals);

// log(published / predicted) of every row that states memory per GPU (model_states rows through
// the model-state accounting, the others through the memory model with `measured_overhead`),
// with the framework a run row is counted as (none for model_states rows).
struct MemoryResidual {
  double residual = 0;
  std::optional<Framework> framework;
};
std::vector<MemoryResidual> MemoryResiduals(
    const std::vector<RunRecord>& records, const cost::GpuCatalog& catalog,
    const std::array<double, kFrameworkCount>& measured_overhead = {});
std::vector<double> ResidualsOf(const std::vector<MemoryResidual>& residuals);

// PublicFit::memory_overhead: per framework with at least two run or memory rows stating memory,
// the median of log(published / estimated) with no overhead, as a share, and its standard error;
// `rows` counts each framework's rows.
struct MemoryOverheadFit {
  std::array<double, kFrameworkCount> value{}, standard_error{};
  std::array<int, kFrameworkCount> rows{};
};
MemoryOverheadFit FitMemoryOverhead(const std::vector<RunRecord>& records,
                                    const cost::GpuCatalog& catalog);

// The 5% and 95% quantiles of `residuals` (linear interpolation between order statistics).
ResidualQuantiles QuantilesOf(std::vector<double> residuals);

// The same with every source's share equal, `sources[i]` naming the source of residuals[i]:
// each source stands for kSourceLevels values, its own quantiles at evenly spaced levels
// ((j + 0.5) / kSourceLevels), and QuantilesOf takes the pooled values. A run the planner has
// not seen comes from a report outside the set, a draw of a new source; pooling the rows as they
// come would let the source with the most rows (DGX Cloud's 194 of 394) stand for all of them.
// `rows` counts the residuals. Precondition: the two have the same size.
inline constexpr int kSourceLevels = 200;
ResidualQuantiles SourceBalancedQuantilesOf(const std::vector<double>& residuals,
                                            const std::vector<std::string>& sources);

// The step-time intervals' quantiles (PublicFit::step_time and step_time_all) from out-of-sample
// residuals, one per row: per regime (RegimeOf) and every regime pooled, each source's share
// equal or, with `balanced` false, row by row; the rows of source `left_out` left out.
struct StepTimeSpread {
  std::array<ResidualQuantiles, kRegimeCount> by_regime;
  ResidualQuantiles all;
};
StepTimeSpread StepTimeSpreadOf(const std::vector<FitRow>& rows,
                                const std::vector<double>& residuals,
                                const std::optional<std::string>& left_out = std::nullopt,
                                bool balanced = true);

// Each run beside the step-time quantiles of the other sources (StepTimeSpreadOf without its
// source, each source one share or, with `balanced` false, row by row; RegimeQuantiles picks
// them as IntervalsFor does): what an interval would have said of a report outside the set.
struct HeldOutRun {
  std::string source;
  double residual = 0;  // cross-validated log(published / predicted)
  ResidualQuantiles q;  // the other sources', in the run's regime
};
std::vector<HeldOutRun> HeldOutRuns(const std::vector<FitRow>& rows, const CrossValidation& cv,
                                    bool balanced = true);

// How many of each source's runs fall inside those quantiles widened by `widening`
// (ResidualQuantiles::Widened), the sources in the order their first run comes: the coverage to
// expect on a report outside the set.
struct SourceCoverage {
  std::string source;
  int inside = 0, rows = 0;
};
std::vector<SourceCoverage> NewSourceCoverage(const std::vector<HeldOutRun>& runs,
                                              double widening = 1);

// The mean of the sources' shares of runs inside, each source one share; `ignored` left out.
double MeanShareInside(const std::vector<SourceCoverage>& coverage,
                       const std::optional<std::string>& ignored = std::nullopt);

// PublicFit::step_time_widening: the smallest factor, in steps of 0.01 from 1 to
// kMaxStepTimeWidening, at which MeanShareInside reaches `target` (without `ignored`'s share);
// nullopt when none does (no run, or sources too far apart). Each source's residuals are
// cross-validated (its coefficients fitted without it), yet its runs share a shift the other
// sources' residuals do not show, so they fall outside the other sources' quantiles more often than
// 10% of the time; a user's cluster is such a source (docs/design/plan.md, "How far to trust a
// figure").
inline constexpr double kMaxStepTimeWidening = 4;
inline constexpr double kNewSourceTarget = 0.9;  // the intervals' nominal coverage
std::optional<double> NewSourceWidening(const std::vector<HeldOutRun>& runs, double target,
                                        const std::optional<std::string>& ignored = std::nullopt);

// A user's calibration on top of `fit`.
struct Calibration {
  ModelCoefficients before, after;
  std::array<bool, kCoefCount> refitted{};
  std::vector<double> residuals_before, residuals_after;  // on the user's rows
};
base::StatusOr<Calibration> Calibrate(const std::vector<FitRow>& rows, const PublicFit& fit);

base::Report CalibrationToReport(const Calibration& c, const std::vector<FitRow>& rows);

// What `--calibrate` does for a cluster the public fit has not seen, each source standing in for
// one: the source's coefficients fitted without it (cv.fits), `given` of its runs (evenly spaced
// in the table's order: every (n / given)-th from the first) calibrate them, and its other runs
// are predicted before and after. Sources with fewer than given + 3 runs are skipped.
struct HeldOutCalibration {
  std::string source;
  int given = 0, held = 0;
  int within_before = 0, within_after = 0;  // held runs within ±15%
  // Median |predicted / measured - 1| of the held runs, and their median signed log error
  // log(measured / predicted), the shift the cluster shares.
  double median_abs_before = 0, median_abs_after = 0;
  double median_log_before = 0, median_log_after = 0;
  Calibration calibration;
};
base::StatusOr<std::vector<HeldOutCalibration>> CalibrateHeldOutSources(
    const std::vector<FitRow>& rows, const CrossValidation& cv, const PublicFit& fit, int given);

// The measured memory overhead refitted to a user's rows that state memory per GPU
// (`--calibrate`, `record_run=`'s peak reserved memory). Per framework with such rows, in log
// space, the precision-weighted mean of the public value (the prior: its standard error as the
// spread, floored at kMinCalibrationLogSd, or kMemoryOverheadPriorLogSd about 0 for a framework
// without public memory rows) and the
// rows' median log(measured / estimated) (spread sqrt(pi/2) sigma / sqrt(n), sigma the public
// memory rows' spread, their 5%-95% range over 2 x 1.645). Two rows cannot swing a public value
// that 65 rows fixed; a framework the public set never measured follows the user's rows.
inline constexpr double kMemoryOverheadPriorLogSd = 0.15;
struct MemoryCalibration {
  std::array<double, kFrameworkCount> before{}, after{};
  std::array<int, kFrameworkCount> rows{};
};
MemoryCalibration CalibrateMemoryOverhead(const std::vector<RunRecord>& records,
                                          const cost::GpuCatalog& catalog, const PublicFit& fit);
base::Report MemoryCalibrationToReport(const MemoryCalibration& c);

}  // namespace seedance::plan
