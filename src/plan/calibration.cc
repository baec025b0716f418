#include "seedance/plan/calibration.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include "seedance/base/quantile.h"
#include "seedance/cost/stats.h"
#include "seedance/plan/links.h"
#include "seedance/plan/memory_model.h"
#include "seedance/plan/model_figures.h"
#include "seedance/plan/step_replay.h"
#include "seedance/plan/time_model.h"

namespace seedance::plan {
namespace {

using Vector = std::vector<double>;

// Solves the p x p system a x = b by Gaussian elimination with partial pivoting; false when
// singular.
bool Solve(std::vector<Vector> a, Vector b, Vector& x) {
  const size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r) {
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    }
    if (std::fabs(a[pivot][col]) < 1e-300) return false;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t r = col + 1; r < n; ++r) {
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c < n; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  x.assign(n, 0);
  for (size_t i = n; i-- > 0;) {
    double s = b[i];
    for (size_t c = i + 1; c < n; ++c) s -= a[i][c] * x[c];
    x[i] = s / a[i][i];
  }
  return true;
}

// The inverse of a symmetric positive definite p x p matrix (column by column).
bool Invert(const std::vector<Vector>& a, std::vector<Vector>& inverse) {
  const size_t n = a.size();
  inverse.assign(n, Vector(n, 0));
  for (size_t c = 0; c < n; ++c) {
    Vector e(n, 0), x;
    e[c] = 1;
    if (!Solve(a, e, x)) return false;
    for (size_t r = 0; r < n; ++r) inverse[r][c] = x[r];
  }
  return true;
}

// The fit's view of the coefficients: the free ones as log values.
struct Problem {
  const std::vector<FitRow>& rows;
  const KernelCurves& curves;
  const Prior& prior;
  std::vector<size_t> free;  // indices into Coef
  Vector weight;             // per row: sources weigh alike (GroupWeights)

  ModelCoefficients At(const Vector& u) const {
    ModelCoefficients c = prior.mean;
    for (size_t i = 0; i < free.size(); ++i) c.value[free[i]] = std::exp(u[i]);
    return c;
  }
  // log(predicted / measured) per row.
  Vector Errors(const Vector& u) const {
    const ModelCoefficients c = At(u);
    Vector e(rows.size());
    for (size_t j = 0; j < rows.size(); ++j) {
      e[j] = std::log(PredictStepSeconds(rows[j], curves, c) / rows[j].measured_s);
    }
    return e;
  }
  // The weighted residual vector: the rows', then the prior's.
  Vector Residuals(const Vector& u) const {
    Vector r = Errors(u);
    for (size_t j = 0; j < r.size(); ++j) r[j] *= std::sqrt(weight[j]) / kRunNoise;
    for (size_t i = 0; i < free.size(); ++i) {
      const size_t k = free[i];
      r.push_back((u[i] - std::log(prior.mean.value[k])) / prior.log_sd[k]);
    }
    return r;
  }
  void Clamp(Vector& u) const {
    for (size_t i = 0; i < free.size(); ++i) {
      const CoefficientInfo& info = InfoOf(static_cast<Coef>(free[i]));
      u[i] = std::clamp(u[i], std::log(info.min), std::log(info.max));
    }
  }
};

double SumSquares(const Vector& r) {
  double s = 0;
  for (double x : r) s += x * x;
  return s;
}

// Forward-difference Jacobian of `f` at u (rows of f by columns of u).
template <typename F>
std::vector<Vector> Jacobian(const F& f, const Vector& u, const Vector& at) {
  std::vector<Vector> j(at.size());
  for (Vector& row : j) row.assign(u.size(), 0.0);
  for (size_t i = 0; i < u.size(); ++i) {
    Vector v = u;
    const double h = 1e-5;
    v[i] += h;
    const Vector moved = f(v);
    for (size_t r = 0; r < at.size(); ++r) j[r][i] = (moved[r] - at[r]) / h;
  }
  return j;
}

// Each row's weight in the fit: every source (group) weighs as much in total as an average one,
// N / (G n_g) a row, so a source that published the same configuration in many releases does not
// outvote the others; the weights sum to the number of rows.
Vector GroupWeights(const std::vector<FitRow>& rows) {
  std::map<std::string, double> count;
  for (const FitRow& r : rows) count[r.record->group] += 1;
  Vector w;
  w.reserve(rows.size());
  const double n = static_cast<double>(rows.size()), g = static_cast<double>(count.size());
  for (const FitRow& r : rows) w.push_back(n / (g * count[r.record->group]));
  return w;
}

}  // namespace

