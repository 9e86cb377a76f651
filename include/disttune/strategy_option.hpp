// A strategy's declared options: each name's kind, accepted values and default, read to one
// canonical text.
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "disttune/measurement.hpp"

namespace disttune {

/// How a declared option's text is read: a finite number, a whole number, or text.
enum class OptionKind { number, integer, text };

/// One option a strategy declares (as nvbench's criterion params): its name, the values it
/// accepts and its default. Make one with the named constructors below.
struct StrategyOption {
  std::string name;
  OptionKind kind = OptionKind::text;
  /// The default as text (read like a given value); nullopt: none, the option is absent
  /// unless given.
  std::optional<std::string> fallback;
  /// number and integer: the accepted range, both ends included unless `open_range`.
  double least = -std::numeric_limits<double>::infinity();
  double most = std::numeric_limits<double>::infinity();
  bool open_range = false;
  /// text: the accepted values; empty: any text.
  std::vector<std::string> choices;

  /// A finite number in [least, most].
  static StrategyOption number(std::string name, std::optional<double> fallback,
                               double least = -std::numeric_limits<double>::infinity(),
                               double most = std::numeric_limits<double>::infinity());
  /// A number strictly between 0 and 1.
  static StrategyOption proportion(std::string name, double fallback);
  /// A whole number in [least, most] (up to 2^64 - 1 when least >= 0).
  static StrategyOption integer(std::string name, std::optional<long long> fallback,
                                double least = -std::numeric_limits<double>::infinity(),
                                double most = std::numeric_limits<double>::infinity());
  /// One of `choices` (empty: any text).
  static StrategyOption text(std::string name, std::optional<std::string> fallback,
                             std::vector<std::string> choices = {});
  /// "seed": an unsigned 64-bit integer, default 0, the seed SpaceInfo::seed carries.
  static StrategyOption seed();
};

/// The one text `text` reads to as `option` of `strategy`: a number in its shortest form
/// ("5e-3" and "0.0050" -> "0.005", "-0" -> "0"), an integer in plain decimal ("07" -> "7"),
/// text as given. InvalidSetting naming the strategy, the option, what it accepts and `text`
/// when the option does not accept it.
std::string canonical_option_text(const std::string& strategy, const StrategyOption& option,
                                  const std::string& text);

/// Every option of `declared` as `strategy` reads it from `given`: the given value or the
/// default, in canonical text (an option without a default that is not given is absent).
/// InvalidSetting naming the strategy and the name for a given name not in `declared`
/// (listing them), or naming the option for a value it does not accept.
std::map<std::string, std::string> read_declared_options(
    const std::string& strategy, const std::vector<StrategyOption>& declared,
    const std::map<std::string, std::string>& given);

/// measurement.strategy_options as the strategy strategy_name(measurement) reads them: for a
/// strategy registered with its options (every built-in one), read_declared_options (the
/// defaults filled in, one text per value), so settings that behave the same compare equal;
/// for one registered without, the given texts unchanged. InvalidSetting for an unknown
/// strategy or what read_declared_options refuses. The ranks compare these before tuning.
std::map<std::string, std::string> effective_strategy_options(const Measurement& measurement);

}  // namespace disttune
