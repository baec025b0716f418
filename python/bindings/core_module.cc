// seedance._core: the pybind11 glue between libseedance and Python. Kept
// thin and independent of libtorch: reports cross as JSON text that the
// `seedance` package decodes, and errors become seedance.errors.SeedanceError
// (a ValueError) carrying the Status's message, where and code.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/bindings/raise.h"
#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/yaml_override.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/mem/lifetime.h"
#include "seedance/mem/planner.h"
#include "seedance/mem/replay.h"
#include "seedance/mem/reports.h"
#include "seedance/plan/optimize.h"
#include "seedance/plan/recompute.h"
#include "seedance/plan/run_table.h"
#include "seedance/port/cuda_info.h"
#include "seedance/port/simd.h"
#include "seedance/version.h"

namespace py = pybind11;

namespace seedance::python {

void BindPrecision(py::module_& m);  // precision_bindings.cc
void BindComm(py::module_& m);       // comm_bindings.cc
void BindKv(py::module_& m);         // kv_bindings.cc
void BindTopo(py::module_& m);       // topo_bindings.cc
void BindProbe(py::module_& m);      // probe_bindings.cc
void BindSched(py::module_& m);      // sched_bindings.cc
void BindCost(py::module_& m);       // cost_bindings.cc
void BindControl(py::module_& m);    // control_bindings.cc
void BindCache(py::module_& m);      // cache_bindings.cc

namespace {

cost::GpuCatalog Catalog(const std::optional<std::string>& yaml, const std::string& source) {
  if (!yaml) return cost::GpuCatalog::BuiltIn();
  return ValueOrRaise(cost::GpuCatalog::WithOverrides(cost::GpuCatalog::BuiltIn(), *yaml, source));
}

std::string Optimize(const std::optional<std::string>& job_yaml, const std::string& source,
                     const std::string& profile, bool dry_run, bool evaluate_only,
                     const std::optional<std::string>& catalog_yaml,
                     const std::string& catalog_source, const std::optional<std::string>& emit,
                     const std::optional<std::string>& calibrate_csv,
                     const std::string& calibrate_source) {
  const cost::GpuCatalog catalog = Catalog(catalog_yaml, catalog_source);
  plan::OptimizeOptions options;
  options.profile = ValueOrRaise(plan::ParseProfile(profile));
  options.dry_run = dry_run;
  options.evaluate_only = evaluate_only;
  if (emit) options.emit = ValueOrRaise(plan::ParseFramework(*emit, "emit"));
  options.calibrate_csv = calibrate_csv;
  options.calibrate_file = calibrate_source;
  const std::string yaml = job_yaml ? *job_yaml : std::string(plan::DefaultJobYaml());
  const std::string name = job_yaml ? source : std::string(plan::kDefaultJobSource);
  base::Report report;
  {
    py::gil_scoped_release release;  // planners may search for a while
    auto result = plan::OptimizeYaml(yaml, name, catalog, options);
    py::gil_scoped_acquire acquire;
    report = ValueOrRaise(std::move(result));
  }
  return base::DumpJson(report);
}

// One row of a runs table (bench/plan/published_runs.csv's columns) for a measured run: the job
// (a job spec, validated as optimize validates it) and its measurements (0: not measured).
std::string FormatRunRow(const std::string& job_yaml, const std::string& source,
                         const std::string& id, double step_s, double tokens_per_s_per_gpu,
                         double gb_per_gpu, const std::optional<std::string>& catalog_yaml,
                         const std::string& catalog_source) {
  const cost::GpuCatalog catalog = Catalog(catalog_yaml, catalog_source);
  plan::RunRecord r;
  r.id = id;
  r.group = "own";
  r.source = source;
  r.spec = ValueOrRaise(plan::ParseJobSpec(job_yaml, source, catalog));
  if (step_s > 0) r.step_s = step_s;
  if (tokens_per_s_per_gpu > 0) r.tokens_per_s_per_gpu = tokens_per_s_per_gpu;
  if (gb_per_gpu > 0) r.gb_per_gpu = gb_per_gpu;
  return plan::FormatRunRow(r);
}

// layers_json: [{"kept_bytes": n, "parts": [{"name": s, "bytes": n, "recompute_s": x}, ...]}, ...]
std::string PlanRecomputeJson(const std::string& layers_json, int64_t budget_bytes) {
  std::vector<plan::LayerActivations> layers;
  const base::Report doc = base::Report::parse(layers_json, nullptr, false);
  if (!doc.is_array()) RaiseIfError(base::InvalidArgumentError("must be a list", "layers"));
  for (size_t i = 0; i < doc.size(); ++i) {
    const base::Report& l = doc[i];
    const std::string where = "layers[" + std::to_string(i) + "]";
    if (!l.is_object() || !l.contains("kept_bytes") || !l["kept_bytes"].is_number_integer()) {
      RaiseIfError(base::InvalidArgumentError("needs an integer kept_bytes", where));
    }
    plan::LayerActivations layer{.kept_bytes = l["kept_bytes"].get<int64_t>(), .parts = {}};
    for (const base::Report& p : l.value("parts", base::Report::array())) {
      if (!p.is_object() || !p.contains("name") || !p["name"].is_string() || !p.contains("bytes") ||
          !p["bytes"].is_number_integer() || !p.contains("recompute_s") ||
          !p["recompute_s"].is_number()) {
        RaiseIfError(base::InvalidArgumentError(
            "each part needs name (text), bytes (integer) and recompute_s (number)",
            where + ".parts"));
      }
      layer.parts.push_back({p["name"].get<std::string>(), p["bytes"].get<int64_t>(),
                             p["recompute_s"].get<double>()});
    }
    layers.push_back(std::move(layer));
  }
  return base::DumpJson(
      plan::RecomputePlanToReport(ValueOrRaise(plan::PlanRecompute(layers, budget_bytes))));
}

std::string GpuCatalogJson(const std::optional<std::string>& catalog_yaml,
                           const std::string& catalog_source) {
  const cost::GpuCatalog catalog = Catalog(catalog_yaml, catalog_source);
  return base::DumpJson(cost::CatalogReport(catalog)["gpus"]);
}

std::string MemPlan(const std::string& csv, const std::string& source, const std::string& algo,
                    double time_limit_s, int64_t alignment, int64_t capacity_bytes, int threads) {
  mem::LifetimeFile file = ValueOrRaise(mem::ParseLifetimeCsv(csv, source));
  mem::PlanOptions options;
  options.algo = ValueOrRaise(mem::ParsePlanAlgo(algo));
  options.time_limit_s = time_limit_s;
  options.alignment = alignment;
  options.capacity_bytes = capacity_bytes;
  options.threads = threads;
  base::StatusOr<mem::Plan> result = base::InternalError("not run");
  {
    py::gil_scoped_release release;
    result = mem::PlanOffsets(file.buffers, options);
  }
  const mem::Plan plan = ValueOrRaise(std::move(result));
  RaiseIfError(mem::PlanFitStatus(plan, source));
  base::Report r = mem::PlanReport(plan, file.buffers.size(), alignment);
  base::Report offsets = base::Report::object();
  for (size_t i = 0; i < file.buffers.size(); ++i) offsets[file.buffers[i].id] = plan.offsets[i];
  r["offsets"] = offsets;
  return base::DumpJson(r);
}

std::string MemReplay(const std::string& csv, const std::string& source,
                      const std::string& policy) {
  mem::LifetimeFile file = ValueOrRaise(mem::ParseLifetimeCsv(csv, source));
  const mem::AllocatorPolicy p = ValueOrRaise(mem::ParseAllocatorPolicy(policy));
  const mem::ReplayResult x = ValueOrRaise(mem::Replay(file.buffers, p));
  const base::Report r = mem::ReplayReport(x, policy);
  return base::DumpJson(r);
}

std::string SimdJson() { return base::DumpJson(port::SimdToReport()); }

void SetSimd(const std::string& name) {
  RaiseIfError(port::SetSimdKernel(ValueOrRaise(port::ParseSimdKernel(name, "simd"))));
}

std::string CudaInfoJson() { return base::DumpJson(port::CudaInfoToReport(port::QueryCuda())); }

}  // namespace
}  // namespace seedance::python