std::vector<FitRow> FitRows(const std::vector<RunRecord>& records,
                            const cost::GpuCatalog& catalog) {
  std::vector<FitRow> rows;
  for (const RunRecord& r : records) {
    if (r.kind != RunKind::kRun) continue;
    auto gpu = catalog.Get(r.spec.hardware.gpu);
    if (!gpu.ok()) continue;
    const auto measured = MeasuredStepSeconds(r, **gpu);
    if (!measured) continue;
    rows.push_back({&r, *gpu, *measured});
  }
  return rows;
}

double PredictStepSeconds(const FitRow& row, const KernelCurves& curves,
                          const ModelCoefficients& coefficients) {
  const JobSpec& spec = row.record->spec;
  HardwareModel hw;
  hw.curves = curves;
  hw.coefficients = coefficients;
  return EstimateStepTime(spec, ComputeModelFigures(spec.model), spec.parallelism, *row.gpu,
                          ResolveLinks(spec.hardware, *row.gpu), hw)
      .step_s;
}

Prior DefaultPrior() {
  Prior p;
  for (size_t i = 0; i < kCoefCount; ++i) {
    const CoefficientInfo& info = InfoOf(static_cast<Coef>(i));
    p.mean.value[i] = info.prior;
    p.log_sd[i] = info.prior_log_sd;
    p.free[i] = true;
  }
  return p;
}

base::StatusOr<FitResult> FitCoefficients(const std::vector<FitRow>& rows,
                                          const KernelCurves& curves, const Prior& prior) {
  Problem problem{rows, curves, prior, {}, GroupWeights(rows)};
  for (size_t i = 0; i < kCoefCount; ++i) {
    if (prior.free[i]) problem.free.push_back(i);
  }
  const size_t p = problem.free.size();
  Vector u(p);
  for (size_t i = 0; i < p; ++i) u[i] = std::log(prior.mean.value[problem.free[i]]);
  FitResult out;
  auto residuals = [&](const Vector& v) { return problem.Residuals(v); };
  Vector r = residuals(u);
  double cost = SumSquares(r);
  double lambda = 1e-3;
  bool done = p == 0;
  for (int it = 0; it < kMaxFitIterations && !done; ++it) {
    out.iterations = it + 1;
    const std::vector<Vector> j = Jacobian(residuals, u, r);
    std::vector<Vector> jtj(p, Vector(p, 0));
    Vector jtr(p, 0);
    for (size_t row = 0; row < r.size(); ++row) {
      for (size_t a = 0; a < p; ++a) {
        jtr[a] += j[row][a] * r[row];
        for (size_t b = 0; b < p; ++b) jtj[a][b] += j[row][a] * j[row][b];
      }
    }
    bool improved = false;
    for (int tries = 0; tries < 20 && !improved; ++tries) {
      std::vector<Vector> a = jtj;
      for (size_t d = 0; d < p; ++d) a[d][d] += lambda * std::max(jtj[d][d], 1e-12);
      Vector neg(p), step;
      for (size_t d = 0; d < p; ++d) neg[d] = -jtr[d];
      if (!Solve(a, neg, step)) {
        lambda *= 10;
        continue;
      }
      Vector next = u;
      for (size_t d = 0; d < p; ++d) next[d] += step[d];
      problem.Clamp(next);
      const Vector rn = residuals(next);
      const double cn = SumSquares(rn);
      if (cn < cost) {
        const double gain = (cost - cn) / std::max(cost, 1e-300);
        u = next;
        r = rn;
        cost = cn;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        done = gain < kFitTolerance;
      } else {
        lambda *= 4;
      }
    }
    if (!improved) done = true;  // no step lowers the cost: a minimum
  }
  out.converged = done;
  out.coefficients = problem.At(u);
  const Vector errors = problem.Errors(u);
  out.residuals.reserve(errors.size());
  double rss = 0;  // weighted
  for (size_t j = 0; j < errors.size(); ++j) {
    out.residuals.push_back(-errors[j]);
    rss += problem.weight[j] * errors[j] * errors[j];
  }
  out.rms = errors.empty() ? 0 : std::sqrt(rss / static_cast<double>(errors.size()));  // Σw = N
  // Standard errors: the inverse Hessian of the log posterior (Gauss-Newton), with the rows'
  // noise raised to their own spread when that is larger.
  if (p > 0 && !errors.empty()) {
    const double dof = std::max(1.0, static_cast<double>(errors.size()) - static_cast<double>(p));
    const double sigma2 = std::max(kRunNoise * kRunNoise, rss / dof);
    auto err = [&](const Vector& v) { return problem.Errors(v); };
    const std::vector<Vector> j = Jacobian(err, u, errors);
    std::vector<Vector> h(p, Vector(p, 0));
    for (size_t row = 0; row < errors.size(); ++row) {
      for (size_t a = 0; a < p; ++a) {
        for (size_t b = 0; b < p; ++b) {
          h[a][b] += problem.weight[row] * j[row][a] * j[row][b] / sigma2;
        }
      }
    }
    for (size_t d = 0; d < p; ++d) {
      const double sd = prior.log_sd[problem.free[d]];
      h[d][d] += 1 / (sd * sd);
    }
    std::vector<Vector> cov;
    if (Invert(h, cov)) {
      for (size_t d = 0; d < p; ++d) {
        const size_t k = problem.free[d];
        out.coefficients.standard_error[k] =
            out.coefficients.value[k] * std::sqrt(std::max(0.0, cov[d][d]));
      }
    }
  }
  return out;
}

