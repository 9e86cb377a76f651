// A strategy's named parameters: typed reads of Measurement::strategy_options with defaults.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "disttune/measurement.hpp"

namespace disttune::detail {

/// Reads one strategy's options; every read names the strategy and the option in its error.
class StrategyOptions {
 public:
  /// Refuses (InvalidSetting) any option outside "seed" and `declared`.
  StrategyOptions(const Measurement& measurement, std::string strategy,
                  const std::vector<std::string>& declared);

  /// The option as a finite number in [least, most] (`most` infinite: no upper bound), or
  /// `fallback` when it is not given.
  double number(const std::string& name, double fallback, double least, double most) const;
  /// The option as a number strictly between 0 and 1, or `fallback` when it is not given.
  double proportion(const std::string& name, double fallback) const;
  /// The option as an integer in [least, most], or `fallback` when it is not given.
  long long integer(const std::string& name, long long fallback, long long least,
                    long long most) const;
  /// The option as one of `allowed`, or `fallback` when it is not given.
  std::string choice(const std::string& name, const std::string& fallback,
                     const std::vector<std::string>& allowed) const;
  /// Whether the option is given.
  bool has(const std::string& name) const;

 private:
  [[noreturn]] void refuse(const std::string& name, const std::string& why) const;

  const Measurement& measurement_;
  std::string strategy_;
};

}  // namespace disttune::detail
