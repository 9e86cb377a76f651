// PythonTimer: facts parsing for Timers written in Python.
#include "python_timer.hpp"

#include <stdexcept>

namespace disttune::python {

Value parse_json_object(const std::string& text, const char* what) {
  Value value = Value::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!value.is_object()) {
    throw std::invalid_argument(std::string("disttune: ") + what + " must be a JSON object, got: " + text);
  }
  return value;
}

PythonTimer::PythonTimer(std::string name, const std::string& hardware_json,
                         const std::string& deps_json)
    : name_(std::move(name)),
      hardware_(parse_json_object(hardware_json, "timer hardware facts")),
      deps_(parse_json_object(deps_json, "timer dependency facts")) {
  if (name_.empty()) throw std::invalid_argument("disttune: a timer needs a name");
}

}  // namespace disttune::python
