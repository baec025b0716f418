// seedance._core's cost functions: the statistics and Pareto fronts as plain functions (samples
// in as lists of floats), and the reports of `seedancectl cost compare|pareto` as JSON text.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/bindings/raise.h"
#include "seedance/base/report.h"
#include "seedance/cost/bench_compare.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/cost/model_reports.h"
#include "seedance/cost/pareto.h"
#include "seedance/cost/reports.h"
#include "seedance/cost/stats.h"

namespace py = pybind11;

namespace seedance::python {
namespace {

std::pair<double, double> MannWhitney(const std::vector<double>& x, const std::vector<double>& y,
                                      const std::string& alternative, const std::string& method,
                                      bool continuity) {
  cost::MannWhitneyOptions o;
  o.alternative = ValueOrRaise(cost::ParseAlternative(alternative, "alternative"));
  if (method == "auto") {
    o.method = cost::MannWhitneyMethod::kAuto;
  } else if (method == "exact") {
    o.method = cost::MannWhitneyMethod::kExact;
  } else if (method == "asymptotic") {
    o.method = cost::MannWhitneyMethod::kAsymptotic;
  } else {
    Raise(base::InvalidArgumentError("expected auto, exact or asymptotic, got '" + method + "'",
                                     "method"));
  }
  o.continuity = continuity;
  const cost::MannWhitneyResult r = ValueOrRaise(cost::MannWhitneyU(x, y, o));
  return {r.u, r.p};
}

std::pair<double, double> FOneway(const std::vector<std::vector<double>>& groups, bool equal_var) {
  const cost::AnovaResult r = ValueOrRaise(cost::OneWayAnova(groups, equal_var));
  return {r.f, r.p};
}

cost::BootstrapOptions Bootstrap(const std::string& statistic, const std::string& method,
                                 double confidence, int64_t resamples, uint64_t seed) {
  cost::BootstrapOptions o;
  o.statistic = ValueOrRaise(cost::ParseBootstrapStatistic(statistic, "statistic"));
  o.method = ValueOrRaise(cost::ParseBootstrapMethod(method, "method"));
  o.confidence = confidence;
  o.resamples = resamples;
  o.seed = seed;
  return o;
}

std::pair<double, double> BootstrapCi(const std::vector<double>& sample,
                                      const std::string& statistic, const std::string& method,
                                      double confidence, int64_t resamples, uint64_t seed) {
  const auto o = Bootstrap(statistic, method, confidence, resamples, seed);
  base::StatusOr<cost::ConfidenceInterval> r = base::InternalError("not run");
  {
    py::gil_scoped_release release;  // 10^4 resamples of a large sample take a while
    r = cost::BootstrapCi(sample, o);
  }
  const cost::ConfidenceInterval ci = ValueOrRaise(std::move(r));
  return {ci.low, ci.high};
}

std::pair<double, double> BootstrapRatioCi(const std::vector<double>& x,
                                           const std::vector<double>& y,
                                           const std::string& statistic, const std::string& method,
                                           double confidence, int64_t resamples, uint64_t seed) {
  const auto o = Bootstrap(statistic, method, confidence, resamples, seed);
  base::StatusOr<cost::ConfidenceInterval> r = base::InternalError("not run");
  {
    py::gil_scoped_release release;  // 10^4 resamples of a large sample take a while
    r = cost::BootstrapRatioCi(x, y, o);
  }
  const cost::ConfidenceInterval ci = ValueOrRaise(std::move(r));
  return {ci.low, ci.high};
}

std::vector<size_t> ParetoFront(const std::vector<double>& flat,
                                const std::vector<std::string>& directions,
                                const std::string& dominance, bool unique) {
  std::vector<cost::Direction> dirs;
  for (size_t k = 0; k < directions.size(); ++k) {
    dirs.push_back(
        ValueOrRaise(cost::ParseDirection(directions[k], "directions[" + std::to_string(k) + "]")));
  }
  const cost::Dominance d = ValueOrRaise(cost::ParseDominance(dominance, "dominance"));
  return ValueOrRaise(unique ? cost::UniqueFront(flat, dirs, d) : cost::ParetoFront(flat, dirs, d));
}

std::string CompareJson(const std::string& a_text, const std::string& a_source,
                        const std::string& b_text, const std::string& b_source,
                        const std::string& metric, double alpha, double noise, double confidence,
                        int64_t resamples, uint64_t seed, bool higher_is_better) {
  const cost::SampleSet a = ValueOrRaise(cost::ReadSamples(a_text, a_source));
  const cost::SampleSet b = ValueOrRaise(cost::ReadSamples(b_text, b_source));
  cost::CompareOptions o;
  o.metric = ValueOrRaise(cost::ParseCompareMetric(metric, "metric"));
  o.alpha = alpha;
  o.noise_threshold = noise;
  o.confidence = confidence;
  o.resamples = resamples;
  o.seed = seed;
  o.higher_is_better = higher_is_better;
  return base::DumpJson(ValueOrRaise(cost::CompareSamples(a, b, o)));
}

std::string ParetoCsvJson(const std::string& csv, const std::string& source,
                          const std::string& objectives, const std::string& dominance,
                          bool unique) {
  const auto objs = ValueOrRaise(cost::ParseObjectives(objectives, "objectives"));
  const cost::Dominance d = ValueOrRaise(cost::ParseDominance(dominance, "dominance"));
  return base::DumpJson(ValueOrRaise(cost::ParetoCsvReport(csv, source, objs, d, unique)));
}

using ModelReport = base::StatusOr<base::Report> (*)(std::string_view, const std::string&,
                                                     const cost::GpuCatalog&);

// One of the cost model's reports from its YAML, with the catalog overridden by `catalog_yaml`
// when given (as `--catalog` does for the CLI).
std::string ModelJson(ModelReport build, const std::string& yaml, const std::string& source,
                      const std::optional<std::string>& catalog_yaml,
                      const std::string& catalog_source) {
  cost::GpuCatalog catalog = cost::GpuCatalog::BuiltIn();
  if (catalog_yaml) {
    catalog = ValueOrRaise(cost::GpuCatalog::WithOverrides(cost::GpuCatalog::BuiltIn(),
                                                           *catalog_yaml, catalog_source));
  }
  return base::DumpJson(ValueOrRaise(build(yaml, source, catalog)));
}

}  // namespace

void BindCost(py::module_& m) {
  const char* names[] = {"tco", "roi", "power", "breakdown"};
  const ModelReport builds[] = {&cost::TcoYamlReport, &cost::RoiYamlReport, &cost::PowerYamlReport,
                                &cost::BreakdownYamlReport};
  for (size_t i = 0; i < std::size(names); ++i) {
    const ModelReport build = builds[i];
    m.def(
        (std::string("cost_") + names[i] + "_json").c_str(),
        [build](const std::string& yaml, const std::string& source,
                const std::optional<std::string>& catalog_yaml, const std::string& catalog_source) {
          return ModelJson(build, yaml, source, catalog_yaml, catalog_source);
        },
        py::arg("yaml"), py::arg("source"), py::arg("catalog_yaml"), py::arg("catalog_source"),
        "The report of `seedancectl cost <verb> -o json` for a YAML input");
  }
  m.def(
      "cost_power_fit_json",
      [](const std::string& csv, const std::string& source) {
        return base::DumpJson(ValueOrRaise(cost::PowerFitCsvReport(csv, source)));
      },
      py::arg("csv"), py::arg("source"), "The report of `seedancectl cost power-fit -o json`");
  m.def("mann_whitney_u", &MannWhitney, py::arg("x"), py::arg("y"), py::arg("alternative"),
        py::arg("method"), py::arg("continuity"), "(U1, p) of the Mann-Whitney U test");
  m.def("f_oneway", &FOneway, py::arg("groups"), py::arg("equal_var"), "(F, p) of one-way ANOVA");
  m.def("bootstrap_ci", &BootstrapCi, py::arg("sample"), py::arg("statistic"), py::arg("method"),
        py::arg("confidence"), py::arg("resamples"), py::arg("seed"),
        "(low, high): the bootstrap interval of the sample's mean or median");
  m.def("bootstrap_ratio_ci", &BootstrapRatioCi, py::arg("x"), py::arg("y"), py::arg("statistic"),
        py::arg("method"), py::arg("confidence"), py::arg("resamples"), py::arg("seed"),
        "(low, high): the bootstrap interval of statistic(x) / statistic(y)");
  m.def("pareto_front", &ParetoFront, py::arg("flat_points"), py::arg("directions"),
        py::arg("dominance"), py::arg("unique"), "Indices of the non-dominated points");
  m.def("cost_compare_json", &CompareJson, py::arg("a_text"), py::arg("a_source"),
        py::arg("b_text"), py::arg("b_source"), py::arg("metric"), py::arg("alpha"),
        py::arg("noise"), py::arg("confidence"), py::arg("resamples"), py::arg("seed"),
        py::arg("higher_is_better"), "The report of `seedancectl cost compare -o json`");
  m.def("cost_pareto_json", &ParetoCsvJson, py::arg("csv"), py::arg("source"),
        py::arg("objectives"), py::arg("dominance"), py::arg("unique"),
        "The report of `seedancectl cost pareto -o json`");
}

}  // namespace seedance::python
