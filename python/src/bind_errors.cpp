// Binds the error hierarchy: disttune.DisttuneError and the specific errors under it.
#include <nanobind/nanobind.h>

#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "bindings.hpp"
#include "disttune/communicator.hpp"
#include "disttune/context.hpp"
#include "disttune/error.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

nb::handle invalid_setting_type;
nb::handle engine_error_type;

/// Raises `type` with `what`; bytes that are not UTF-8 (e.g. a setting's raw value) appear as
/// backslash escapes, where PyErr_SetString would leave the message empty.
void set_error(nb::handle type, const char* what) {
  PyObject* message = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)),
                                           "backslashreplace");
  if (message == nullptr) {
    PyErr_Clear();
    message = PyUnicode_FromString("<unreadable message>");
  }
  PyErr_SetObject(type.ptr(), message);
  Py_XDECREF(message);
}

/// Raises a thrown CppError as the Python class `type`, with a readable message whatever bytes
/// it holds; any other exception passes on to the next translator.
template <class CppError>
void translate(const std::exception_ptr& error, void* type) {
  try {
    std::rethrow_exception(error);
  } catch (const CppError& e) {
    set_error(nb::handle(static_cast<PyObject*>(type)), e.what());
  }
}

/// The Python exception class of CppError, under `base` and the standard class `standard`
/// (none for the base itself). Its translator is registered after nanobind's own one of the
/// class, and after those of the classes bound before, so it is tried before them
/// (nanobind: newest first): bind a base before the classes under it.
template <class CppError>
nb::handle bind_error(nb::module_& module, const char* name, nb::handle base, PyObject* standard,
                      const char* doc) {
  nb::object bases =
      standard != nullptr ? nb::make_tuple(base, nb::handle(standard)) : nb::make_tuple(base);
  nb::exception<CppError> type(module, name, bases);
  type.attr("__doc__") = doc;
  nb::register_exception_translator(&translate<CppError>, type.ptr());
  return type.release();
}

/// A Python exception class that no C++ type maps to (raised by the Python package only).
nb::handle bind_python_error(nb::module_& module, const char* name, nb::handle base,
                             PyObject* standard, const char* doc) {
  const std::string qualified = std::string("disttune._core.") + name;
  nb::object bases = nb::make_tuple(base, nb::handle(standard));
  nb::object type = nb::steal(PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr));
  if (!type.is_valid()) throw nb::python_error();
  type.attr("__doc__") = doc;
  module.attr(name) = type;
  return type.release();
}

/// Standard exceptions that the engine throws without a class of its own still reach Python
/// as DisttuneErrors: std::invalid_argument as InvalidSetting, other runtime and logic errors
/// as EngineError. nanobind's own exceptions and the ones it maps to specific Python
/// classes (IndexError, OverflowError, ...) pass on to its translators.
void translate_standard(const std::exception_ptr& error, void*) {
  try {
    std::rethrow_exception(error);
  } catch (const nb::builtin_exception&) {
    throw;
  } catch (const std::invalid_argument& e) {
    set_error(invalid_setting_type, e.what());
  } catch (const std::domain_error&) {
    throw;
  } catch (const std::length_error&) {
    throw;
  } catch (const std::out_of_range&) {
    throw;
  } catch (const std::overflow_error&) {
    throw;
  } catch (const std::range_error&) {
    throw;
  } catch (const std::runtime_error& e) {
    set_error(engine_error_type, e.what());
  } catch (const std::logic_error& e) {
    set_error(engine_error_type, e.what());
  }
}

}  // namespace

void bind_errors(nb::module_& module) {
  nb::register_exception_translator(&translate_standard);
  // Registered after the translator above, so tried before it (nanobind: newest first).
  const nb::handle base = bind_error<Error>(
      module, "DisttuneError", PyExc_Exception, nullptr,
      "The base of every error disttune raises (C++: disttune::Error). Each specific error "
      "also derives from the built-in class it always was (ValueError, RuntimeError, ...).");
  invalid_setting_type = bind_error<InvalidSetting>(
      module, "InvalidSetting", base, PyExc_ValueError,
      "A setting is invalid: a decorator option (counts, statistic, strategy, deadline, ...), "
      "an argument, or a TRITON_DIST_AUTOTUNE_* environment variable. The message names it, "
      "its value and what is accepted.");
  bind_error<TuningFailed>(
      module, "TuningFailed", base, PyExc_RuntimeError,
      "Nothing could be chosen for a key: every config failed (one line per config says why), "
      "or prune_fn removed every config.");
  bind_error<CollectiveTimeout>(
      module, "CollectiveTimeout", base, PyExc_TimeoutError,
      "An engine collective missed its deadline; the message names the phase, function, key "
      "and candidate.");
  bind_error<RankDisagreement>(
      module, "RankDisagreement", base, PyExc_RuntimeError,
      "Ranks disagree on something they must agree on (key, config list, settings).");
  bind_error<ContextualRunActive>(
      module, "ContextualRunActive", base, PyExc_RuntimeError,
      "A contextual call was started while another is active in this process.");
  engine_error_type = bind_python_error(
      module, "EngineError", base, PyExc_RuntimeError,
      "Any other failure disttune reports (an I/O error of the store, a misuse of the API, a "
      "missing device API).");
  bind_python_error(module, "NotCallable", base, PyExc_TypeError,
                    "An argument that must be callable (launcher, key_fn, prune_fn, ...) is not.");
}

}  // namespace disttune::python
