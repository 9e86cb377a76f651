// A binding's keyword options as one table: each option's name, default (a Python value) and how it
// is applied.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <span>
#include <string>

#include "disttune/error.hpp"

namespace disttune::python {

/// One keyword option of a binding whose values gather in `Settings`: its name, its default
/// (a Python value), and how a value (the given one or the default) is applied; `apply` names
/// the option in its errors.
template <typename Settings>
struct KeywordOption {
  const char* name;
  nanobind::object (*default_value)();
  void (*apply)(Settings& settings, nanobind::handle value, const char* name);
};

/// `value` as a T; a TypeError naming the option and what it must be (`expected`) otherwise.
template <typename T>
T value_of(nanobind::handle value, const char* name, const char* expected) {
  T result{};
  if (!nanobind::try_cast(value, result)) {
    throw nanobind::type_error(("disttune: option " + std::string(name) + " must be " + expected +
                                ", got " + nanobind::cast<std::string>(nanobind::repr(value)))
                                   .c_str());
  }
  return result;
}

/// None stays nullopt; anything else is value_of<T>.
template <typename T>
std::optional<T> optional_of(nanobind::handle value, const char* name, const char* expected) {
  if (value.is_none()) return std::nullopt;
  return value_of<T>(value, name, expected);
}

/// A default of None (an option whose None means "the engine's or the environment's default").
inline nanobind::object none_default() {
  return nanobind::none();
}

/// Applies the keywords `given` to `settings` through `table`, in the table's order; each
/// option not given takes its default. A name outside the table is InvalidSetting naming it
/// and `owner` (the bound class), before any option is applied.
template <typename Settings>
void apply_keyword_options(std::span<const KeywordOption<Settings>> table,
                           const nanobind::kwargs& given, const char* owner, Settings& settings) {
  for (const auto& [key, value] : given) {
    const std::string name = nanobind::cast<std::string>(key);
    bool known = false;
    for (const KeywordOption<Settings>& option : table) known = known || name == option.name;
    if (!known)
      throw InvalidSetting("disttune: " + std::string(owner) + " has no option '" + name + "'");
  }
  for (const KeywordOption<Settings>& option : table) {
    const nanobind::object value =
        given.contains(option.name) ? nanobind::object(given[option.name]) : option.default_value();
    option.apply(settings, value, option.name);
  }
}

/// The table's defaults by name (a dict, in the table's order).
template <typename Settings>
nanobind::dict keyword_option_defaults(std::span<const KeywordOption<Settings>> table) {
  nanobind::dict defaults;
  for (const KeywordOption<Settings>& option : table)
    defaults[option.name] = option.default_value();
  return defaults;
}

/// The table's names (a tuple, in the table's order).
template <typename Settings>
nanobind::tuple keyword_option_names(std::span<const KeywordOption<Settings>> table) {
  nanobind::list names;
  for (const KeywordOption<Settings>& option : table) names.append(option.name);
  return nanobind::tuple(names);
}

}  // namespace disttune::python
