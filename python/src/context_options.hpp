// ContextualAutotuner's keyword options from Python: one table of names, defaults and how each is
// applied.
#pragma once

#include <nanobind/nanobind.h>

#include <span>

#include "disttune/context.hpp"
#include "option_table.hpp"

namespace disttune::python {

/// One keyword option of ContextualAutotuner (option_table.hpp); values gather in ContextOptions.
using ContextOption = KeywordOption<ContextOptions>;

/// Every option ContextualAutotuner takes, in the order they are applied (the one definition of
/// the names and defaults: contextual_defaults, contextual_option_names and autotuner.py's
/// engine options are made from it).
std::span<const ContextOption> context_options();

/// The engine's options from the given keywords (each table option not given takes its
/// default); a name outside the table is InvalidSetting naming it, a bad value InvalidSetting
/// or TypeError naming its option.
ContextOptions contextual_tuner_options(const nanobind::kwargs& given);

}  // namespace disttune::python
