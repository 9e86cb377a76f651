// PythonCallable: a Python callable that engine threads may hold and call without the GIL.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <utility>

namespace disttune::python {

/// Shares one reference to a Python callable. Copies never touch Python reference counts;
/// the last copy releases the callable under the GIL; operator() takes the GIL to call it.
class PythonCallable {
 public:
  explicit PythonCallable(nanobind::object callable)
      : callable_(new nanobind::object(std::move(callable)), [](nanobind::object* held) {
          nanobind::gil_scoped_acquire gil;
          delete held;
        }) {}

  /// Calls the callable with `args` (C++ values cast under the GIL) and returns its result.
  /// A Python exception propagates as nanobind::python_error.
  template <class... Args>
  nanobind::object operator()(Args&&... args) const {
    nanobind::gil_scoped_acquire gil;
    return (*callable_)(std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<nanobind::object> callable_;
};

}  // namespace disttune::python
