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

/// " (raised at FILE:LINE in FUNCTION)" for the deepest frame of nanobind's text of an
/// exception (its last line `  File "FILE", line LINE, in FUNCTION`), where it was raised: the
/// user's code, under the frames that called it; "" when the text has no frame.
inline std::string raised_at(const std::string& whole) {
  const std::string marker = "\n  File \"";
  const std::size_t at = whole.rfind(marker);
  if (at == std::string::npos) return "";
  const std::size_t end = whole.find('\n', at + 1);
  const std::string frame = whole.substr(at + marker.size(), end == std::string::npos ? end : end - at - marker.size());
  const std::size_t file_end = frame.rfind("\", line ");
  const std::size_t in = frame.rfind(", in ");
  if (file_end == std::string::npos || in == std::string::npos || in < file_end) return "";
  const std::string line = frame.substr(file_end + 8, in - file_end - 8);
  return " (raised at " + frame.substr(0, file_end) + ":" + line + " in " + frame.substr(in + 5) + ")";
}

/// "Type: message (raised at FILE:LINE in FUNCTION)": the exception's type, its message's
/// first line, and where it was raised. Call with the GIL held, for an exception whose str()
/// is valid UTF-8 (what_is_safe).
inline std::string failure_summary(nanobind::python_error& error) {
  namespace nb = nanobind;
  std::string summary;
  try {
    summary = nb::cast<std::string>(error.type().attr("__name__"));
    const std::string message = nb::cast<std::string>(nb::str(error.value()));
    if (!message.empty()) summary += ": " + message.substr(0, message.find('\n'));
  } catch (const std::exception&) {
    PyErr_Clear();  // a part that cannot be read is left out; the whole text follows anyway
  }
  return summary + raised_at(error.what());
}

/// The reason the engine records for a Python exception: a first line "Type: message (raised
/// at FILE:LINE in FUNCTION)" (the message's first line), which lists of failures show, then
/// nanobind's text (the traceback and "Type: message"), which logs and records keep. When the
/// message is not valid UTF-8 (a lone surrogate, e.g. from os.fsdecode or output decoded with
/// surrogateescape): "Type: message" with the message's unencodable characters written as
/// backslash escapes (nanobind's own text would take the length of a null pointer then).
/// Call with the GIL held.
inline std::string failure_text(nanobind::python_error& error) {
  namespace nb = nanobind;
  if (what_is_safe(error)) return failure_summary(error) + "\n" + error.what();
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
