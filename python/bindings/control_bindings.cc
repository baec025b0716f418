// seedance._core's control functions (features CTRL-*): the checkpoint store for
// seedance.torch.Checkpointer (payloads cross as bytes; the GIL is released while files are
// written and read), and the controllers and the decision recorder that seedance.torch.enable
// and seedance.hf.SeedanceCallback drive. The recorder can start the probe's Prometheus exporter
// with the decisions' families (and a tiered cache's) appended.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "python/bindings/raise.h"
#include "seedance/base/env.h"
#include "seedance/control/autofreeze.h"
#include "seedance/control/batch_scaler.h"
#include "seedance/control/checkpoint_interval.h"
#include "seedance/control/checkpoint_store.h"
#include "seedance/control/cold_codec.h"
#include "seedance/control/cpu_memory.h"
#include "seedance/control/decision_record.h"
#include "seedance/control/freeze.h"
#include "seedance/control/io_pressure.h"
#include "seedance/control/tiered_cache.h"
#include "seedance/probe/exporter.h"
#include "seedance/probe/gpu.h"
#include "seedance/probe/probe.h"

namespace py = pybind11;

namespace seedance::python {
namespace {

using Choice = std::tuple<int64_t, std::string, std::string>;  // size, action, reason

Choice ToTuple(const control::BatchDecision& d) {
  return {d.size, control::BatchActionName(d.action), d.reason};
}

// The recorder and, when asked for, a probe exporter serving the host's (and NVML's GPUs')
// readings with the decisions appended. The probe outlives the exporter (members in order).
class Recorder {
 public:
  Recorder(const std::string& log_path, const std::string& listen) {
    recorder_ = ValueOrRaise(control::DecisionRecorder::Open(log_path));
    if (listen.empty()) return;
    probe_ = std::make_unique<probe::Probe>(*base::Env::Default(), probe::NewNvmlGpuSource(),
                                            probe::HostOptions{});
    probe::ExporterOptions o;
    o.listen = listen;
    o.version = "python";
    o.extra = [this] {
      std::string text = recorder_->RenderPrometheus();
      std::lock_guard<std::mutex> lock(mu_);
      if (cache_) text += cache_->RenderPrometheus();
      return text;
    };
    exporter_ = ValueOrRaise(probe::Exporter::Start(*probe_, o));
  }
  ~Recorder() { Close(); }
  void Close() {
    if (exporter_) {
      py::gil_scoped_release release;
      exporter_->Stop();
    }
    exporter_.reset();
  }
  control::DecisionRecorder& recorder() { return *recorder_; }
  int port() const { return exporter_ ? exporter_->port() : -1; }
  // The tiered cache whose seedance_cache_* families the exporter serves too (one at most).
  void SetCache(std::shared_ptr<control::TieredCache> cache) {
    std::lock_guard<std::mutex> lock(mu_);
    cache_ = std::move(cache);
  }

