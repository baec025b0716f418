#include "seedance/plan/intervals.h"

#include <algorithm>
#include <cmath>

#include "seedance/base/enum_names.h"
#include "seedance/plan/kernel_anchors.h"
#include "seedance/plan/memory_model.h"

namespace seedance::plan {
namespace {

constexpr base::EnumTable<MemoryFit, 3> kMemoryFitNames = {
    {{MemoryFit::kFits, "fits"},
     {MemoryFit::kAtRisk, "at risk"},
     {MemoryFit::kDoesNotFit, "does not fit"}}};

Interval Around(double value, const ResidualQuantiles& q) {
  return {value * std::exp(q.q05), value * std::exp(q.q95)};
}

// A rate's interval: the inverse of the time's.
Interval Inverse(double value, const ResidualQuantiles& q) {
  return {value * std::exp(-q.q95), value * std::exp(-q.q05)};
}

}  // namespace

Regime RegimeOf(const JobSpec& spec, const ParallelConfig& c) {
  const bool model = c.tensor * c.pipeline * c.context_parallel > 1;
  if (spec.hardware.nodes <= 1) return model ? Regime::kSingleNodeModel : Regime::kSingleNodeData;
  return model ? Regime::kMultiNodeModel : Regime::kMultiNodeData;
}

const ResidualQuantiles& RegimeQuantiles(
    const std::array<ResidualQuantiles, kRegimeCount>& by_regime, const ResidualQuantiles& all,
    Regime regime) {
  const ResidualQuantiles& own = by_regime[static_cast<size_t>(regime)];
  return own.rows >= kMinRegimeRows ? own : all;
}

EvaluationIntervals IntervalsFor(const JobSpec& spec, const cost::GpuSpec& gpu,
                                 const ParallelConfig& c, const PredictedFigures& f,
                                 const PublicFit& fit) {
  EvaluationIntervals out;
  out.regime = RegimeOf(spec, c);
  const TrainingSpec training = TrainingOf(spec.training, c);
  auto widen = [&](double factor, std::string note) {
    out.widen *= factor;
    out.notes.push_back(std::move(note));
  };
  if (!Anchored(gpu, training.precision)) {
    widen(2, "no kernel rows for " + gpu.id + " in " +
                 std::string(base::NumericFormatName(training.precision)) +
                 ": its GEMMs run at the datasheet roofline, not a measured share; the interval "
                 "is twice as wide");
  }
  // The framework the models counted (framework.h): the spec's, else the first that runs `c`.
  const std::optional<Framework> running = RunningFramework(spec, c);
  const std::string running_name = running ? std::string(FrameworkName(*running)) : "";
  if (!spec.framework) {
    out.notes.push_back(
        running ? "no framework stated: counted as " + running_name +
                      " runs this layout (the first of megatron, torchtitan, deepspeed and fsdp "
                      "that runs it)"
                : "no framework stated and none runs this layout: counted with Megatron-Core's "
                  "fused kernels and tensor-parallel overlap");
  }
  if (running && (fit.frameworks_with_rows & (1u << static_cast<unsigned>(*running))) == 0) {
    widen(1.5, "no published run of " + running_name +
                   " in the calibration set: its kernels and overlap are counted from first "
                   "principles; the interval is 1.5 times as wide");
  }
  if (static_cast<double>(spec.model.sequence_length) > fit.max_sequence_length &&
      fit.max_sequence_length > 0) {
    widen(1.5, "the sequence (" + std::to_string(spec.model.sequence_length) +
                   " tokens) is longer than any calibration run's");
  }
  if (spec.hardware.total_gpus() > fit.max_gpus && fit.max_gpus > 0) {
    widen(1.5, "more GPUs (" + std::to_string(spec.hardware.total_gpus()) +
                   ") than any calibration run's (" + std::to_string(fit.max_gpus) + ")");
  }
  if (spec.hardware.nodes > 1 && spec.hardware.inter_node != "infiniband") {
    widen(1.5, "no calibration run crossed nodes over " + spec.hardware.inter_node +
                   ": the network runs at the nccl-tests InfiniBand/EFA share of its bandwidth");
  }
  const ResidualQuantiles q = RegimeQuantiles(fit.step_time, fit.step_time_all, out.regime)
                                  .Widened(fit.step_time_widening * out.widen);
  out.step_s = Around(f.step_s, q);
  out.tokens_per_s_per_gpu = Inverse(f.tokens_per_s_per_gpu, q);
  out.mfu = Inverse(f.mfu, q);
  out.hfu = Inverse(f.hfu, q);
  out.model_tflops_per_gpu = Inverse(f.model_tflops_per_gpu, q);
  out.hardware_tflops_per_gpu = Inverse(f.hardware_tflops_per_gpu, q);
  // The memory rows' error is their frameworks' (DeepSpeed's, read by nvidia-smi, in the public
  // set): another framework's interval keeps their spread but not their bias, centred on the
  // estimate and 1.5 times as wide.
  const bool memory_rows =
      running && (fit.memory_frameworks_with_rows & (1u << static_cast<unsigned>(*running))) != 0;
  ResidualQuantiles memory = fit.memory;
  if (!memory_rows) {
    const double half = (memory.q95 - memory.q05) / 2 * 1.5;
    memory.q05 = -half;
    memory.q95 = half;
    out.notes.push_back(
        "no published memory figure of " + (running ? running_name : std::string("this layout")) +
        ": the memory interval is centred on the estimate, 1.5 times as wide as the calibration "
        "rows'");
  }
  out.memory_bytes_per_gpu = Around(f.memory_bytes_per_gpu, memory);
  return out;
}

Interval RatioInterval(double before_s, double after_s, const EvaluationIntervals& before,
                       const EvaluationIntervals& after, const PublicFit& fit) {
  // Widened only for what differs between the two: a framework or region note both share
  // (the same job) moves both predictions alike.
  const double widen =
      std::max(before.widen, after.widen) / std::max(1.0, std::min(before.widen, after.widen));
  const ResidualQuantiles q = fit.paired.Widened(widen);
  // log(true after / true before) = log(predicted ratio) + r_after - r_before.
  return Around(after_s / before_s, q);
}

std::string_view MemoryFitName(MemoryFit fit) { return base::EnumName(kMemoryFitNames, fit); }

MemoryFit MemoryFitOf(const EvaluationIntervals& i, double capacity_bytes) {
  if (i.memory_bytes_per_gpu.low > capacity_bytes) return MemoryFit::kDoesNotFit;
  if (i.memory_bytes_per_gpu.high > capacity_bytes) return MemoryFit::kAtRisk;
  return MemoryFit::kFits;
}

base::Report IntervalsToReport(const EvaluationIntervals& i) {
  auto pair = [](const Interval& v) { return base::Report::array({v.low, v.high}); };
  base::Report r = base::Report::object();
  r["step_time_s"] = pair(i.step_s);
  r["tokens_per_s_per_gpu"] = pair(i.tokens_per_s_per_gpu);
  r["mfu"] = pair(i.mfu);
  r["hfu"] = pair(i.hfu);
  r["model_tflops_per_gpu"] = pair(i.model_tflops_per_gpu);
  r["hardware_tflops_per_gpu"] = pair(i.hardware_tflops_per_gpu);
  r["memory_bytes_per_gpu"] = pair(i.memory_bytes_per_gpu);
  r["regime"] = std::string(RegimeName(i.regime));
  r["level"] = 0.9;
  if (!i.notes.empty()) {
    base::Report notes = base::Report::array();
    for (const std::string& n : i.notes) notes.push_back(n);
    r["notes"] = notes;
  }
  return r;
}

base::Report PublicFitSpreadToReport(const PublicFit& fit) {
  auto range = [](const ResidualQuantiles& x) {
    return base::Report::array({(std::exp(-x.q95) - 1) * 100, (std::exp(-x.q05) - 1) * 100});
  };
  auto q = [&](const ResidualQuantiles& x) {
    return base::Report{
        {"q05", x.q05}, {"q95", x.q95}, {"rows", x.rows}, {"error_pct_range", range(x)}};
  };
  // A step time's quantiles, and the range IntervalsFor prints inside the calibrated region.
  auto step = [&](const ResidualQuantiles& x) {
    base::Report r = q(x);
    r["error_pct_range_widened"] = range(x.Widened(fit.step_time_widening));
    return r;
  };
  base::Report r = base::Report::object();
  base::Report regimes = base::Report::object();
  for (size_t i = 0; i < kRegimeCount; ++i) {
    regimes[std::string(RegimeName(static_cast<Regime>(i)))] = step(fit.step_time[i]);
  }
  r["step_time_by_regime"] = regimes;
  r["step_time_all"] = step(fit.step_time_all);
  r["step_time_widening"] = fit.step_time_widening;
  r["paired"] = q(fit.paired);
  r["memory"] = q(fit.memory);
  base::Report overhead = base::Report::object();
  for (size_t i = 0; i < kFrameworkCount; ++i) {
    if (fit.memory_overhead[i] == 0 && fit.memory_overhead_se[i] == 0) continue;
    overhead[std::string(FrameworkName(static_cast<Framework>(i)))] = {
        {"value", fit.memory_overhead[i]}, {"standard_error", fit.memory_overhead_se[i]}};
  }
  r["memory_overhead"] = overhead;
  r["max_sequence_length"] = fit.max_sequence_length;
  r["max_gpus"] = fit.max_gpus;
  return r;
}

}  // namespace seedance::plan
