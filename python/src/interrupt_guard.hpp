// InterruptGuard: keeps Ctrl-C (KeyboardInterrupt, SystemExit) from passing for a failed candidate.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <stdexcept>
#include <utility>

#include "failure_text.hpp"

namespace disttune::python {

/// The engine takes any exception from a run as that candidate's failure and goes on. A
/// KeyboardInterrupt or SystemExit must end the call instead: run() keeps it and fails the
/// run; every later run fails at once without running; rethrow() raises it once the engine
/// has returned. Any other Python exception becomes a std::runtime_error with a readable
/// text (failure_text), the candidate's failure reason. Used on one thread, with the GIL
/// held in run().
class InterruptGuard {
 public:
  template <class Call>
  void run(Call&& call) {
    if (interrupt_) throw std::runtime_error("disttune: interrupted");
    try {
      call();
    } catch (nanobind::python_error& error) {
      if (!error.matches(PyExc_KeyboardInterrupt) && !error.matches(PyExc_SystemExit)) {
        throw std::runtime_error(failure_text(error));
      }
      interrupt_.emplace(std::move(error));
      throw std::runtime_error("disttune: interrupted");
    }
  }

  bool interrupted() const { return interrupt_.has_value(); }

  /// Raises the kept interrupt, if there is one.
  void rethrow() {
    if (!interrupt_) return;
    nanobind::python_error error = std::move(*interrupt_);
    interrupt_.reset();
    throw error;
  }

 private:
  std::optional<nanobind::python_error> interrupt_;
};

}  // namespace disttune::python
