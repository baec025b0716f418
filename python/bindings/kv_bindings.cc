// seedance._core's KV-cache functions (features KV-*): the tiny inference engine's
// logits, for tests against an independent NumPy forward pass.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "python/bindings/raise.h"
#include "seedance/kv/cache.h"
#include "seedance/kv/llama.h"

namespace py = pybind11;

namespace seedance::python {
namespace {

// Logits after each token of `tokens` (positions 0, 1, ...), FP32 cache or a quantized one.
std::vector<std::vector<float>> Logits(const std::string& model_path,
                                       const std::vector<int>& tokens, const std::string& bits,
                                       int group, int window) {
  const kv::LlamaModel model =
      ValueOrRaise(kv::LlamaModel::Load(*base::Env::Default(), model_path));
  std::unique_ptr<kv::KvCache> cache;
  if (bits == "fp32") {
    cache = kv::NewFullCache(model.cache_shape());
  } else {
    cache = ValueOrRaise(
        kv::NewQuantizedCache(model.cache_shape(), kv::QuantConfig::Of(bits, group, window)));
  }
  std::vector<std::vector<float>> out;
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    std::vector<float> logits(model.config().vocab_size);
    RaiseIfError(model.Forward(tokens[pos], static_cast<int>(pos), *cache, logits));
    out.push_back(std::move(logits));
  }
  return out;
}

}  // namespace

void BindKv(py::module_& m) {
  m.def("kv_logits", &Logits, py::arg("model"), py::arg("tokens"), py::arg("bits") = "fp32",
        py::arg("group") = 32, py::arg("window") = 128,
        "Logits after each token, run through the C++ llama2.c engine");
}

}  // namespace seedance::python
