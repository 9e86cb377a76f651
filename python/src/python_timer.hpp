// PythonTimer: a Timer whose runs are marked by Python code (e.g. torch's event API).
#pragma once

#include <string>
#include <utility>

#include "disttune/timer.hpp"

namespace disttune::python {

/// A Timer implemented by a Python subclass (start, stop, collect; optionally begin_tuning,
/// prepare_timed_run and flushes_l2). Its name and device facts (JSON objects) are fixed
/// when it is made.
class PythonTimer : public Timer {
 public:
  /// Throws std::invalid_argument if a facts text is not a JSON object.
  PythonTimer(std::string name, const std::string& hardware_json, const std::string& deps_json);
  std::string name() const override { return name_; }
  Value hardware() const override { return hardware_; }
  Value deps() const override { return deps_; }

 private:
  std::string name_;
  Value hardware_;
  Value deps_;
};

/// The JSON object in `text`; throws std::invalid_argument naming `what` otherwise.
Value parse_json_object(const std::string& text, const char* what);

}  // namespace disttune::python
