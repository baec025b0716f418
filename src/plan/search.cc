#include "seedance/plan/search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

namespace seedance::plan {

MemorySettings PublicMemorySettings() {
  MemorySettings m;
  m.measured_overhead_fraction = BuiltInFit().memory_overhead;
  return m;
}
namespace {

// The divisors of n up to `limit`, ascending (trial division to the square root).
std::vector<int64_t> Divisors(int64_t n, int64_t limit) {
  std::vector<int64_t> low, high;
  for (int64_t k = 1; k <= n / k; ++k) {
    if (n % k != 0) continue;
    low.push_back(k);
    if (k != n / k) high.push_back(n / k);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  std::erase_if(low, [&](int64_t k) { return k > limit; });
  return low;
}

// "+12.3%" of b against a.
std::string Percent(double a, double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", (b / a - 1) * 100);
  return buf;
}

std::string Gb(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return buf;
}

// Evaluate with the model's figures and the links computed once by the caller (the search
// evaluates thousands of layouts of one job).
Evaluation EvaluateWith(const JobSpec& spec, const cost::GpuSpec& gpu, const ModelFigures& figures,
                        const Links& links, const ParallelConfig& c, const PlanSettings& settings) {
  Evaluation e;
  e.config = c;
  e.memory = EstimateMemory(spec, figures, c, gpu.MemoryBytes(), settings.memory);
  e.time = EstimateStepTime(spec, figures, c, gpu, links, settings.hardware);
  const double gpus = static_cast<double>(spec.hardware.total_gpus());
  const double tokens = static_cast<double>(spec.training.global_batch) *
                        static_cast<double>(spec.model.sequence_length);
  const double step = e.time.step_s;
  const TrainingSpec training = TrainingOf(spec.training, c);
  const double peak = gpu.DenseTflops(training.precision).value_or(0) * 1e12;
  e.tokens_per_s_per_gpu = tokens / step / gpus;
  e.model_tflops_per_gpu = e.time.model_flops_per_step / step / gpus / 1e12;
  e.hardware_tflops_per_gpu = e.time.hardware_flops_per_step / step / gpus / 1e12;
  e.mfu = peak > 0 ? e.model_tflops_per_gpu * 1e12 / peak : 0;
  e.hfu = peak > 0 ? e.hardware_tflops_per_gpu * 1e12 / peak : 0;
  e.cost_per_step_usd = step / 3600 * spec.price_per_gpu_hour_usd * gpus;
  cost::NodeLoad load;
  load.gpus = static_cast<int>(spec.hardware.gpus_per_node);
  load.gpu_tdp_watts = gpu.tdp_watts;
  load.gpu_utilization = std::clamp(e.time.compute_s / step, 0.0, 1.0);
  const cost::PowerBreakdown node = cost::NodePower(settings.power, load);
  e.power_w = node.facility_watts * static_cast<double>(spec.hardware.nodes);
  e.energy_per_step_j = e.power_w * step;
  const PredictedFigures predicted{
      .step_s = step,
      .tokens_per_s_per_gpu = e.tokens_per_s_per_gpu,
      .mfu = e.mfu,
      .hfu = e.hfu,
      .model_tflops_per_gpu = e.model_tflops_per_gpu,
      .hardware_tflops_per_gpu = e.hardware_tflops_per_gpu,
      .memory_bytes_per_gpu = static_cast<double>(e.memory.total_bytes)};
  e.intervals = IntervalsFor(spec, gpu, c, predicted, *settings.fit);
  return e;
}

// The precisions the search weighs: the stated ones alone (left unset, so layouts are the
// spec's), or each listed compute precision with each listed optimizer-state precision.
struct Precisions {
  std::optional<base::NumericFormat> compute, optimizer_states;
};

std::vector<Precisions> PrecisionChoices(const TrainingSpec& t) {
  if (t.search_precisions.empty() && t.search_optimizer_states.empty()) return {Precisions{}};
  std::vector<base::NumericFormat> compute = {t.precision}, states = {t.optimizer_states};
  for (base::NumericFormat f : t.search_precisions) {
    if (std::find(compute.begin(), compute.end(), f) == compute.end()) compute.push_back(f);
  }
  for (base::NumericFormat f : t.search_optimizer_states) {
    if (std::find(states.begin(), states.end(), f) == states.end()) states.push_back(f);
  }
  std::vector<Precisions> out;
  for (base::NumericFormat c : compute) {
    for (base::NumericFormat s : states) out.push_back({c, s});
  }
  return out;
}

}  // namespace

Evaluation Evaluate(const JobSpec& spec, const cost::GpuSpec& gpu, const ParallelConfig& c,
                    const PlanSettings& settings) {
  return EvaluateWith(spec, gpu, ComputeModelFigures(spec.model), ResolveLinks(spec.hardware, gpu),
                      c, settings);
}

SearchResult Search(const JobSpec& spec, const cost::GpuSpec& gpu, const PlanSettings& settings) {
  SearchResult result;
  const int64_t gpus = spec.hardware.total_gpus();
  const ModelFigures figures = ComputeModelFigures(spec.model);
  const Links links = ResolveLinks(spec.hardware, gpu);
  const std::vector<Precisions> precisions = PrecisionChoices(spec.training);
  // Optimizer offload and gradient compression are weighed only where the spec describes the
  // host; CheckParallelism drops the pairs a layout cannot have.
  std::vector<std::pair<bool, GradCompression>> host_choices = {{false, GradCompression::kNone}};
  if (spec.hardware.host.given()) {
    host_choices.clear();
    for (bool off : {false, true}) {
      for (GradCompression g : {GradCompression::kNone, GradCompression::kInt8,
                                GradCompression::kInt4, GradCompression::kTopK}) {
        host_choices.emplace_back(off, g);
      }
    }
  }
  // A recommendation leaves the planning headroom free (planning.headroom, default 10%).
  const auto capacity =
      static_cast<int64_t>(static_cast<double>(gpu.MemoryBytes()) * (1 - spec.planning.headroom));
  // Context parallelism where the framework runs it, each GPU keeping at least
  // kMinContextChunk tokens of a sequence split into 2 x cp chunks.
  std::vector<int64_t> contexts = {1};
  const bool cp_runs = !spec.framework || *spec.framework == Framework::kMegatron ||
                       *spec.framework == Framework::kTorchtitan;
  for (int64_t cp = 2; cp_runs && spec.model.sequence_length / cp >= kMinContextChunk; cp *= 2) {
    if (spec.model.sequence_length % (2 * cp) == 0) contexts.push_back(cp);
  }
  for (int64_t t : Divisors(spec.hardware.gpus_per_node, spec.hardware.gpus_per_node)) {
    for (int64_t cp : contexts) {
      if (gpus % (t * cp) != 0) continue;
      for (int64_t p : Divisors(spec.model.layers, gpus / (t * cp))) {
        if (gpus % (t * cp * p) != 0) continue;
        const int64_t d = gpus / (t * cp * p);
        if (spec.training.global_batch % d != 0) continue;
        // Ascending micro-batches: memory never falls as the micro-batch grows (activations
        // grow, the in-flight count min(p, m) x b does not fall), so once none fits, none
        // larger will.
        for (int64_t b : Divisors(spec.training.global_batch / d, spec.training.global_batch / d)) {
          if (!settings.space.every_micro_batch && (b & (b - 1)) != 0) continue;
          bool any_fits = false;
          for (int64_t v = 1; v <= settings.space.max_virtual_stages; ++v) {
            for (bool sp : {false, true}) {
              for (int zero = 0; zero <= 3; ++zero) {
                for (const auto& [offload, compression] : host_choices) {
                  for (const Precisions& precision : precisions) {
                    for (Recompute r : {Recompute::kNone, Recompute::kSelective,
                                        Recompute::kOpSelective, Recompute::kFull}) {
                      const ParallelConfig c{.tensor = t,
                                             .pipeline = p,
                                             .virtual_stages = v,
                                             .sequence_parallel = sp,
                                             .context_parallel = cp,
                                             .zero_stage = zero,
                                             .recompute = r,
                                             .micro_batch = b,
                                             .offload_optimizer = offload,
                                             .gradient_compression = compression,
                                             .precision = precision.compute,
                                             .optimizer_states = precision.optimizer_states};
                      if (!CheckParallelism(c, spec).ok()) continue;
                      if (spec.framework ? !Inexpressible(*spec.framework, spec, c).empty()
                                         : !RunnableBySome(spec, c)) {
                        continue;
                      }
                      ++result.candidates;
                      // Memory first: most layouts fail it, and it is the cheaper model.
                      const MemoryEstimate mem =
                          EstimateMemory(spec, figures, c, capacity, settings.memory);
                      if (!mem.fits) continue;
                      any_fits = true;
                      result.fitting.push_back(
                          EvaluateWith(spec, gpu, figures, links, c, settings));
                    }
                  }
                }
              }
            }
          }
          if (!any_fits) break;
        }
      }
    }
  }
  const double threshold = settings.space.precision_change_threshold;
  auto ranked = [&](const Evaluation& e) {
    const TrainingSpec t = TrainingOf(spec.training, e.config);
    const int changes = (t.precision != spec.training.precision ? 1 : 0) +
                        (t.optimizer_states != spec.training.optimizer_states ? 1 : 0);
    return e.time.step_s * (1 + threshold * changes);
  };
  std::stable_sort(result.fitting.begin(), result.fitting.end(),
                   [&](const Evaluation& a, const Evaluation& b) {
                     const double ra = ranked(a), rb = ranked(b);
                     if (ra != rb) return ra < rb;
                     return a.memory.total_bytes < b.memory.total_bytes;
                   });
  return result;
}

base::Report EvaluationToReport(const Evaluation& e, const JobSpec& spec) {
  base::Report r = base::Report::object();
  r["parallelism"] =
      ParallelismToReport(e.config, spec.hardware.total_gpus(), spec.training.global_batch);
  const TrainingSpec training = TrainingOf(spec.training, e.config);
  r["precision"] = std::string(base::NumericFormatName(training.precision));
  r["optimizer_states"] = std::string(base::NumericFormatName(training.optimizer_states));
  r["fits"] = e.memory.fits;
  r["memory_bytes_per_gpu"] = e.memory.total_bytes;
  r["step_time_s"] = e.time.step_s;
  r["tokens_per_s_per_gpu"] = e.tokens_per_s_per_gpu;
  r["model_tflops_per_gpu"] = e.model_tflops_per_gpu;
  r["hardware_tflops_per_gpu"] = e.hardware_tflops_per_gpu;
  r["mfu"] = e.mfu;
  r["hfu"] = e.hfu;
  r["cost_per_step_usd"] = e.cost_per_step_usd;
  r["energy_per_step_j"] = e.energy_per_step_j;
  r["power_w"] = e.power_w;
  r["interval"] = IntervalsToReport(e.intervals);
  r["memory"] = MemoryEstimateToReport(e.memory);
  r["time"] = StepTimeToReport(e.time);
  return r;
}

std::vector<std::string> Reasons(const Evaluation& best, const JobSpec& spec,
                                 const cost::GpuSpec& gpu, const PlanSettings& settings) {
  struct Dimension {
    const char* name;
    std::vector<ParallelConfig> alternatives;
    std::function<std::string(const ParallelConfig&)> value;
  };
  const ParallelConfig& c = best.config;
  auto with = [&](auto set) {
    ParallelConfig x = c;
    set(x);
    return x;
  };
  std::vector<Dimension> dims;
  {
    Dimension dim{"tensor", {}, [](const ParallelConfig& x) { return std::to_string(x.tensor); }};
    for (int64_t t : Divisors(spec.hardware.gpus_per_node, spec.hardware.gpus_per_node)) {
      if (t != c.tensor) {
        dim.alternatives.push_back(with([&](ParallelConfig& x) {
          x.tensor = t;
          x.sequence_parallel =
              (x.sequence_parallel ||
               TraitsOf(RunningFramework(spec, c)).tensor_parallel_is_sequence_parallel) &&
              t > 1;
        }));
      }
    }
    dims.push_back(dim);
  }
  {
    Dimension dim{
        "pipeline", {}, [](const ParallelConfig& x) { return std::to_string(x.pipeline); }};
    for (int64_t p : {c.pipeline / 2, c.pipeline * 2}) {
      if (p >= 1 && p != c.pipeline) {
        dim.alternatives.push_back(with([&](ParallelConfig& x) {
          x.pipeline = p;
          if (p == 1) x.virtual_stages = 1;
        }));
      }
    }
    dims.push_back(dim);
  }
  {
    Dimension dim{
        "zero_stage", {}, [](const ParallelConfig& x) { return std::to_string(x.zero_stage); }};
    for (int z = 0; z <= 3; ++z) {
      if (z != c.zero_stage)
        dim.alternatives.push_back(with([&](ParallelConfig& x) { x.zero_stage = z; }));
    }
    dims.push_back(dim);
  }
  {
    Dimension dim{"recompute", {}, [](const ParallelConfig& x) {
                    return std::string(RecomputeName(x.recompute));
                  }};
    for (Recompute r :
         {Recompute::kNone, Recompute::kSelective, Recompute::kOpSelective, Recompute::kFull}) {
      if (r != c.recompute) {
        dim.alternatives.push_back(with([&](ParallelConfig& x) {
          x.recompute = r;
          x.recompute_layers = 0;
        }));
      }
    }
    dims.push_back(dim);
  }
  {
    Dimension dim{"context_parallel", {}, [](const ParallelConfig& x) {
                    return std::to_string(x.context_parallel);
                  }};
    for (int64_t cp : {c.context_parallel / 2, c.context_parallel * 2}) {
      if (cp >= 1 && cp != c.context_parallel)
        dim.alternatives.push_back(with([&](ParallelConfig& x) { x.context_parallel = cp; }));
    }
    dims.push_back(dim);
  }
  {
    Dimension dim{
        "micro_batch", {}, [](const ParallelConfig& x) { return std::to_string(x.micro_batch); }};
    for (int64_t b : {c.micro_batch / 2, c.micro_batch * 2}) {
      if (b >= 1 && b != c.micro_batch)
        dim.alternatives.push_back(with([&](ParallelConfig& x) { x.micro_batch = b; }));
    }
    dims.push_back(dim);
  }
  if (spec.hardware.host.given()) {
    Dimension dim{"offload_optimizer", {}, [](const ParallelConfig& x) {
                    return std::string(x.offload_optimizer ? "true" : "false");
                  }};
    dim.alternatives.push_back(
        with([&](ParallelConfig& x) { x.offload_optimizer = !x.offload_optimizer; }));
    dims.push_back(dim);
    Dimension comp{"gradient_compression", {}, [](const ParallelConfig& x) {
                     return std::string(GradCompressionName(x.gradient_compression));
                   }};
    for (GradCompression g : {GradCompression::kNone, GradCompression::kInt8,
                              GradCompression::kInt4, GradCompression::kTopK}) {
      if (g != c.gradient_compression) {
        comp.alternatives.push_back(with([&](ParallelConfig& x) { x.gradient_compression = g; }));
      }
    }
    dims.push_back(comp);
  }
  if (!spec.training.search_precisions.empty() || !spec.training.search_optimizer_states.empty()) {
    auto name_of = [&](const ParallelConfig& x) {
      return std::string(base::NumericFormatName(TrainingOf(spec.training, x).precision));
    };
    auto states_of = [&](const ParallelConfig& x) {
      return std::string(base::NumericFormatName(TrainingOf(spec.training, x).optimizer_states));
    };
    Dimension compute{"precision", {}, name_of};
    Dimension states{"optimizer_states", {}, states_of};
    for (const Precisions& p : PrecisionChoices(spec.training)) {
      const ParallelConfig alt = with([&](ParallelConfig& x) {
        x.precision = p.compute;
        x.optimizer_states = p.optimizer_states;
      });
      const TrainingSpec mine = TrainingOf(spec.training, c);
      if (p.optimizer_states == mine.optimizer_states && p.compute != mine.precision) {
        compute.alternatives.push_back(alt);
      }
      if (p.compute == mine.precision && p.optimizer_states != mine.optimizer_states) {
        states.alternatives.push_back(alt);
      }
    }
    dims.push_back(compute);
    dims.push_back(states);
  }
  if (c.tensor > 1) {
    Dimension dim{"sequence_parallel", {}, [](const ParallelConfig& x) {
                    return std::string(x.sequence_parallel ? "true" : "false");
                  }};
    dim.alternatives.push_back(
        with([&](ParallelConfig& x) { x.sequence_parallel = !x.sequence_parallel; }));
    dims.push_back(dim);
  }

  const auto capacity =
      static_cast<int64_t>(static_cast<double>(gpu.MemoryBytes()) * (1 - spec.planning.headroom));
  std::vector<std::string> out;
  for (const Dimension& dim : dims) {
    std::string line = std::string(dim.name) + " " + dim.value(c) + " (" +
                       Gb(best.memory.total_bytes) + " per GPU); instead";
    bool any = false;
    for (const ParallelConfig& alt : dim.alternatives) {
      if (!CheckParallelism(alt, spec).ok()) continue;
      if (spec.framework ? !Inexpressible(*spec.framework, spec, alt).empty()
                         : !RunnableBySome(spec, alt)) {
        continue;
      }
      any = true;
      const Evaluation e = Evaluate(spec, gpu, alt, settings);
      line += " " + dim.value(alt) + ": ";
      if (e.memory.total_bytes > capacity) {
        line += "does not fit with the headroom, " + Gb(e.memory.total_bytes) + ";";
      } else {
        line += "step time " + Percent(best.time.step_s, e.time.step_s) + ", " +
                Gb(e.memory.total_bytes) + ";";
      }
    }
    if (!any) line += " no other value makes a valid layout of this job;";
    line.pop_back();
    out.push_back(line);
  }
  return out;
}

}  // namespace seedance::plan
