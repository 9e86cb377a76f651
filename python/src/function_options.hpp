// FunctionTuner's keyword options from Python: one table of names, defaults and how each is applied.
#pragma once

#include <nanobind/nanobind.h>

#include <span>

#include "disttune/function_tuner.hpp"

namespace disttune::python {

struct FunctionSettings;

/// One keyword option of FunctionTuner: its name, its default (a Python value), and how a
/// value (the given one or the default) is applied; `apply` names the option in its errors.
struct FunctionOption {
  const char* name;
  nanobind::object (*default_value)();
  void (*apply)(FunctionSettings& settings, nanobind::handle value, const char* name);
};

/// Every option FunctionTuner takes, in the order they are applied (the one definition of the
/// names and defaults: function_defaults and tune.py's engine options are made from it).
std::span<const FunctionOption> function_options();

/// The engine's options from the given keywords (each table option not given takes its
/// default); a name outside the table is InvalidSetting naming it, a bad value InvalidSetting
/// or TypeError naming its option.
TunerOptions function_tuner_options(const nanobind::kwargs& given);

/// The table's defaults by name (disttune._core.function_defaults).
nanobind::dict function_option_defaults();

}  // namespace disttune::python