std::string SourceOf(const RunRecord& r) { return r.group.empty() ? "ungrouped" : r.group; }

base::StatusOr<CrossValidation> CrossValidate(const std::vector<FitRow>& rows,
                                              const KernelCurves& curves, const Prior& prior) {
  CrossValidation cv;
  cv.residuals.assign(rows.size(), 0);
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < rows.size(); ++i) groups[SourceOf(*rows[i].record)].push_back(i);
  for (const auto& [name, members] : groups) {
    cv.groups.push_back(name);
    std::vector<FitRow> train;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (SourceOf(*rows[i].record) != name) train.push_back(rows[i]);
    }
    SEEDANCE_ASSIGN_OR_RETURN(FitResult fit, FitCoefficients(train, curves, prior));
    for (size_t i : members) {
      cv.residuals[i] =
          std::log(rows[i].measured_s / PredictStepSeconds(rows[i], curves, fit.coefficients));
    }
    cv.fits.push_back(fit.coefficients);
  }
  return cv;
}

std::vector<double> PairedResiduals(const std::vector<FitRow>& rows,
                                    const std::vector<double>& residuals) {
  std::vector<double> out;
  auto same_job = [](const JobSpec& a, const JobSpec& b) {
    return a.model.layers == b.model.layers && a.model.hidden_size == b.model.hidden_size &&
           a.model.sequence_length == b.model.sequence_length &&
           a.hardware.total_gpus() == b.hardware.total_gpus() &&
           a.training.global_batch == b.training.global_batch && a.hardware.gpu == b.hardware.gpu;
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = i + 1; j < rows.size(); ++j) {
      const RunRecord& a = *rows[i].record;
      const RunRecord& b = *rows[j].record;
      if (a.group != b.group || !same_job(a.spec, b.spec)) continue;
      // Two layouts: they differ in a dimension the search changes (not merely in the sharding
      // stage, which is how MegaScale's tables tell its own software from Megatron-LM's).
      const ParallelConfig& x = a.spec.parallelism;
      const ParallelConfig& y = b.spec.parallelism;
      const bool layouts_differ = x.tensor != y.tensor || x.pipeline != y.pipeline ||
                                  x.virtual_stages != y.virtual_stages ||
                                  x.context_parallel != y.context_parallel ||
                                  x.recompute != y.recompute || x.micro_batch != y.micro_batch ||
                                  a.spec.training.precision != b.spec.training.precision;
      if (!layouts_differ) continue;
      out.push_back(residuals[i] - residuals[j]);
      out.push_back(residuals[j] - residuals[i]);
    }
  }
  return out;
}

