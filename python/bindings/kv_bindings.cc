// seedance._core's KV-cache functions (features KV-*): the tiny inference engine's
// logits, for tests against an independent NumPy forward pass.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "python/bindings/raise.h"
#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/kv/bpe_tokenizer.h"
#include "seedance/kv/cache.h"
#include "seedance/kv/estimate.h"
#include "seedance/kv/eval.h"
#include "seedance/kv/greedy.h"
#include "seedance/kv/llama.h"

namespace py = pybind11;

namespace seedance::python {
namespace {

// The FP32 cache, or a quantized one of `bits` (a KvWidth name).
std::unique_ptr<kv::KvCache> CacheFor(const kv::LlamaModel& model, const std::string& bits,
                                      int group, int window) {
  const kv::KvWidth width = ValueOrRaise(kv::ParseKvWidth(bits, "bits"));
  if (width == kv::KvWidth::kFp32) return kv::NewFullCache(model.cache_shape());
  return ValueOrRaise(
      kv::NewQuantizedCache(model.cache_shape(), kv::QuantConfig::Of(width, group, window)));
}

// Logits after each token of `tokens` (positions 0, 1, ...), FP32 cache or a quantized one.
std::vector<std::vector<float>> Logits(const std::string& model_path,
                                       const std::vector<int>& tokens, const std::string& bits,
                                       int group, int window) {
  const kv::LlamaModel model =
      ValueOrRaise(kv::LlamaModel::Load(*base::Env::Default(), model_path));
  const std::unique_ptr<kv::KvCache> cache = CacheFor(model, bits, group, window);
  std::vector<std::vector<float>> out;
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    std::vector<float> logits(model.config().vocab_size);
    RaiseIfError(model.Forward(tokens[pos], static_cast<int>(pos), *cache, logits));
    out.push_back(std::move(logits));
  }
  return out;
}

std::string EvalJson(const std::string& model, const std::string& tokenizer,
                     const std::string& bits, int group, int window, int tokens,
                     const std::string& prompt, int64_t long_context, double entropy_threshold,
                     int long_bits, int default_bits) {
  kv::EvalRequest q;
  q.model_path = model;
  q.tokenizer_path = tokenizer;
  q.bits = bits;
  q.group = group;
  q.window = window;  // kv::kAutoWindow (-1): a quarter of the tokens
  q.tokens = tokens;
  q.prompt = prompt;
  q.rule = {long_context, entropy_threshold, long_bits, default_bits};
  base::StatusOr<kv::EvalRun> run = base::InternalError("not run");
  {
    py::gil_scoped_release release;  // a whole generation and two passes
    run = kv::RunKvEval(*base::Env::Default(), q);
  }
  return base::DumpJson(ValueOrRaise(std::move(run)).report);
}

std::string EstimateJson(int64_t tokens, int64_t layers, int64_t kv_dim, int bits, int group,
                         int pcie_gen, int pcie_lanes, double pcie_gbytes_per_s,
                         const std::string& hbm, int hbm_stacks, double hbm_ns, bool measure_cpu) {
  kv::EstimateRequest q;
  q.tokens = tokens;
  q.layers = layers;
  q.kv_dim = kv_dim;
  q.bits = bits;
  q.group = group;
  q.pcie_gen = pcie_gen;
  q.pcie_lanes = pcie_lanes;
  q.pcie_gbytes_per_s = pcie_gbytes_per_s;
  q.hbm = hbm;
  q.hbm_stacks = hbm_stacks;
  q.hbm_ns = hbm_ns;
  q.measure_cpu = measure_cpu;
  return base::DumpJson(ValueOrRaise(kv::EstimateReport(q)));
}

}  // namespace

// Greedy continuation of `prompt` through the C++ engine.
std::vector<int> Greedy(const std::string& model_path, const std::vector<int>& prompt,
                        int max_tokens, const std::string& bits, int group, int window, int stop) {
  const kv::LlamaModel model =
      ValueOrRaise(kv::LlamaModel::Load(*base::Env::Default(), model_path));
  const std::unique_ptr<kv::KvCache> cache = CacheFor(model, bits, group, window);
  py::gil_scoped_release release;
  return ValueOrRaise(kv::GreedyDecode(model, *cache, prompt, max_tokens, stop));
}

