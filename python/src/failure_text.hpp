// failure_text: a Python exception as a candidate's failure reason, whatever text it holds.
#pragma once

#include <nanobind/nanobind.h>

#include <stdexcept>
#include <string>

namespace disttune::python {

/// Whether nanobind can write the exception's text (python_error::what()): its str() fails
/// (nanobind says so) or is valid UTF-8. Call with the GIL held.
inline bool what_is_safe(nanobind::python_error& error) {
  nanobind::object text = nanobind::steal(PyObject_Str(error.value().ptr()));
  const bool safe = !text.is_valid() || PyUnicode_AsUTF8AndSize(text.ptr(), nullptr) != nullptr;
  PyErr_Clear();
  return safe;
}

/// The reason the engine records for a Python exception: nanobind's text (the traceback and
/// "Type: message"), or, when the message is not valid UTF-8 (a lone surrogate, e.g. from
/// os.fsdecode or output decoded with surrogateescape), "Type: message" with the message's
/// unencodable characters written as backslash escapes (nanobind's own text would take the
/// length of a null pointer then). Call with the GIL held.
inline std::string failure_text(nanobind::python_error& error) {
  namespace nb = nanobind;
  if (what_is_safe(error)) return error.what();
  nb::object text = nb::steal(PyObject_Str(error.value().ptr()));
  const auto readable = [](nb::handle any) {
    nb::object bytes = nb::steal(PyUnicode_AsEncodedString(any.ptr(), "utf-8", "backslashreplace"));
    if (!bytes.is_valid()) {
      PyErr_Clear();
      return std::string("<unreadable>");
    }
    return std::string(PyBytes_AS_STRING(bytes.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(bytes.ptr())));
  };
  nb::object name = nb::steal(PyObject_GetAttrString(error.type().ptr(), "__name__"));
  const std::string type = name.is_valid() && PyUnicode_Check(name.ptr()) ? readable(name) : "Exception";
  PyErr_Clear();
  return type + ": " + readable(text);
}

/// Returns call(); a Python exception it raises whose text nanobind cannot write (see
/// what_is_safe) becomes a std::runtime_error with failure_text, so that the engine, which
/// writes the text of what a Python hook (e.g. a timer's collect()) raises, never crashes.
/// Call without the GIL; `call` takes it.
template <class Call>
auto with_readable_errors(Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (nanobind::python_error& error) {
    nanobind::gil_scoped_acquire gil;
    if (!what_is_safe(error)) throw std::runtime_error(failure_text(error));
    throw;
  }
}

}  // namespace disttune::python
