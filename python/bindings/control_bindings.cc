// seedance._core's control functions (feature CTRL-3): the checkpoint store, for
// seedance.torch.Checkpointer. Payloads cross as bytes; the GIL is released while files are
// written and read.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "python/bindings/raise.h"
#include "seedance/base/env.h"
#include "seedance/control/checkpoint_store.h"

namespace py = pybind11;

namespace seedance::python {

void BindControl(py::module_& m) {
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
      "crc32", [](const py::bytes& data) { return control::Crc32(std::string(data)); },
      py::arg("data"));
}

}  // namespace seedance::python
