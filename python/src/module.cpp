// disttune._core: the C++ engine as a Python extension module (nanobind).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "disttune/fingerprint.hpp"

NB_MODULE(_core, module) {
  module.doc() = "The disttune engine: tuning, timers, communicators and stores.";
  module.attr("__version__") = disttune::library_version();
  disttune::python::bind_errors(module);
  disttune::python::bind_settings(module);
  disttune::python::bind_sink(module);
  disttune::python::bind_timer(module);
  disttune::python::bind_communicator(module);
  disttune::python::bind_function_tuner(module);
  disttune::python::bind_context(module);
  disttune::python::bind_strategy(module);
  disttune::python::bind_hit_path(module);
  disttune::python::bind_store(module);
  disttune::python::bind_command_line(module);
}
