// seedance._core's precision functions (feature PREC-1..7). Tensors cross as
// (data pointer, element count): the Python side checks dtype, device and
// contiguity, so this file needs no libtorch and no NumPy headers.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "python/bindings/raise.h"
#include "seedance/base/report.h"
#include "seedance/precision/collapse.h"
#include "seedance/precision/convert.h"
#include "seedance/precision/drift.h"
#include "seedance/precision/grad_pass.h"
#include "seedance/precision/inspect.h"
#include "seedance/precision/loss_scaler.h"
#include "seedance/precision/policy.h"

namespace py = pybind11;

namespace seedance::python {
namespace {

precision::Format FormatOrRaise(const std::string& name) {
  return ValueOrRaise(precision::ParseFormat(name));
}

port::SimdKernel KernelOrRaise(const std::string& name) {
  return ValueOrRaise(port::ParseSimdKernel(name, "kernel"));
}

void Encode(uintptr_t src, size_t n, uintptr_t dst, const std::string& format, bool saturate,
            const std::string& kernel) {
  const auto f = FormatOrRaise(format);
  const auto k = KernelOrRaise(kernel);
  base::Status s;
  {
    py::gil_scoped_release release;
    s = precision::ConvertFromFloat(f, {reinterpret_cast<const float*>(src), n},
                                    reinterpret_cast<void*>(dst), saturate, k);
  }
  RaiseIfError(s);
}

void Decode(uintptr_t src, size_t n, uintptr_t dst, const std::string& format,
            const std::string& kernel) {
  const auto f = FormatOrRaise(format);
  const auto k = KernelOrRaise(kernel);
  base::Status s;
  {
    py::gil_scoped_release release;
    s = precision::ConvertToFloat(f, reinterpret_cast<const void*>(src),
                                  {reinterpret_cast<float*>(dst), n}, k);
  }
  RaiseIfError(s);
}

std::vector<float> QuantizeInt8(uintptr_t src, size_t n, size_t channels, uintptr_t dst) {
  auto q =
      ValueOrRaise(precision::QuantizeInt8({reinterpret_cast<const float*>(src), n}, channels));
  std::copy(q.values.begin(), q.values.end(), reinterpret_cast<int8_t*>(dst));
  return q.scales;
}

py::tuple GradUnscale(const std::vector<uintptr_t>& ptrs, const std::vector<size_t>& sizes,
                      float inv_scale) {
  if (ptrs.size() != sizes.size()) {
    Raise(base::InvalidArgumentError("ptrs and sizes differ in length"));
  }
  std::vector<precision::GradView> views(ptrs.size());
  for (size_t i = 0; i < ptrs.size(); ++i) {
    views[i] = {reinterpret_cast<float*>(ptrs[i]), sizes[i]};
  }
  precision::GradPassResult r;
  {
    py::gil_scoped_release release;
    r = precision::UnscaleAndMeasure(views, inv_scale);
  }
  return py::make_tuple(r.found_non_finite, r.global_norm, r.norms, r.non_finite);
}

std::string Decide(const std::optional<std::string>& policy_yaml, const std::string& source,
                   const std::vector<std::pair<std::string, std::string>>& modules,
                   int64_t micro_batch) {
  precision::PrecisionPolicy policy;
  if (policy_yaml) policy = ValueOrRaise(precision::ParsePolicyYaml(*policy_yaml, source));
  std::vector<precision::ModuleRef> refs;
  refs.reserve(modules.size());
  for (const auto& [name, type] : modules) refs.push_back({name, type});
  return base::DumpJson(
      precision::DecisionsToReport(precision::DecidePrecisions(policy, refs, micro_batch)));
}

std::string Drift(const std::vector<double>& reference, const std::vector<double>& current,
                  const std::vector<double>& centers, double kl_weight, double kurtosis_weight,
                  double keep_below, double recalibrate_at) {
  precision::DriftConfig c;
  c.kl_weight = kl_weight;
  c.kurtosis_weight = kurtosis_weight;
  c.keep_below = keep_below;
  c.recalibrate_at = recalibrate_at;
  return base::DumpJson(precision::DriftToReport(
      ValueOrRaise(precision::MeasureDrift(reference, current, centers, c))));
}

base::Report ParseJsonOrRaise(const std::string& text) {
  base::Report j = base::Report::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) Raise(base::InvalidArgumentError("not valid JSON"));
  return j;
}

}  // namespace

