#include "seedance/cost/power.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "seedance/base/csv.h"
#include "seedance/base/parse.h"
#include "seedance/base/yaml_map.h"
#include "seedance/cost/gpu_catalog.h"
#include "src/cost/least_squares.h"

namespace seedance::cost {
namespace {

using base::Report;
using base::YamlMap;

constexpr double kMaxWatts = 1e7;  // a sanity bound far above any node

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

PowerBreakdown NodePower(const PowerCoefficients& c, const NodeLoad& load) {
  PowerBreakdown p;
  p.base_watts = c.base_watts;
  p.gpu_watts = load.gpus * load.gpu_tdp_watts *
                (c.gpu_idle_fraction + (1.0 - c.gpu_idle_fraction) * load.gpu_utilization);
  p.cpu_watts = c.cpu_watts_per_pct * load.cpu_utilization_pct;
  p.memory_watts = c.memory_watts_per_gbytes_per_s * load.memory_bandwidth_gbytes_per_s;
  p.nvme_watts = c.nvme_watts_per_kiops * load.nvme_kiops;
  p.cooling_watts = c.cooling_watts_per_kelvin * load.inlet_above_setpoint_k;
  p.it_watts =
      p.base_watts + p.gpu_watts + p.cpu_watts + p.memory_watts + p.nvme_watts + p.cooling_watts;
  p.facility_watts = p.it_watts * c.pue;
  return p;
}

base::StatusOr<PowerCoefficients> ReadPowerCoefficients(const YamlMap& m) {
  SEEDANCE_RETURN_IF_ERROR(m.CheckKeys({"base_watts", "gpu_idle_fraction", "cpu_watts_per_pct",
                                        "memory_watts_per_gbytes_per_s", "nvme_watts_per_kiops",
                                        "cooling_watts_per_kelvin", "pue"}));
  PowerCoefficients c;
  SEEDANCE_ASSIGN_OR_RETURN(c.base_watts, m.GetNumber("base_watts", c.base_watts, 0, kMaxWatts));
  SEEDANCE_ASSIGN_OR_RETURN(c.gpu_idle_fraction,
                            m.GetNumber("gpu_idle_fraction", c.gpu_idle_fraction, 0, 1));
  SEEDANCE_ASSIGN_OR_RETURN(c.cpu_watts_per_pct,
                            m.GetNumber("cpu_watts_per_pct", c.cpu_watts_per_pct, 0, kMaxWatts));
  SEEDANCE_ASSIGN_OR_RETURN(
      c.memory_watts_per_gbytes_per_s,
      m.GetNumber("memory_watts_per_gbytes_per_s", c.memory_watts_per_gbytes_per_s, 0, kMaxWatts));
  SEEDANCE_ASSIGN_OR_RETURN(
      c.nvme_watts_per_kiops,
      m.GetNumber("nvme_watts_per_kiops", c.nvme_watts_per_kiops, 0, kMaxWatts));
  SEEDANCE_ASSIGN_OR_RETURN(
      c.cooling_watts_per_kelvin,
      m.GetNumber("cooling_watts_per_kelvin", c.cooling_watts_per_kelvin, 0, kMaxWatts));
  SEEDANCE_ASSIGN_OR_RETURN(c.pue, m.GetNumber("pue", c.pue, 1.0, 10.0));
  return c;
}

base::StatusOr<PowerSpec> ParsePowerSpec(std::string_view yaml, const std::string& file,
                                         const GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(YAML::Node root, base::ParseYaml(yaml, file));
  SEEDANCE_ASSIGN_OR_RETURN(YamlMap doc, YamlMap::FromNode(root, file, ""));
  SEEDANCE_RETURN_IF_ERROR(
      doc.CheckKeys({"gpu", "gpu_tdp_watts", "gpus", "load", "coefficients", "step"}));
  PowerSpec spec;
  if (doc.Has("gpu") && doc.Has("gpu_tdp_watts")) {
    return base::InvalidArgumentError("give gpu (a catalog id) or gpu_tdp_watts, not both",
                                      doc.Where("gpu_tdp_watts"));
  }
  if (doc.Has("gpu_tdp_watts")) {
    SEEDANCE_ASSIGN_OR_RETURN(spec.load.gpu_tdp_watts,
                              doc.GetNumber("gpu_tdp_watts", std::nullopt, 0, 1e5));
  } else {
    SEEDANCE_ASSIGN_OR_RETURN(spec.gpu, doc.GetString("gpu", std::string("H100-SXM")));
    auto gpu = catalog.Get(spec.gpu);
    if (!gpu.ok()) return gpu.status().WithWhere(doc.Where("gpu"));
    spec.load.gpu_tdp_watts = (*gpu)->tdp_watts;
  }
  SEEDANCE_ASSIGN_OR_RETURN(const int64_t gpus, doc.GetInt("gpus", 8, 0, 1'000'000));
  spec.load.gpus = static_cast<int>(gpus);
  SEEDANCE_ASSIGN_OR_RETURN(auto load, doc.GetOptionalMap("load"));
  if (load) {
    SEEDANCE_RETURN_IF_ERROR(
        load->CheckKeys({"gpu_utilization", "cpu_utilization_pct", "memory_bandwidth_gbytes_per_s",
                         "nvme_kiops", "inlet_above_setpoint_k"}));
    NodeLoad& l = spec.load;
    SEEDANCE_ASSIGN_OR_RETURN(l.gpu_utilization,
                              load->GetNumber("gpu_utilization", l.gpu_utilization, 0, 1));
    SEEDANCE_ASSIGN_OR_RETURN(l.cpu_utilization_pct,
                              load->GetNumber("cpu_utilization_pct", 0.0, 0, 100));
    SEEDANCE_ASSIGN_OR_RETURN(l.memory_bandwidth_gbytes_per_s,
                              load->GetNumber("memory_bandwidth_gbytes_per_s", 0.0, 0, 1e6));
    SEEDANCE_ASSIGN_OR_RETURN(l.nvme_kiops, load->GetNumber("nvme_kiops", 0.0, 0, 1e6));
    SEEDANCE_ASSIGN_OR_RETURN(l.inlet_above_setpoint_k,
                              load->GetNumber("inlet_above_setpoint_k", 0.0, 0, 100));
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto coefficients, doc.GetOptionalMap("coefficients"));
  if (coefficients) {
    SEEDANCE_ASSIGN_OR_RETURN(spec.coefficients, ReadPowerCoefficients(*coefficients));
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto step, doc.GetOptionalMap("step"));
  if (step) {
    SEEDANCE_RETURN_IF_ERROR(step->CheckKeys({"step_time_s", "tokens_per_step"}));
    SEEDANCE_ASSIGN_OR_RETURN(spec.step_time_s,
                              step->GetNumber("step_time_s", std::nullopt, 1e-9, 1e9));
    SEEDANCE_ASSIGN_OR_RETURN(spec.tokens_per_step,
                              step->GetNumber("tokens_per_step", 0.0, 0, 1e15));
  }
  return spec;
}

base::Report PowerReport(const PowerSpec& spec) {
  const PowerBreakdown p = NodePower(spec.coefficients, spec.load);
  const PowerCoefficients& c = spec.coefficients;
  Report r = Report::object();
  Report node = Report::object();
  if (!spec.gpu.empty()) node["gpu"] = spec.gpu;
  node["gpus"] = spec.load.gpus;
  node["gpu_tdp_watts"] = spec.load.gpu_tdp_watts;
  node["gpu_utilization"] = spec.load.gpu_utilization;
  node["cpu_utilization_pct"] = spec.load.cpu_utilization_pct;
  node["memory_bandwidth_gbytes_per_s"] = spec.load.memory_bandwidth_gbytes_per_s;
  node["nvme_kiops"] = spec.load.nvme_kiops;
  node["inlet_above_setpoint_k"] = spec.load.inlet_above_setpoint_k;
  r["load"] = std::move(node);
  r["coefficients"] = {{"base_watts", c.base_watts},
                       {"gpu_idle_fraction", c.gpu_idle_fraction},
                       {"cpu_watts_per_pct", c.cpu_watts_per_pct},
                       {"memory_watts_per_gbytes_per_s", c.memory_watts_per_gbytes_per_s},
                       {"nvme_watts_per_kiops", c.nvme_watts_per_kiops},
                       {"cooling_watts_per_kelvin", c.cooling_watts_per_kelvin},
                       {"pue", c.pue}};
  r["power"] = {{"base_watts", p.base_watts}, {"gpu_watts", p.gpu_watts},
                {"cpu_watts", p.cpu_watts},   {"memory_watts", p.memory_watts},
                {"nvme_watts", p.nvme_watts}, {"cooling_watts", p.cooling_watts},
                {"it_watts", p.it_watts},     {"facility_watts", p.facility_watts}};
  if (spec.step_time_s > 0) {
    Report e = Report::object();
    e["step_time_s"] = spec.step_time_s;
    e["energy_per_step_j"] = p.facility_watts * spec.step_time_s;
    e["energy_per_step_kwh"] = p.facility_watts * spec.step_time_s / 3.6e6;
    if (spec.tokens_per_step > 0) {
      e["tokens_per_step"] = spec.tokens_per_step;
      e["energy_per_token_j"] = p.facility_watts * spec.step_time_s / spec.tokens_per_step;
      e["energy_per_million_tokens_kwh"] =
          p.facility_watts * spec.step_time_s / spec.tokens_per_step * 1e6 / 3.6e6;
    }
    r["energy"] = std::move(e);
  }
  return r;
}

base::StatusOr<PowerFit> FitPower(const std::vector<PowerSample>& samples) {
  if (samples.empty()) return base::InvalidArgumentError("no samples", "samples");
  const double tdp = samples[0].gpu_tdp_watts;
  for (size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].gpu_tdp_watts != tdp) {
      return base::InvalidArgumentError(
          "gpu_tdp_watts differs from the first sample's: fit one node at a time",
          "samples[" + std::to_string(i) + "]");
    }
  }
  // The candidate columns; those constant over the samples are dropped (indistinguishable from
  // the intercept).
  struct Column {
    const char* term;
    double PowerSample::*field;
  };
  const Column candidates[] = {
      {"cpu_watts_per_pct", &PowerSample::cpu_utilization_pct},
      {"memory_watts_per_gbytes_per_s", &PowerSample::memory_bandwidth_gbytes_per_s},
      {"nvme_watts_per_kiops", &PowerSample::nvme_kiops},
      {"cooling_watts_per_kelvin", &PowerSample::inlet_above_setpoint_k},
      {"gpu_busy_fraction_of_tdp", &PowerSample::gpu_busy_tdp_watts},
  };
  std::vector<Column> used;
  for (const Column& c : candidates) {
    for (const PowerSample& s : samples) {
      if (s.*c.field != samples[0].*c.field) {
        used.push_back(c);
        break;
      }
    }
  }
  const size_t p = used.size() + 1;
  if (samples.size() < p + 1) {
    return base::InvalidArgumentError("a fit of " + std::to_string(p) + " terms needs at least " +
                                          std::to_string(p + 1) + " samples, got " +
                                          std::to_string(samples.size()),
                                      "samples");
  }
  internal::Matrix x(samples.size(), p);
  std::vector<double> y(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    x(i, 0) = 1.0;
    for (size_t k = 0; k < used.size(); ++k) x(i, k + 1) = samples[i].*used[k].field;
    y[i] = samples[i].watts;
  }
  SEEDANCE_ASSIGN_OR_RETURN(const internal::LeastSquaresResult ls, internal::LeastSquares(x, y));
  PowerFit fit;
  fit.samples = static_cast<int>(samples.size());
  fit.r_squared = ls.r_squared;
  fit.residual_watts_rms = ls.residual_rms;
  // The intercept is base + idle * TDP_total, and the GPU slope is 1 - idle.
  double idle = 1.0;
  bool gpu_fitted = false;
  for (size_t k = 0; k < used.size(); ++k) {
    if (std::string_view(used[k].term) == "gpu_busy_fraction_of_tdp") {
      idle = 1.0 - ls.coefficients[k + 1];
      gpu_fitted = true;
      fit.terms.push_back("gpu_idle_fraction");
      fit.coefficients.push_back(idle);
      fit.standard_errors.push_back(ls.standard_errors[k + 1]);
    } else {
      fit.terms.push_back(used[k].term);
      fit.coefficients.push_back(ls.coefficients[k + 1]);
      fit.standard_errors.push_back(ls.standard_errors[k + 1]);
    }
  }
  fit.terms.insert(fit.terms.begin(), "base_watts");
  fit.coefficients.insert(fit.coefficients.begin(),
                          gpu_fitted ? ls.coefficients[0] - idle * tdp : ls.coefficients[0]);
  fit.standard_errors.insert(fit.standard_errors.begin(), ls.standard_errors[0]);
  return fit;
}