std::vector<MemoryResidual> MemoryResiduals(
    const std::vector<RunRecord>& records, const cost::GpuCatalog& catalog,
    const std::array<double, kFrameworkCount>& measured_overhead) {
  std::vector<MemoryResidual> out;
  for (const RunRecord& r : records) {
    if (!r.gb_per_gpu) continue;
    MemoryResidual x;
    double predicted = 0;
    if (r.kind == RunKind::kModelStates) {
      predicted =
          static_cast<double>(ModelStateBytes(r.parameters, StateBytesFor(r.spec.training),
                                              r.spec.parallelism.zero_stage, r.data_parallel));
    } else {
      auto gpu = catalog.Get(r.spec.hardware.gpu);
      if (!gpu.ok()) continue;
      // As `optimize --evaluate-only` estimates it: the fragmentation margin is the stated
      // layout's replayed step's (the default where the replay fails).
      const ModelFigures figures = ComputeModelFigures(r.spec.model);
      MemorySettings settings;
      settings.measured_overhead_fraction = measured_overhead;
      const auto replay = ReplayPlannedStep(r.spec, figures, r.spec.parallelism);
      if (replay.ok()) settings.fragmentation_fraction = replay->margin_fraction;
      predicted = static_cast<double>(
          EstimateMemory(r.spec, figures, r.spec.parallelism, (*gpu)->MemoryBytes(), settings)
              .total_bytes);
      x.framework = RunningFramework(r.spec, r.spec.parallelism);
    }
    x.residual = std::log(*r.gb_per_gpu * 1e9 / predicted);
    out.push_back(x);
  }
  return out;
}

std::vector<double> ResidualsOf(const std::vector<MemoryResidual>& residuals) {
  std::vector<double> out;
  out.reserve(residuals.size());
  for (const MemoryResidual& x : residuals) out.push_back(x.residual);
  return out;
}

namespace {

// The memory rows' log(published / estimated) without any overhead, per framework, ascending.
std::array<std::vector<double>, kFrameworkCount> MemoryLogsByFramework(
    const std::vector<RunRecord>& records, const cost::GpuCatalog& catalog) {
  std::array<std::vector<double>, kFrameworkCount> by_framework;
  for (const MemoryResidual& x : MemoryResiduals(records, catalog)) {
    if (x.framework) by_framework[static_cast<size_t>(*x.framework)].push_back(x.residual);
  }
  for (std::vector<double>& logs : by_framework) std::sort(logs.begin(), logs.end());
  return by_framework;
}

// The standard error of the median of n values of spread sd, under a normal spread.
double MedianStandardError(double sd, size_t n) {
  return std::sqrt(std::numbers::pi / 2) * sd / std::sqrt(static_cast<double>(n));
}

}  // namespace

MemoryOverheadFit FitMemoryOverhead(const std::vector<RunRecord>& records,
                                    const cost::GpuCatalog& catalog) {
  const auto by_framework = MemoryLogsByFramework(records, catalog);
  MemoryOverheadFit fit;
  for (size_t i = 0; i < kFrameworkCount; ++i) {
    const std::vector<double>& logs = by_framework[i];
    fit.rows[i] = static_cast<int>(logs.size());
    if (logs.size() < 2) continue;
    const double median = base::QuantileOfSorted(logs, 0.5);
    fit.value[i] = std::expm1(median);
    fit.standard_error[i] =
        std::exp(median) * MedianStandardError(cost::SampleStdDev(logs), logs.size());
  }
  return fit;
}

ResidualQuantiles QuantilesOf(std::vector<double> residuals) {
  ResidualQuantiles q;
  q.rows = static_cast<int>(residuals.size());
  if (residuals.empty()) return q;
  std::sort(residuals.begin(), residuals.end());
  q.q05 = base::QuantileOfSorted(residuals, 0.05);
  q.q95 = base::QuantileOfSorted(residuals, 0.95);
  return q;
}

