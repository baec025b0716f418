// Turning a Status into seedance.errors.SeedanceError, shared by the binding files.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>
#include <utility>

#include "seedance/base/status.h"

namespace seedance::python {

// A Python str from bytes that may not be UTF-8 (a message quoting an input file): each bad byte
// becomes U+FFFD instead of a UnicodeDecodeError that would hide the real error.
inline pybind11::str Text(std::string_view bytes) {
  PyObject* s =
      PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace");
  if (s == nullptr) throw pybind11::error_already_set();
  return pybind11::reinterpret_steal<pybind11::str>(s);
}

[[noreturn]] inline void Raise(const base::Status& status) {
  namespace py = pybind11;
  py::object error_type = py::module_::import("seedance.errors").attr("SeedanceError");
  py::object error = error_type(Text(status.message()), Text(status.where()),
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