base::StatusOr<std::vector<PowerSample>> ReadPowerSamples(std::string_view csv,
                                                          const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(const base::CsvTable t, base::CsvTable::Parse(csv, file));
  SEEDANCE_RETURN_IF_ERROR(t.CheckColumns(
      {"watts"}, {"watts", "cpu_utilization_pct", "memory_bandwidth_gbytes_per_s", "nvme_kiops",
                  "inlet_above_setpoint_k", "gpu_utilization", "gpus", "gpu_tdp_watts"}));
  const bool has_gpu = t.Column("gpu_utilization").has_value();
  if (has_gpu != (t.Column("gpus").has_value() && t.Column("gpu_tdp_watts").has_value())) {
    return base::InvalidArgumentError(
        "gpu_utilization, gpus and gpu_tdp_watts come together (all three or none)", file + ":1");
  }
  std::vector<PowerSample> out;
  for (const base::CsvRecord& r : t.records()) {
    auto get = [&](const char* name, double lo, double hi) -> base::StatusOr<double> {
      const auto c = t.Column(name);
      if (!c) return 0.0;
      const auto v = base::ParseFiniteDouble(r.fields[*c]);
      if (!v || *v < lo || *v > hi) {
        return base::InvalidArgumentError(std::string(name) + " must be a number in [" + Num(lo) +
                                              ", " + Num(hi) + "], got '" + r.fields[*c] + "'",
                                          t.Where(r, *c));
      }
      return *v;
    };
    PowerSample s;
    SEEDANCE_ASSIGN_OR_RETURN(s.watts, get("watts", 0, kMaxWatts));
    SEEDANCE_ASSIGN_OR_RETURN(s.cpu_utilization_pct, get("cpu_utilization_pct", 0, 100));
    SEEDANCE_ASSIGN_OR_RETURN(s.memory_bandwidth_gbytes_per_s,
                              get("memory_bandwidth_gbytes_per_s", 0, 1e6));
    SEEDANCE_ASSIGN_OR_RETURN(s.nvme_kiops, get("nvme_kiops", 0, 1e6));
    SEEDANCE_ASSIGN_OR_RETURN(s.inlet_above_setpoint_k, get("inlet_above_setpoint_k", 0, 100));
    SEEDANCE_ASSIGN_OR_RETURN(const double u, get("gpu_utilization", 0, 1));
    SEEDANCE_ASSIGN_OR_RETURN(const double gpus, get("gpus", 0, 1e6));
    SEEDANCE_ASSIGN_OR_RETURN(const double tdp, get("gpu_tdp_watts", 0, 1e5));
    s.gpu_tdp_watts = gpus * tdp;
    s.gpu_busy_tdp_watts = gpus * tdp * u;
    out.push_back(s);
  }
  return out;
}

base::Report PowerFitReport(const PowerFit& fit, const std::string& file) {
  Report r = Report::object();
  r["input"] = file;
  r["samples"] = fit.samples;
  Report terms = Report::array();
  for (size_t k = 0; k < fit.terms.size(); ++k) {
    terms.push_back({{"term", fit.terms[k]},
                     {"value", fit.coefficients[k]},
                     {"standard_error", fit.standard_errors[k]}});
  }
  r["coefficients"] = std::move(terms);
  r["r_squared"] = fit.r_squared;
  r["residual_watts_rms"] = fit.residual_watts_rms;
  return r;
}

}  // namespace seedance::cost