ResidualQuantiles SourceBalancedQuantilesOf(const std::vector<double>& residuals,
                                            const std::vector<std::string>& sources) {
  std::map<std::string, std::vector<double>> by_source;
  for (size_t i = 0; i < residuals.size(); ++i) by_source[sources[i]].push_back(residuals[i]);
  std::vector<double> pooled;
  pooled.reserve(by_source.size() * kSourceLevels);
  for (auto& [source, values] : by_source) {
    std::sort(values.begin(), values.end());
    for (int j = 0; j < kSourceLevels; ++j) {
      pooled.push_back(base::QuantileOfSorted(values, (j + 0.5) / kSourceLevels));
    }
  }
  ResidualQuantiles q = QuantilesOf(std::move(pooled));
  q.rows = static_cast<int>(residuals.size());
  return q;
}

StepTimeSpread StepTimeSpreadOf(const std::vector<FitRow>& rows,
                                const std::vector<double>& residuals,
                                const std::optional<std::string>& left_out, bool balanced) {
  // Index kRegimeCount holds every regime.
  std::array<std::vector<double>, kRegimeCount + 1> values;
  std::array<std::vector<std::string>, kRegimeCount + 1> sources;
  for (size_t i = 0; i < rows.size(); ++i) {
    const RunRecord& r = *rows[i].record;
    const std::string source = SourceOf(r);
    if (left_out && source == *left_out) continue;
    const auto regime = static_cast<size_t>(RegimeOf(r.spec, r.spec.parallelism));
    for (size_t g : {regime, kRegimeCount}) {
      values[g].push_back(residuals[i]);
      sources[g].push_back(source);
    }
  }
  auto quantiles = [&](size_t g) {
    return balanced ? SourceBalancedQuantilesOf(values[g], sources[g]) : QuantilesOf(values[g]);
  };
  StepTimeSpread s;
  for (size_t g = 0; g < kRegimeCount; ++g) s.by_regime[g] = quantiles(g);
  s.all = quantiles(kRegimeCount);
  return s;
}

std::vector<HeldOutRun> HeldOutRuns(const std::vector<FitRow>& rows, const CrossValidation& cv,
                                    bool balanced) {
  std::vector<HeldOutRun> out;
  for (const std::string& source : cv.groups) {
    const StepTimeSpread spread = StepTimeSpreadOf(rows, cv.residuals, source, balanced);
    for (size_t i = 0; i < rows.size(); ++i) {
      const RunRecord& r = *rows[i].record;
      if (SourceOf(r) != source) continue;
      out.push_back({.source = source,
                     .residual = cv.residuals[i],
                     .q = RegimeQuantiles(spread.by_regime, spread.all,
                                          RegimeOf(r.spec, r.spec.parallelism))});
    }
  }
  return out;
}

std::vector<SourceCoverage> NewSourceCoverage(const std::vector<HeldOutRun>& runs,
                                              double widening) {
  std::vector<SourceCoverage> out;
  for (const HeldOutRun& run : runs) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const SourceCoverage& c) { return c.source == run.source; });
    if (it == out.end()) it = out.insert(out.end(), {.source = run.source});
    const ResidualQuantiles q = run.q.Widened(widening);
    ++it->rows;
    it->inside += run.residual >= q.q05 && run.residual <= q.q95 ? 1 : 0;
  }
  return out;
}

double MeanShareInside(const std::vector<SourceCoverage>& coverage,
                       const std::optional<std::string>& ignored) {
  double sum = 0;
  int sources = 0;
  for (const SourceCoverage& c : coverage) {
    if ((ignored && c.source == *ignored) || c.rows == 0) continue;
    sum += static_cast<double>(c.inside) / c.rows;
    ++sources;
  }
  return sources > 0 ? sum / sources : 0;
}

std::optional<double> NewSourceWidening(const std::vector<HeldOutRun>& runs, double target,
                                        const std::optional<std::string>& ignored) {
  // Integer steps, 1.00 to the cap inclusive, without the drift of adding 0.01 repeatedly; a
  // mean within rounding of the target counts as reaching it.
  const int last = static_cast<int>(std::lround(kMaxStepTimeWidening * 100));
  for (int step = 100; step <= last; ++step) {
    const double w = step / 100.0;
    if (MeanShareInside(NewSourceCoverage(runs, w), ignored) >= target - 1e-12) return w;
  }
  return std::nullopt;
}