// A GGUF tensor dequantized to float32, in ggml order reversed to NumPy's (rows outermost).
py::array_t<float> GgufTensor(const std::string& path, const std::string& name) {
  const std::string bytes = ValueOrRaise(base::Env::Default()->ReadFile(path));
  const kv::GgufFile file = ValueOrRaise(kv::GgufFile::Parse(bytes, path));
  const kv::GgufTensor* t = ValueOrRaise(file.Tensor(name));
  const std::vector<float> values = ValueOrRaise(file.Dequantize(*t));
  std::vector<py::ssize_t> shape(t->shape.rbegin(), t->shape.rend());
  py::array_t<float> out(shape);
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

// A GGUF file's byte-level BPE tokenizer.
kv::BpeTokenizer LoadBpe(const std::string& path) {
  const std::string bytes = ValueOrRaise(base::Env::Default()->ReadFile(path));
  const kv::GgufFile file = ValueOrRaise(kv::GgufFile::Parse(bytes, path));
  return ValueOrRaise(kv::BpeTokenizer::FromGguf(file));
}

void BindKv(py::module_& m) {
  m.def("kv_greedy", &Greedy, py::arg("model"), py::arg("prompt"), py::arg("max_tokens"),
        py::arg("bits") = "32", py::arg("group") = 32, py::arg("window") = 128,
        py::arg("stop") = -1, "Greedy continuation through the C++ engine (kv/greedy.h)");
  m.def("ggml_bytes", &kv::GgmlBytes, py::arg("type"), py::arg("count"),
        "Bytes of `count` values of ggml type id `type` (0: unknown, or not whole blocks)");
  m.def("gguf_tensor", &GgufTensor, py::arg("path"), py::arg("name"),
        "A GGUF file's tensor dequantized to float32 (kv/gguf.h)");
  py::class_<kv::BpeTokenizer>(m, "BpeTokenizer",
                               "A GGUF file's byte-level BPE tokenizer (kv/bpe_tokenizer.h)")
      .def(py::init(&LoadBpe), py::arg("path"))
      .def("encode", &kv::BpeTokenizer::Encode, py::arg("text"))
      .def(
          "decode",
          [](const kv::BpeTokenizer& t, const std::vector<int>& ids) {
            return py::bytes(t.Decode(ids));
          },
          py::arg("ids"), "The bytes of the ids")
      .def_property_readonly("vocab_size", &kv::BpeTokenizer::vocab_size)
      .def_property_readonly("bos_id", &kv::BpeTokenizer::bos_id)
      .def_property_readonly("eos_id", &kv::BpeTokenizer::eos_id);
  m.def("kv_eval_json", &EvalJson, py::arg("model"), py::arg("tokenizer"), py::arg("bits"),
        py::arg("group"), py::arg("window"), py::arg("tokens"), py::arg("prompt"),
        py::arg("long_context"), py::arg("entropy_threshold"), py::arg("long_bits"),
        py::arg("default_bits"), "The report of `seedancectl kv eval -o json`");
  m.def("kv_estimate_json", &EstimateJson, py::arg("tokens"), py::arg("layers"), py::arg("kv_dim"),
        py::arg("bits"), py::arg("group"), py::arg("pcie_gen"), py::arg("pcie_lanes"),
        py::arg("pcie_gbytes_per_s"), py::arg("hbm"), py::arg("hbm_stacks"), py::arg("hbm_ns"),
        py::arg("measure_cpu"), "The report of `seedancectl kv estimate -o json`");
  m.def("kv_logits", &Logits, py::arg("model"), py::arg("tokens"), py::arg("bits") = "32",
        py::arg("group") = 32, py::arg("window") = 128,
        "Logits after each token, run through the C++ llama2.c engine");
  m.def(
      "kv_encode",
      [](const std::string& tokenizer, int vocab_size, const std::string& text) {
        const kv::Tokenizer t =
            ValueOrRaise(kv::Tokenizer::Load(*base::Env::Default(), tokenizer, vocab_size));
        return t.Encode(text);
      },
      py::arg("tokenizer"), py::arg("vocab_size"), py::arg("text"),
      "Token ids of text with a llama2.c tokenizer file (no BOS)");
}

}  // namespace seedance::python