 private:
  std::mutex mu_;
  std::shared_ptr<control::TieredCache> cache_;
  std::unique_ptr<control::DecisionRecorder> recorder_;
  std::unique_ptr<probe::Probe> probe_;
  std::unique_ptr<probe::Exporter> exporter_;
};

void BindControllers(py::module_& m) {
  py::class_<control::BatchScaler>(m, "BatchScaler")
      .def(py::init([](int64_t initial_size, int64_t step, int64_t min_size, int64_t max_size,
                       double low, double high, int readings, double min_gain) {
             const control::BatchScalerSettings s{.initial_size = initial_size,
                                                  .step = step,
                                                  .min_size = min_size,
                                                  .max_size = max_size,
                                                  .low = low,
                                                  .high = high,
                                                  .readings = readings,
                                                  .min_gain = min_gain};
             RaiseIfError(control::ValidateBatchScalerSettings(s));
             return control::BatchScaler(s);
           }),
           py::arg("initial_size"), py::arg("step"), py::arg("min_size"), py::arg("max_size"),
           py::arg("low"), py::arg("high"), py::arg("readings"), py::arg("min_gain"))
      .def_property_readonly("size", &control::BatchScaler::size)
      .def_property_readonly("ceiling", &control::BatchScaler::ceiling)
      .def_property_readonly("growth_stopped", &control::BatchScaler::growth_stopped)
      .def(
          "observe",
          [](control::BatchScaler& b, double memory_share, double samples_per_s) {
            return ToTuple(b.Observe(memory_share, samples_per_s));
          },
          py::arg("memory_share"), py::arg("samples_per_s"))
      .def("out_of_memory", [](control::BatchScaler& b) { return ToTuple(b.OutOfMemory()); });

  py::class_<control::FreezeController>(m, "FreezeController")
      .def(py::init([](int layers, double threshold, int patience, bool prefix_only,
                       int keep_trainable, double drift_sigma, int drift_window) {
             if (layers < 1) RaiseIfError(base::InvalidArgumentError("must be >= 1", "layers"));
             if (patience < 1 || drift_window < 2 || keep_trainable < 0 || !(threshold > 0)) {
               RaiseIfError(base::InvalidArgumentError(
                   "need threshold > 0, patience >= 1, keep_trainable >= 0, drift_window >= 2",
                   "freeze settings"));
             }
             return control::FreezeController(layers, {.threshold = threshold,
                                                       .patience = patience,
                                                       .prefix_only = prefix_only,
                                                       .keep_trainable = keep_trainable,
                                                       .drift_sigma = drift_sigma,
                                                       .drift_window = drift_window});
           }),
           py::arg("layers"), py::arg("threshold"), py::arg("patience"), py::arg("prefix_only"),
           py::arg("keep_trainable"), py::arg("drift_sigma"), py::arg("drift_window"))
      .def_property_readonly("frozen", &control::FreezeController::frozen)
      .def(
          "step",
          [](control::FreezeController& f, const std::vector<double>& grad_norms,
             const std::vector<double>& weight_norms, double loss) {
            if (grad_norms.size() != weight_norms.size() ||
                grad_norms.size() != f.frozen().size()) {
              RaiseIfError(base::InvalidArgumentError(
                  "need one gradient norm and one weight norm per layer", "readings"));
            }
            std::vector<control::LayerReading> readings(grad_norms.size());
            for (size_t i = 0; i < readings.size(); ++i) {
              readings[i] = {.grad_norm = grad_norms[i], .weight_norm = weight_norms[i]};
            }
            control::FreezeDecision d = f.Step(readings, loss);
            return std::make_tuple(d.frozen_now, d.unfrozen_now, d.reason);
          },
          py::arg("grad_norms"), py::arg("weight_norms"), py::arg("loss"));

  py::class_<control::AutoFreeze>(m, "AutoFreeze")
      .def(py::init([](int layers, int interval, double percentile, int keep_trainable) {
             if (layers < 1 || interval < 1 || !(percentile >= 0 && percentile <= 1) ||
                 keep_trainable < 0) {
               RaiseIfError(base::InvalidArgumentError(
                   "need layers >= 1, interval >= 1, 0 <= percentile <= 1, keep_trainable >= 0",
                   "autofreeze settings"));
             }
             return control::AutoFreeze(layers, {.interval = interval,
                                                 .percentile = percentile,
                                                 .keep_trainable = keep_trainable});
           }),
           py::arg("layers"), py::arg("interval"), py::arg("percentile"), py::arg("keep_trainable"))
      .def_property_readonly("frozen", &control::AutoFreeze::frozen)
      .def(
          "step",
          [](control::AutoFreeze& a, const std::vector<double>& grad_norms) {
            if (grad_norms.size() != a.frozen().size()) {
              RaiseIfError(
                  base::InvalidArgumentError("need one gradient norm per layer", "grad_norms"));
            }
            return a.Step(grad_norms);
          },
          py::arg("grad_norms"));

  py::class_<control::CheckpointInterval>(m, "CheckpointInterval")
      .def(py::init([](int64_t floor_steps, int64_t initial_steps, double io_pressure_threshold,
                       double mtbf_s) {
             if (floor_steps < 1 || initial_steps < 1 || !(io_pressure_threshold > 0) ||
                 !(mtbf_s >= 0)) {
               RaiseIfError(base::InvalidArgumentError(
                   "need floor_steps, initial_steps >= 1, io_pressure_threshold > 0, mtbf_s >= 0",
                   "checkpoint settings"));
             }
             return control::CheckpointInterval({.floor_steps = floor_steps,
                                                 .initial_steps = initial_steps,
                                                 .io_pressure_threshold = io_pressure_threshold,
                                                 .mtbf_s = mtbf_s});
           }),
           py::arg("floor_steps"), py::arg("initial_steps"), py::arg("io_pressure_threshold"),
           py::arg("mtbf_s"))
      .def_property_readonly("steps", &control::CheckpointInterval::steps)
      .def(
          "after_save",
          [](control::CheckpointInterval& c, double io_stall_share, double save_s, double step_s) {
            control::IntervalDecision d = c.AfterSave(io_stall_share, save_s, step_s);
            return std::make_tuple(d.steps, d.young_steps, d.reason);
          },
          py::arg("io_stall_share"), py::arg("save_s"), py::arg("step_s"));

  py::class_<Recorder>(m, "DecisionRecorder")
      .def(py::init<const std::string&, const std::string&>(), py::arg("log_path"),
           py::arg("listen"))
      .def(
          "record",
          [](Recorder& r, int64_t step, const std::string& controller, const std::string& action,
             bool applied, const std::string& reason,
             const std::vector<std::pair<std::string, double>>& inputs) {
            control::Decision d;
            d.time_s = static_cast<double>(base::Env::Default()->NowUnixNanos()) * 1e-9;
            d.step = step;
            d.controller = controller;
            d.action = action;
            d.applied = applied;
            d.reason = reason;
            d.inputs = inputs;
            RaiseIfError(r.recorder().Record(d));
          },
          py::arg("step"), py::arg("controller"), py::arg("action"), py::arg("applied"),
          py::arg("reason"), py::arg("inputs"))
      .def(
          "set_setting",
          [](Recorder& r, const std::string& controller, const std::string& setting, double value) {
            RaiseIfError(r.recorder().SetSetting(controller, setting, value));
          },
          py::arg("controller"), py::arg("setting"), py::arg("value"))
      .def("render_prometheus", [](Recorder& r) { return r.recorder().RenderPrometheus(); })
      .def_property_readonly("recorded", [](Recorder& r) { return r.recorder().recorded(); })
      .def_property_readonly("port", &Recorder::port)
      .def("set_cache", &Recorder::SetCache, py::arg("cache"))
      .def("close", &Recorder::Close);
}

}  // namespace

void BindControl(py::module_& m) {
  BindControllers(m);
  m.def(
      "checkpoint_write",
      [](const std::string& dir, int64_t step, int64_t next_sample, const py::bytes& payload) {
        std::string data = payload;  // a copy: the GIL is released below
        const base::Status s = [&] {
          py::gil_scoped_release release;
          return control::WriteCheckpoint(*base::Env::Default(), dir, step, next_sample, data);
        }();
        RaiseIfError(s);
      },
      py::arg("dir"), py::arg("step"), py::arg("next_sample"), py::arg("payload"));
  m.def(
      "checkpoint_newest",
      [](const std::string& dir) -> py::object {
        base::StatusOr<control::NewestResult> r = [&] {
          py::gil_scoped_release release;
          return control::NewestCheckpoint(*base::Env::Default(), dir);
        }();
        control::NewestResult newest = ValueOrRaise(std::move(r));
        py::list skipped;
        for (const std::string& s : newest.skipped) skipped.append(s);
        if (!newest.checkpoint) return py::make_tuple(py::none(), skipped);
        const control::Checkpoint& c = *newest.checkpoint;
        return py::make_tuple(py::make_tuple(c.step, c.next_sample, py::bytes(c.payload), c.path),
                              skipped);
      },
      py::arg("dir"));
  m.def(
      "checkpoint_steps",
      [](const std::string& dir) {
        return ValueOrRaise(control::CheckpointSteps(*base::Env::Default(), dir));
      },
      py::arg("dir"));
  m.def(
      "cpu_memory",
      [](int64_t budget_bytes) {
        const control::CpuMemory c =
            ValueOrRaise(control::ReadCpuMemory(*base::Env::Default(), budget_bytes));
        return py::make_tuple(c.in_use, c.budget, c.source);
      },
      py::arg("budget_bytes") = 0);
  m.def("io_stall_total_us", []() -> py::object {
    // PSI's cumulative `some` I/O stall in microseconds; None where the kernel has no PSI.
    base::StatusOr<control::IoPressure> p = control::ReadIoPressure(*base::Env::Default());
    if (!p.ok()) return py::none();
    return py::int_(p->some.total_us);
  });
  m.def(
      "cold_encode",
      [](const py::bytes& payload, int element_bytes, int level) {
        std::string data = payload;
        base::StatusOr<std::string> frame = [&] {
          py::gil_scoped_release release;
          return control::EncodeCold(data, {.element_bytes = element_bytes, .level = level});
        }();
        return py::bytes(ValueOrRaise(std::move(frame)));
      },
      py::arg("payload"), py::arg("element_bytes"), py::arg("level"));
  m.def(
      "cold_decode",
      [](const py::bytes& frame) {
        std::string data = frame;
        base::StatusOr<std::string> original = [&] {
          py::gil_scoped_release release;
          return control::DecodeCold(data);
        }();
        return py::bytes(ValueOrRaise(std::move(original)));
      },
      py::arg("frame"));
  m.def(
      "crc32", [](const py::bytes& data) { return control::Crc32(std::string(data)); },
      py::arg("data"));
}

}  // namespace seedance::python