base::StatusOr<Calibration> Calibrate(const std::vector<FitRow>& rows, const PublicFit& fit) {
  if (rows.empty()) {
    return base::InvalidArgumentError("no run with a measured step time to calibrate with",
                                      "calibrate");
  }
  Calibration c;
  c.before = fit.coefficients;
  Prior prior;
  prior.mean = fit.coefficients;
  for (size_t i = 0; i < kCoefCount; ++i) {
    const double value = fit.coefficients.value[i];
    const double se = fit.coefficients.standard_error[i];
    prior.log_sd[i] = se > 0 && value > 0 ? std::max(se / value, kMinCalibrationLogSd)
                                          : InfoOf(static_cast<Coef>(i)).prior_log_sd;
  }
  // Free what the rows inform: an e-fold change that moves some row's prediction by 2%.
  for (size_t i = 0; i < kCoefCount; ++i) {
    ModelCoefficients moved = fit.coefficients;
    moved.value[i] = std::min(moved.value[i] * std::exp(1.0), InfoOf(static_cast<Coef>(i)).max);
    if (moved.value[i] == fit.coefficients.value[i]) moved.value[i] /= std::exp(1.0);
    double most = 0;
    for (const FitRow& r : rows) {
      const double a = PredictStepSeconds(r, fit.curves, fit.coefficients);
      const double b = PredictStepSeconds(r, fit.curves, moved);
      most = std::max(most, std::fabs(std::log(b / a)));
    }
    prior.free[i] = most >= kInformativeShare;
  }
  c.refitted = prior.free;
  SEEDANCE_ASSIGN_OR_RETURN(FitResult result, FitCoefficients(rows, fit.curves, prior));
  c.after = result.coefficients;
  for (size_t i = 0; i < kCoefCount; ++i) {
    if (!prior.free[i]) c.after.standard_error[i] = fit.coefficients.standard_error[i];
  }
  for (const FitRow& r : rows) {
    c.residuals_before.push_back(
        std::log(r.measured_s / PredictStepSeconds(r, fit.curves, c.before)));
    c.residuals_after.push_back(
        std::log(r.measured_s / PredictStepSeconds(r, fit.curves, c.after)));
  }
  return c;
}

base::StatusOr<std::vector<HeldOutCalibration>> CalibrateHeldOutSources(
    const std::vector<FitRow>& rows, const CrossValidation& cv, const PublicFit& fit, int given) {
  if (given < 1) return base::InvalidArgumentError("given must be at least 1", "calibrate");
  std::vector<HeldOutCalibration> out;
  for (size_t g = 0; g < cv.groups.size(); ++g) {
    std::vector<FitRow> source;
    for (const FitRow& r : rows) {
      if (SourceOf(*r.record) == cv.groups[g]) source.push_back(r);
    }
    if (source.size() < static_cast<size_t>(given) + 3) continue;
    PublicFit without = fit;
    without.coefficients = cv.fits[g];
    std::vector<FitRow> shown, held;
    const size_t stride = source.size() / static_cast<size_t>(given);
    for (size_t i = 0; i < source.size(); ++i) {
      const bool pick = i % stride == 0 && shown.size() < static_cast<size_t>(given);
      (pick ? shown : held).push_back(source[i]);
    }
    HeldOutCalibration h;
    h.source = cv.groups[g];
    h.given = static_cast<int>(shown.size());
    h.held = static_cast<int>(held.size());
    SEEDANCE_ASSIGN_OR_RETURN(h.calibration, Calibrate(shown, without));
    std::vector<double> abs_before, abs_after, log_before, log_after;
    for (const FitRow& r : held) {
      const double before = PredictStepSeconds(r, fit.curves, h.calibration.before);
      const double after = PredictStepSeconds(r, fit.curves, h.calibration.after);
      abs_before.push_back(std::fabs(before / r.measured_s - 1));
      abs_after.push_back(std::fabs(after / r.measured_s - 1));
      log_before.push_back(std::log(r.measured_s / before));
      log_after.push_back(std::log(r.measured_s / after));
      h.within_before += abs_before.back() <= 0.15 ? 1 : 0;
      h.within_after += abs_after.back() <= 0.15 ? 1 : 0;
    }
    h.median_abs_before = cost::Median(abs_before);
    h.median_abs_after = cost::Median(abs_after);
    h.median_log_before = cost::Median(log_before);
    h.median_log_after = cost::Median(log_after);
    out.push_back(std::move(h));
  }
  return out;
}

