// Turning a Status into seedance.errors.SeedanceError, shared by the binding files.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "seedance/base/status.h"

namespace seedance::python {

[[noreturn]] inline void Raise(const base::Status& status) {
  namespace py = pybind11;
  py::object error_type = py::module_::import("seedance.errors").attr("SeedanceError");
  py::object error = error_type(std::string(status.message()), std::string(status.where()),
                                std::string(base::StatusCodeName(status.code())));
  PyErr_SetObject(error_type.ptr(), error.ptr());
  throw py::error_already_set();
}

inline void RaiseIfError(const base::Status& status) {
  if (!status.ok()) Raise(status);
}

template <typename T>
T ValueOrRaise(base::StatusOr<T> result) {
  if (!result.ok()) Raise(result.status());
  return std::move(result).value();
}

}  // namespace seedance::python
