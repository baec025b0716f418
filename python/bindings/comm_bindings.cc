// seedance._core's gradient-compression functions (feature COMM-1..3). Buffers
// cross as (address, element count); the Python side owns them and checks
// dtype and contiguity.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "python/bindings/raise.h"
#include "seedance/base/report.h"
#include "seedance/comm/compressor.h"
#include "seedance/comm/nccl_advisor.h"
#include "seedance/comm/wire_format.h"

namespace py = pybind11;

namespace seedance::python {
namespace {

std::span<float> Floats(uintptr_t ptr, size_t n) { return {reinterpret_cast<float*>(ptr), n}; }

class PyCompressor {
 public:
  PyCompressor(const std::string& kind, double ratio, double sample_ratio, uint32_t chunk,
               bool stochastic, bool fp16_values) {
    comm::CompressorConfig c;
    c.kind = ValueOrRaise(comm::ParseCompressor(kind));
    c.ratio = ratio;
    c.sample_ratio = sample_ratio;
    c.chunk = chunk;
    c.stochastic = stochastic;
    c.fp16_values = fp16_values;
    compressor_ = ValueOrRaise(comm::Compressor::Create(c));
  }

  py::bytes Compress(uintptr_t x, size_t n, uint64_t seed) {
    std::vector<uint8_t> payload;
    {
      py::gil_scoped_release release;
      compressor_->Compress(std::span<const float>(Floats(x, n)), payload, seed);
    }
    return py::bytes(reinterpret_cast<const char*>(payload.data()), payload.size());
  }

  // Compresses into a caller-owned buffer of `capacity` bytes; returns the
  // payload size. The scratch vector keeps its capacity between calls, so a
  // steady stream of shards allocates nothing.
  size_t CompressInto(uintptr_t x, size_t n, uint64_t seed, uintptr_t out, size_t capacity) {
    {
      py::gil_scoped_release release;
      compressor_->Compress(std::span<const float>(Floats(x, n)), scratch_, seed);
    }
    if (scratch_.size() > capacity) {
      Raise(base::OutOfRangeError("payload of " + std::to_string(scratch_.size()) +
                                  " bytes does not fit the " + std::to_string(capacity) +
                                  "-byte buffer"));
    }
    std::memcpy(reinterpret_cast<void*>(out), scratch_.data(), scratch_.size());
    return scratch_.size();
  }

  py::bytes CompressWithFeedback(uintptr_t grad, uintptr_t residual, size_t n, uint64_t seed) {
    std::vector<uint8_t> payload;
    base::Status s;
    {
      py::gil_scoped_release release;
      s = comm::CompressWithFeedback(*compressor_, std::span<const float>(Floats(grad, n)),
                                     Floats(residual, n), payload, seed);
    }
    RaiseIfError(s);
    return py::bytes(reinterpret_cast<const char*>(payload.data()), payload.size());
  }

 private:
  std::unique_ptr<comm::Compressor> compressor_;
  std::vector<uint8_t> scratch_;
};

void DecodeAdd(uintptr_t payload, size_t bytes, uintptr_t out, size_t n, float weight) {
  base::Status s;
  {
    py::gil_scoped_release release;
    s = comm::DecodeAdd({reinterpret_cast<const uint8_t*>(payload), bytes}, Floats(out, n), weight);
  }
  RaiseIfError(s);
}

}  // namespace

void BindComm(py::module_& m) {
  py::class_<PyCompressor>(m, "Compressor")
      .def(py::init<const std::string&, double, double, uint32_t, bool, bool>(), py::arg("kind"),
           py::arg("ratio"), py::arg("sample_ratio"), py::arg("chunk"), py::arg("stochastic"),
           py::arg("fp16_values"))
      .def("compress", &PyCompressor::Compress, py::arg("x"), py::arg("n"), py::arg("seed"),
           "Payload of n float32 values at address x")
      .def("compress_into", &PyCompressor::CompressInto, py::arg("x"), py::arg("n"),
           py::arg("seed"), py::arg("out"), py::arg("capacity"),
           "Writes the payload into out (capacity bytes); returns its size")
      .def("compress_with_feedback", &PyCompressor::CompressWithFeedback, py::arg("grad"),
           py::arg("residual"), py::arg("n"), py::arg("seed"),
           "residual += grad; payload = C(residual); residual -= D(payload)");
  m.def(
      "comm_advise_json",
      [](const std::string& topology_yaml, const std::string& topology_file,
         const std::string& root, const std::string& nvlink_from, int nodes) {
        comm::AdviseRequest q{topology_yaml, topology_file, root, nvlink_from, nodes};
        return base::DumpJson(ValueOrRaise(comm::AdviseReport(q)));
      },
      py::arg("topology_yaml"), py::arg("topology_file"), py::arg("root"), py::arg("nvlink_from"),
      py::arg("nodes"), "The report of `seedancectl comm advise -o json`");
  m.def("comm_decode_add", &DecodeAdd, py::arg("payload"), py::arg("bytes"), py::arg("out"),
        py::arg("n"), py::arg("weight"), "out += weight * decode(payload), validated first");
}

}  // namespace seedance::python