MemoryCalibration CalibrateMemoryOverhead(const std::vector<RunRecord>& records,
                                          const cost::GpuCatalog& catalog, const PublicFit& fit) {
  const auto by_framework = MemoryLogsByFramework(records, catalog);
  const double row_sd = std::max(kMinCalibrationLogSd, (fit.memory.q95 - fit.memory.q05) / 3.29);
  MemoryCalibration c;
  c.before = fit.memory_overhead;
  c.after = fit.memory_overhead;
  for (size_t i = 0; i < kFrameworkCount; ++i) {
    const std::vector<double>& logs = by_framework[i];
    c.rows[i] = static_cast<int>(logs.size());
    if (logs.empty()) continue;
    const double rows_log = base::QuantileOfSorted(logs, 0.5);
    const double rows_sd = MedianStandardError(row_sd, logs.size());
    const double prior_log = std::log1p(fit.memory_overhead[i]);
    // As the time model's calibration floors its prior: a cluster's overhead may differ from
    // the public sources' by more than the public median's standard error.
    const double prior_sd = fit.memory_overhead_se[i] > 0
                                ? std::max(kMinCalibrationLogSd,
                                           fit.memory_overhead_se[i] / (1 + fit.memory_overhead[i]))
                                : kMemoryOverheadPriorLogSd;
    const double w_prior = 1 / (prior_sd * prior_sd), w_rows = 1 / (rows_sd * rows_sd);
    c.after[i] = std::expm1((w_prior * prior_log + w_rows * rows_log) / (w_prior + w_rows));
  }
  return c;
}

base::Report MemoryCalibrationToReport(const MemoryCalibration& c) {
  base::Report frameworks = base::Report::object();
  for (size_t i = 0; i < kFrameworkCount; ++i) {
    if (c.rows[i] == 0) continue;
    frameworks[std::string(FrameworkName(static_cast<Framework>(i)))] = {
        {"public", c.before[i]}, {"calibrated", c.after[i]}, {"rows", c.rows[i]}};
  }
  base::Report r = base::Report::object();
  r["frameworks"] = frameworks;
  r["rule"] =
      "per framework with rows stating memory: the public overhead (its standard error, at least "
      "5%, as the spread; 0 with 15% where the public set has no memory rows of it) weighed "
      "against the rows' median excess over the estimate";
  return r;
}

base::Report CalibrationToReport(const Calibration& c, const std::vector<FitRow>& rows) {
  base::Report r = base::Report::object();
  base::Report changed = base::Report::object();
  for (size_t i = 0; i < kCoefCount; ++i) {
    const auto k = static_cast<Coef>(i);
    base::Report one = base::Report::object();
    one["public"] = c.before.value[i];
    one["calibrated"] = c.after.value[i];
    one["refitted"] = c.refitted[i];
    one["standard_error"] = c.after.standard_error[i];
    changed[std::string(CoefName(k))] = one;
  }
  r["coefficients"] = changed;
  base::Report runs = base::Report::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    base::Report one = base::Report::object();
    one["id"] = rows[i].record->id;
    one["measured_step_s"] = rows[i].measured_s;
    one["error_pct_public"] = (std::exp(-c.residuals_before[i]) - 1) * 100;
    one["error_pct_calibrated"] = (std::exp(-c.residuals_after[i]) - 1) * 100;
    runs.push_back(one);
  }
  r["runs"] = runs;
  r["rule"] =
      "the public fit is the prior (its standard errors as the spread); only coefficients "
      "that move a run's predicted step time by 2% per e-fold are refitted";
  return r;
}

}  // namespace seedance::plan