void BindPrecision(py::module_& m) {
  m.def("precision_encode", &Encode, py::arg("src"), py::arg("n"), py::arg("dst"),
        py::arg("format"), py::arg("saturate"), py::arg("kernel"),
        "Encodes n float32 values at src into codes at dst");
  m.def("precision_decode", &Decode, py::arg("src"), py::arg("n"), py::arg("dst"),
        py::arg("format"), py::arg("kernel"), "Decodes n codes at src into float32 at dst");
  m.def("precision_kernel", [] { return std::string(port::ActiveSimdName()); });
  m.def("precision_describe", [](const std::string& text) {
    const float x = ValueOrRaise(precision::ParseValue(text));
    return base::DumpJson(precision::DescribeValue(text, x));
  });
  m.def("int8_quantize", &QuantizeInt8, py::arg("src"), py::arg("n"), py::arg("channels"),
        py::arg("dst"), "Symmetric INT8; writes n int8 at dst, returns the scales");
  m.def("grad_unscale", &GradUnscale, py::arg("ptrs"), py::arg("sizes"), py::arg("inv_scale"),
        "Fused unscale + non-finite check + L2 norms over float32 buffers");
  m.def("precision_decide", &Decide, py::arg("policy_yaml"), py::arg("source"), py::arg("modules"),
        py::arg("micro_batch"), "Precision decisions as JSON");
  m.def("precision_drift", &Drift, py::arg("reference"), py::arg("current"), py::arg("centers"),
        py::arg("kl_weight"), py::arg("kurtosis_weight"), py::arg("keep_below"),
        py::arg("recalibrate_at"), "QAT drift score as JSON");

  py::class_<precision::LossScaler>(m, "LossScaler")
      .def(py::init([](const std::string& config_json) {
             const base::Report j = ParseJsonOrRaise(config_json);
             return ValueOrRaise(precision::LossScaler::Create(
                 ValueOrRaise(precision::LossScalerConfigFromJson(j))));
           }),
           py::arg("config_json"))
      .def_static("from_json",
                  [](const std::string& text) {
                    return ValueOrRaise(precision::LossScaler::FromJson(ParseJsonOrRaise(text)));
                  })
      .def_property_readonly("scale", &precision::LossScaler::scale)
      .def("update", &precision::LossScaler::Update, py::arg("found_non_finite"),
           py::arg("grad_norm") = 0.0)
      .def("to_json", [](const precision::LossScaler& s) { return base::DumpJson(s.ToJson()); });

  py::class_<precision::CollapseDetector>(m, "CollapseDetector")
      .def(py::init([](int window, int consecutive, double ratio, double variance) {
             precision::CollapseConfig c;
             c.window = window;
             c.consecutive = consecutive;
             c.ratio_threshold = ratio;
             c.variance_threshold = variance;
             return ValueOrRaise(precision::CollapseDetector::Create(c));
           }),
           py::arg("window"), py::arg("consecutive"), py::arg("ratio_threshold"),
           py::arg("variance_threshold"))
      .def("observe", &precision::CollapseDetector::Observe, py::arg("layer"), py::arg("grad_norm"),
           py::arg("grad_variance"))
      .def("reset", &precision::CollapseDetector::Reset, py::arg("layer"))
      .def("reset_all", &precision::CollapseDetector::ResetAll);
}

}  // namespace seedance::python
