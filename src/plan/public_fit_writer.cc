#include "seedance/plan/public_fit_writer.h"

#include <cstdio>

namespace seedance::plan {
namespace {

std::string D(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Quantiles(const ResidualQuantiles& q) {
  return "{" + D(q.q05) + ", " + D(q.q95) + ", " + std::to_string(q.rows) + "}";
}

std::string Link(const LinkCurve& c) {
  return "{" + D(c.latency_s) + ", " + D(c.busbw_fraction) + "}";
}

}  // namespace

std::string PublicFitSource(const PublicFit& fit) {
  std::string s =
      "// Written by `build/bench/published_runs --fit --write src/plan/public_fit.cc`: the "
      "public fit\n// of the time model to bench/plan/published_runs.csv and "
      "bench/plan/kernel_refs.csv. Do not\n// edit by hand; PublicFitTest.MatchesTheCalibrationSet "
      "re-runs the fit and compares.\n"
      "#include \"seedance/plan/coefficients.h\"\n\nnamespace seedance::plan {\n\n"
      "const PublicFit& BuiltInFit() {\n  static const PublicFit fit = [] {\n    PublicFit f;\n";
  const KernelCurves& c = fit.curves;
  s += "    f.curves.gemm_half_dim = " + D(c.gemm_half_dim) + ";\n";
  s += "    f.curves.gemm_fixed_s = " + D(c.gemm_fixed_s) + ";\n";
  s += "    f.curves.attention_half_seq = " + D(c.attention_half_seq) + ";\n";
  s += "    f.curves.attention_half_dim = " + D(c.attention_half_dim) + ";\n";
  s += "    f.curves.stream_fraction = " + D(c.stream_fraction) + ";\n";
  s += "    f.curves.nvlink_ampere = " + Link(c.nvlink_ampere) + ";\n";
  s += "    f.curves.nvlink_hopper = " + Link(c.nvlink_hopper) + ";\n";
  s += "    f.curves.network = " + Link(c.network) + ";\n";
  for (size_t i = 0; i < kCoefCount; ++i) {
    const std::string name(CoefName(static_cast<Coef>(i)));
    // Comments on their own lines: a trailing one's alignment would depend on the figures' widths,
    // and clang-format would ask for a different file after each refit.
    s += "    // " + name + "\n";
    s += "    f.coefficients.value[" + std::to_string(i) + "] = " + D(fit.coefficients.value[i]) +
         ";\n";
    s += "    f.coefficients.standard_error[" + std::to_string(i) +
         "] = " + D(fit.coefficients.standard_error[i]) + ";\n";
  }
  for (size_t i = 0; i < kRegimeCount; ++i) {
    s += "    // " + std::string(RegimeName(static_cast<Regime>(i))) + "\n";
    s += "    f.step_time[" + std::to_string(i) + "] = " + Quantiles(fit.step_time[i]) + ";\n";
  }
  s += "    f.step_time_all = " + Quantiles(fit.step_time_all) + ";\n";
  s += "    f.step_time_widening = " + D(fit.step_time_widening) + ";\n";
  s += "    f.paired = " + Quantiles(fit.paired) + ";\n";
  s += "    f.memory = " + Quantiles(fit.memory) + ";\n";
  s += "    f.max_sequence_length = " + D(fit.max_sequence_length) + ";\n";
  s += "    f.max_gpus = " + std::to_string(fit.max_gpus) + ";\n";
  s += "    f.frameworks_with_rows = " + std::to_string(fit.frameworks_with_rows) + ";\n";
  s += "    f.memory_frameworks_with_rows = " + std::to_string(fit.memory_frameworks_with_rows) +
       ";\n";
  for (size_t i = 0; i < kFrameworkCount; ++i) {
    if (fit.memory_overhead[i] == 0 && fit.memory_overhead_se[i] == 0) continue;
    const std::string at = "[" + std::to_string(i) + "]";
    s += "    // " + std::string(FrameworkName(static_cast<Framework>(i))) + "\n";
    s += "    f.memory_overhead" + at + " = " + D(fit.memory_overhead[i]) + ";\n";
    s += "    f.memory_overhead_se" + at + " = " + D(fit.memory_overhead_se[i]) + ";\n";
  }
  s += "    return f;\n  }();\n  return fit;\n}\n\n}  // namespace seedance::plan\n";
  return s;
}

}  // namespace seedance::plan