PYBIND11_MODULE(_core, m) {
  using namespace seedance::python;  // NOLINT(google-build-using-namespace): the module's own
  m.doc() = "libseedance bindings (private: use the seedance package)";
  // The process's SIMD choice from SEEDANCE_SIMD, as the CLI reads it; a bad value fails the
  // import with the variable named.
  RaiseIfError(seedance::port::SetSimdKernel(
      ValueOrRaise(seedance::port::SimdKernelFromEnv(*seedance::base::Env::Default()))));
  m.attr("__version__") = std::string(seedance::kVersion);
  m.def("optimize", &Optimize, py::arg("job_yaml"), py::arg("source"), py::arg("profile"),
        py::arg("dry_run"), py::arg("evaluate_only"), py::arg("catalog_yaml"),
        py::arg("catalog_source"), py::arg("emit"), py::arg("calibrate_csv"),
        py::arg("calibrate_source"),
        "The optimize report of a job spec (None: the built-in default) as JSON text");
  m.def("format_run_row", &FormatRunRow, py::arg("job_yaml"), py::arg("source"), py::arg("id"),
        py::arg("step_s"), py::arg("tokens_per_s_per_gpu"), py::arg("gb_per_gpu"),
        py::arg("catalog_yaml"), py::arg("catalog_source"),
        "One runs-table row (optimize --calibrate's input) for a measured run of a job spec");
  m.def(
      "run_table_header", [] { return seedance::plan::RunTableHeader(); },
      "The header line of a runs table");
  m.def("plan_recompute_json", &PlanRecomputeJson, py::arg("layers_json"), py::arg("budget_bytes"),
        "The least-time recomputation plan within a memory budget");
  m.def(
      "apply_yaml_overrides",
      [](const std::string& text, const std::string& source,
         const std::vector<std::pair<std::string, std::string>>& overrides) {
        std::vector<seedance::base::YamlOverride> list;
        list.reserve(overrides.size());
        for (const auto& [key, value] : overrides) list.push_back({key, value});
        return ValueOrRaise(seedance::base::ApplyYamlOverrides(text, source, list, "overrides"));
      },
      py::arg("text"), py::arg("source"), py::arg("overrides"),
      "The YAML document with each (dotted key, YAML value) set (optimize's overrides=)");
  m.def("default_job_yaml", [] { return std::string(seedance::plan::DefaultJobYaml()); });
  m.def(
      "read_file",
      [](const std::string& path) {
        seedance::base::StatusOr<std::string> text = seedance::base::InternalError("not read");
        {
          py::gil_scoped_release release;
          text = seedance::base::Env::Default()->ReadFile(path);
        }
        return py::bytes(ValueOrRaise(std::move(text)));
      },
      py::arg("path"),
      "A file's bytes read as the CLI reads its inputs (base::Env): a regular file only (a FIFO, "
      "a device or a directory is an error, never a hang or an endless read), at most 4 GiB");
  m.def("gpu_catalog", &GpuCatalogJson, py::arg("catalog_yaml"), py::arg("catalog_source"),
        "Every GPU of the catalog as JSON text");
  m.def("cuda_info_json", &CudaInfoJson,
        "What CUDA this build and machine offer: the \"cuda\" object of `seedancectl version`");
  m.def("mem_plan", &MemPlan, py::arg("csv"), py::arg("source"), py::arg("algo"),
        py::arg("time_limit_s"), py::arg("alignment"), py::arg("capacity_bytes"),
        py::arg("threads"), "Offline plan of a lifetime CSV, as JSON");
  m.def("mem_replay", &MemReplay, py::arg("csv"), py::arg("source"), py::arg("policy"),
        "Replay of a lifetime CSV through an allocator policy, as JSON");
  m.def("simd_json", &SimdJson, "The SIMD kernel choice: the \"simd\" object of `version`");
  m.def("set_simd", &SetSimd, py::arg("kernel"), "Set the process's SIMD kernel choice");
  BindPrecision(m);
  BindComm(m);
  BindKv(m);
  BindTopo(m);
  BindProbe(m);
  BindSched(m);
  BindCost(m);
  BindControl(m);
  BindCache(m);
}
