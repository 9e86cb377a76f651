// FunctionTuner's keyword options from Python: one table of names, defaults and how each is applied.
#pragma once

#include <nanobind/nanobind.h>

#include <span>

#include "disttune/function_tuner.hpp"
#include "option_table.hpp"

namespace disttune::python {

struct FunctionSettings;

/// One keyword option of FunctionTuner (option_table.hpp).
using FunctionOption = KeywordOption<FunctionSettings>;

/// Every option FunctionTuner takes, in the order they are applied (the one definition of the
/// names and defaults: function_defaults, function_option_names and tune.py's engine options
/// are made from it).
std::span<const FunctionOption> function_options();

/// The engine's options from the given keywords (each table option not given takes its
/// default); a name outside the table is InvalidSetting naming it, a bad value InvalidSetting
/// or TypeError naming its option.
TunerOptions function_tuner_options(const nanobind::kwargs& given);

}  // namespace disttune::python
