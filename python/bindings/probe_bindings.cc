// seedance._core's probe function (feature PROBE-1): one window of readings as JSON text, the
// document `seedancectl probe --once -o json` prints.
#include <pybind11/pybind11.h>

#include <chrono>
#include <string>

#include "python/bindings/raise.h"
#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/probe/gpu.h"
#include "seedance/probe/probe.h"
#include "seedance/probe/window.h"

namespace py = pybind11;

namespace seedance::python {
namespace {

std::string Sample(double interval_s, const std::string& metrics, const std::string& root,
                   const std::string& gpu_fixture, int task_id) {
  if (!(interval_s >= 0.01 && interval_s <= 86400)) {
    RaiseIfError(base::InvalidArgumentError("must be between 0.01 and 86400 seconds", "interval"));
  }
  const auto filter = ValueOrRaise(probe::ParseMetricFilter(metrics, "metrics"));
  auto env = base::NewPosixEnv({.root = root.empty() ? "/" : root});
  std::unique_ptr<probe::GpuSource> gpus =
      gpu_fixture.empty()
          ? probe::NewNvmlGpuSource()
          : ValueOrRaise(probe::NewFixtureGpuSource(*base::Env::Default(), gpu_fixture));
  probe::HostOptions host;
  host.task_pid = task_id;
  probe::Probe probe(*env, std::move(gpus), host);
  base::StatusOr<base::Report> report = base::InternalError("not sampled");
  {
    py::gil_scoped_release release;  // the window sleeps
    report = probe::SampleWindow(probe, *base::Env::Default(),
                                 std::chrono::nanoseconds(static_cast<int64_t>(interval_s * 1e9)),
                                 filter);
  }
  return base::DumpJson(ValueOrRaise(std::move(report)));
}

}  // namespace

void BindProbe(py::module_& m) {
  m.def("probe_sample_json", &Sample, py::arg("interval_s"), py::arg("metrics"), py::arg("root"),
        py::arg("gpu_fixture"), py::arg("task_id"),
        "One probe window as JSON text (seedancectl probe --once -o json)");
}

}  // namespace seedance::python
