// Binds the Sink seam: a Python callable (kind, text) as the process-wide sink.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>
#include <string_view>

#include "bindings.hpp"
#include "disttune/sink.hpp"
#include "python_callable.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

/// Sends each message to a Python callable as (kind, text). An exception it raises is
/// reported the way Python reports errors it cannot raise (sys.unraisablehook), once per
/// message; the engine goes on.
class PythonSink final : public Sink {
 public:
  explicit PythonSink(nb::object callable) : callable_(std::move(callable)) {}

  void write(MessageKind kind, std::string_view text) override {
    nb::gil_scoped_acquire gil;
    try {
      callable_(to_string(kind), std::string(text));
    } catch (nb::python_error& error) {
      error.discard_as_unraisable("disttune sink");
    }
  }

 private:
  PythonCallable callable_;
};

}  // namespace

void bind_sink(nb::module_& module) {
  module.def(
      "set_sink",
      [](nb::object sink) {
        if (sink.is_none()) {
          set_sink(nullptr);
          return;
        }
        if (!PyCallable_Check(sink.ptr())) {
          throw nb::type_error("disttune: set_sink needs a callable (kind, text) or None");
        }
        set_sink(std::make_shared<PythonSink>(std::move(sink)));
      },
      nb::arg("sink").none(),
      "Sends disttune's console output (kinds 'warning', 'table', 'log', 'progress') to "
      "sink(kind, text) from now on, in this process; None restores stderr.");
}

}  // namespace disttune::python
