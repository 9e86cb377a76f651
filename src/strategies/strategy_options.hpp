// A strategy's named parameters: typed reads of its declared options, and the built-in strategies'
// tables.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "disttune/measurement.hpp"
#include "disttune/strategy_option.hpp"

namespace disttune::detail {

/// The options of the built-in strategies, each table defined beside its strategy: what
/// they read and what the registry canonicalizes (effective_strategy_options).
const std::vector<StrategyOption>& seed_only_options();  ///< exhaustive, adaptive
const std::vector<StrategyOption>& converge_options();   ///< converge_strategy.cpp
const std::vector<StrategyOption>& search_options();     ///< search_strategy.cpp: search, random

/// Reads one strategy's options against its declared table; every error names the strategy
/// and the option.
class StrategyOptions {
 public:
  /// read_declared_options(strategy, declared, measurement.strategy_options): InvalidSetting
  /// for a name outside `declared` or a value an option does not accept.
  StrategyOptions(const Measurement& measurement, const std::string& strategy,
                  const std::vector<StrategyOption>& declared);

  /// A declared number option's value (given, else its default).
  double number(const std::string& name) const;
  /// A declared integer option's value (given, else its default).
  long long integer(const std::string& name) const;
  /// A declared text option's value (given, else its default).
  const std::string& text(const std::string& name) const;
  /// Whether the option has a value: given, or declared with a default.
  bool has(const std::string& name) const;

 private:
  /// The option's canonical text; std::logic_error if it is neither given nor defaulted.
  const std::string& value(const std::string& name) const;

  std::string strategy_;
  std::map<std::string, std::string> values_;
};

}  // namespace disttune::detail
