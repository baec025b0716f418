// seedance._core's KV-cache functions (features KV-*): the tiny inference engine's
// logits, for tests against an independent NumPy forward pass.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/bindings/raise.h"
#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/kv/attend.h"
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

// One attention layer's cache of one sequence, for Transformers' cache class (seedance.hf):
// tensors cross as NumPy arrays in Transformers' layout, (heads, tokens, head size).
class LayerCache {
 public:
  using Array = py::array_t<float, py::array::c_style | py::array::forcecast>;

  LayerCache(int kv_heads, int head_size, const std::string& bits, int group, int window)
      : kv_heads_(kv_heads), head_size_(head_size) {
    if (kv_heads < 1 || head_size < 1 || head_size > 1024) {
      RaiseIfError(base::InvalidArgumentError("expected kv_heads >= 1 and head_size 1..1024",
                                              kv_heads < 1 ? "kv_heads" : "head_size"));
    }
    const kv::CacheShape shape{1, kv_heads * head_size, head_size, 0};
    const kv::KvWidth width = ValueOrRaise(kv::ParseKvWidth(bits, "bits"));
    cache_ =
        width == kv::KvWidth::kFp32
            ? kv::NewFullCache(shape)
            : ValueOrRaise(kv::NewQuantizedCache(shape, kv::QuantConfig::Of(width, group, window)));
  }

  // Appends (kv_heads, T, head_size) keys and values.
  void Append(const Array& k, const Array& v) {
    const int tokens = CheckHeads(k, kv_heads_, "k");
    if (CheckHeads(v, kv_heads_, "v") != tokens) {
      RaiseIfError(base::InvalidArgumentError("keys and values differ in tokens", "v"));
    }
    const int kv_dim = kv_heads_ * head_size_;
    std::vector<float> kt(kv_dim), vt(kv_dim);
    for (int t = 0; t < tokens; ++t) {
      for (int h = 0; h < kv_heads_; ++h) {
        const size_t from = (static_cast<size_t>(h) * tokens + t) * head_size_;
        std::copy_n(k.data() + from, head_size_,
                    kt.begin() + static_cast<ptrdiff_t>(h) * head_size_);
        std::copy_n(v.data() + from, head_size_,
                    vt.begin() + static_cast<ptrdiff_t>(h) * head_size_);
      }
      RaiseIfError(cache_->Append(0, len_, kt, vt));
      ++len_;
    }
  }

  // Attention of (n_heads, Tq, head_size) queries, the cache's last Tq tokens, through
  // kv::AttendQueries; `bias`: None (causal) or (Tq, length) additive terms. (Tq, n_heads,
  // head_size) out.
  py::array_t<float> Attend(const Array& q, float scale, const std::optional<Array>& bias) {
    if (q.ndim() != 3 || q.shape(2) != head_size_ || q.shape(0) % kv_heads_ != 0) {
      RaiseIfError(base::InvalidArgumentError(
          "expected (n_heads, tokens, head_size) with n_heads a multiple of kv_heads", "q"));
    }
    const int heads = static_cast<int>(q.shape(0)), n = static_cast<int>(q.shape(1));
    std::vector<float> rows(static_cast<size_t>(q.size()));
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < n; ++i) {
        std::copy_n(q.data() + (static_cast<size_t>(h) * n + i) * head_size_, head_size_,
                    rows.begin() + (static_cast<ptrdiff_t>(i) * heads + h) * head_size_);
      }
    }
    std::span<const float> terms;
    if (bias) terms = std::span<const float>(bias->data(), static_cast<size_t>(bias->size()));
    py::array_t<float> result({n, heads, head_size_});  // written in place, (Tq, heads, hs)
    const std::span<float> out(result.mutable_data(), rows.size());
    base::Status status;
    {
      py::gil_scoped_release release;
      status = kv::AttendQueries(*cache_, 0, {heads, kv_heads_, head_size_}, rows, n, len_, scale,
                                 terms, out);
    }
    RaiseIfError(status);
    return result;
  }

  // Every token's keys and values as attention reads them: (kv_heads, length, head_size) each.
  std::pair<py::array_t<float>, py::array_t<float>> ReadBack() const {
    py::array_t<float> k({kv_heads_, len_, head_size_}), v({kv_heads_, len_, head_size_});
    const int kv_dim = kv_heads_ * head_size_;
    std::vector<float> kt(kv_dim), vt(kv_dim);
    for (int t = 0; t < len_; ++t) {
      cache_->ReadBack(0, t, kt, vt);
      for (int h = 0; h < kv_heads_; ++h) {
        const size_t to = (static_cast<size_t>(h) * len_ + t) * head_size_;
        std::copy_n(kt.begin() + static_cast<ptrdiff_t>(h) * head_size_, head_size_,
                    k.mutable_data() + to);
        std::copy_n(vt.begin() + static_cast<ptrdiff_t>(h) * head_size_, head_size_,
                    v.mutable_data() + to);
      }
    }
    return {k, v};
  }

  int length() const { return len_; }
  int64_t bytes() const { return cache_->Bytes(); }

 private:
  int CheckHeads(const Array& a, int heads, const char* name) const {
    if (a.ndim() != 3 || a.shape(0) != heads || a.shape(2) != head_size_) {
      RaiseIfError(base::InvalidArgumentError(
          "expected (" + std::to_string(heads) + ", tokens, " + std::to_string(head_size_) + ")",
          name));
    }
    return static_cast<int>(a.shape(1));
  }

  int kv_heads_, head_size_;
  int len_ = 0;
  std::unique_ptr<kv::KvCache> cache_;
};

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
  py::class_<LayerCache>(m, "KvLayerCache",
                         "One attention layer's KV cache of one sequence (kv/cache.h, kv/attend.h)")
      .def(py::init<int, int, const std::string&, int, int>(), py::arg("kv_heads"),
           py::arg("head_size"), py::arg("bits") = "8", py::arg("group") = 32,
           py::arg("window") = 128)
      .def("append", &LayerCache::Append, py::arg("k"), py::arg("v"))
      .def("attend", &LayerCache::Attend, py::arg("q"), py::arg("scale"),
           py::arg("bias") = std::nullopt)
      .def("read_back", &LayerCache::ReadBack)
      .def_property_readonly("length", &LayerCache::length)
      .def_property_readonly("bytes", &LayerCache::bytes);
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
