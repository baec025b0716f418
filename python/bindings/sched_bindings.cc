// seedance._core's scheduler functions: an experiment (sched/experiment.h) from a dict of
// settings, its report as JSON text — the report of `seedancectl simulate -o json`.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <string>
#include <thread>

#include "python/bindings/raise.h"
#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/sched/experiment.h"

namespace py = pybind11;

namespace seedance::python {
namespace {

using Setter = std::function<void(sched::ExperimentSpec&, const py::handle&)>;

template <typename T>
Setter Set(T sched::ExperimentSpec::*field) {
  return [field](sched::ExperimentSpec& s, const py::handle& v) { s.*field = v.cast<T>(); };
}
template <typename T>
Setter SetEvent(T sched::EventRunOptions::*field) {
  return [field](sched::ExperimentSpec& s, const py::handle& v) { s.events.*field = v.cast<T>(); };
}

// Each setting by its keyword (seedance.sched.simulate's), the flag of `simulate` in snake case.
const std::map<std::string, Setter>& Setters() {
  using S = sched::ExperimentSpec;
  using E = sched::EventRunOptions;
  static const auto* setters = new std::map<std::string, Setter>{
      {"nodes", Set(&S::nodes_file)},
      {"pods", Set(&S::pods_file)},
      {"protocol", Set(&S::protocol)},
      {"policies", Set(&S::policies)},
      {"baseline", Set(&S::baseline)},
      {"ties", Set(&S::ties)},
      {"seeds", Set(&S::seeds)},
      {"threads", Set(&S::threads)},
      {"gpus_per_node", Set(&S::gpus_per_node)},
      {"spot_fraction", Set(&S::spot_fraction)},
      {"job_util", Set(&S::job_util_file)},
      {"backfill_window", SetEvent(&E::backfill_window)},
      {"quotas", SetEvent(&E::quotas)},
      {"tiers", SetEvent(&E::tiers)},
      {"max_retries", SetEvent(&E::max_retries)},
      {"consolidate", SetEvent(&E::consolidate)},
      {"consolidate_below_pct", SetEvent(&E::consolidate_below_pct)},
      {"consolidate_after_s", SetEvent(&E::consolidate_after_s)},
      {"consolidate_share_milli", SetEvent(&E::consolidate_share_milli)},
      {"overcommit", SetEvent(&E::overcommit)},
      {"redistribute", SetEvent(&E::redistribute)},
      {"checkpoint_interval_s", SetEvent(&E::checkpoint_interval_s)},
      {"restore_cost_s", SetEvent(&E::restore_cost_s)},
      {"spot_interruptions_per_day", SetEvent(&E::spot_interruptions_per_day)},
      {"spot_recovery_s", SetEvent(&E::spot_recovery_s)},
      {"spot_price_ratio", SetEvent(&E::spot_price_ratio)},
      {"slo", SetEvent(&E::slo_queue_delay_s)},
      {"tier_of",
       [](S& s, const py::handle& v) {
         s.tier_of.clear();
         for (const auto& [group, tier] : v.cast<std::map<std::string, std::string>>()) {
           s.tier_of[group] = ValueOrRaise(sched::ParseTier(tier, "tier_of." + group));
         }
       }},
  };
  return *setters;
}

std::string SimulateJson(const py::dict& settings) {
  sched::ExperimentSpec spec;
  spec.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const auto& [key, value] : settings) {
    const std::string name = key.cast<std::string>();
    auto it = Setters().find(name);
    if (it == Setters().end()) Raise(base::InvalidArgumentError("unknown setting", name));
    it->second(spec, value);
  }
  base::StatusOr<sched::ExperimentResult> result = base::InternalError("not run");
  {
    py::gil_scoped_release release;  // a run takes seconds
    result = sched::RunExperiment(spec, *base::Env::Default());
  }
  return base::DumpJson(ValueOrRaise(std::move(result)).report);
}

}  // namespace

void BindSched(py::module_& m) {
  m.def("simulate_json", &SimulateJson, py::arg("settings"),
        "The report of `seedancectl simulate -o json` for the settings, as JSON text.");
}

}  // namespace seedance::python
