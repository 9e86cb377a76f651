// A strategy's named parameters: declared options read to one canonical text, unknown names
// refused, typed reads.
#include "strategies/strategy_options.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "disttune/error.hpp"
#include "disttune/strategy.hpp"
#include "util/number_text.hpp"

namespace disttune {
namespace {

std::string names_of(const std::vector<StrategyOption>& declared) {
  std::string names;
  for (const StrategyOption& option : declared) names += (names.empty() ? "" : ", ") + option.name;
  return names.empty() ? "none" : names;
}

/// What a number or integer option accepts, as its refusal says it ("a number in (0, 1)").
std::string range_text(const StrategyOption& option) {
  const bool number = option.kind == OptionKind::number;
  const std::string noun = number ? "a number" : "an integer";
  const std::string unbounded = number ? "a finite number" : "an integer";
  const bool low = std::isfinite(option.least);
  const bool high = std::isfinite(option.most);
  if (low && high) {
    return noun + " in " + (option.open_range ? "(" : "[") + detail::number_text(option.least) +
           ", " + detail::number_text(option.most) + (option.open_range ? ")" : "]");
  }
  if (low)
    return unbounded + (option.open_range ? " > " : " >= ") + detail::number_text(option.least);
  if (high)
    return unbounded + (option.open_range ? " < " : " <= ") + detail::number_text(option.most);
  return unbounded;
}

bool in_range(const StrategyOption& option, double value) {
  if (option.open_range) return value > option.least && value < option.most;
  return value >= option.least && value <= option.most;
}

/// An integer option's value in plain decimal, or nullopt if `text` is no integer it accepts.
std::optional<std::string> integer_text(const StrategyOption& option, const std::string& text) {
  if (const std::optional<long long> value = detail::whole_integer<long long>(text)) {
    if (in_range(option, static_cast<double>(*value))) return std::to_string(*value);
    return std::nullopt;
  }
  // Beyond long long: an unsigned option (a seed) still reads up to 2^64 - 1.
  const std::optional<unsigned long long> value = detail::whole_integer<unsigned long long>(text);
  if (!value || option.least < 0.0 || !in_range(option, static_cast<double>(*value)))
    return std::nullopt;
  return std::to_string(*value);
}

}  // namespace

StrategyOption StrategyOption::number(std::string name, std::optional<double> fallback,
                                      double least, double most) {
  StrategyOption option{std::move(name), OptionKind::number, std::nullopt, least, most, false, {}};
  if (fallback) option.fallback = detail::number_text(*fallback);
  return option;
}

StrategyOption StrategyOption::proportion(std::string name, double fallback) {
  StrategyOption option = number(std::move(name), fallback, 0.0, 1.0);
  option.open_range = true;
  return option;
}

StrategyOption StrategyOption::integer(std::string name, std::optional<long long> fallback,
                                       double least, double most) {
  StrategyOption option{std::move(name), OptionKind::integer, std::nullopt, least, most, false, {}};
  if (fallback) option.fallback = std::to_string(*fallback);
  return option;
}

StrategyOption StrategyOption::text(std::string name, std::optional<std::string> fallback,
                                    std::vector<std::string> choices) {
  return {std::move(name), OptionKind::text,  std::move(fallback), 0.0, 0.0,
          false,           std::move(choices)};
}

StrategyOption StrategyOption::seed() {
  return integer("seed", 0, 0.0);
}

std::string canonical_option_text(const std::string& strategy, const StrategyOption& option,
                                  const std::string& text) {
  std::optional<std::string> canonical;
  std::string accepted;
  switch (option.kind) {
    case OptionKind::number: {
      const std::optional<double> value = detail::finite_number(text);
      // -0 and 0 are one value: one text.
      if (value && in_range(option, *value))
        canonical = detail::number_text(*value == 0.0 ? 0.0 : *value);
      accepted = range_text(option);
      break;
    }
    case OptionKind::integer:
      canonical = integer_text(option, text);
      accepted = option.least == 0.0 && !std::isfinite(option.most) ? "an unsigned integer"
                                                                    : range_text(option);
      break;
    case OptionKind::text:
      if (option.choices.empty() ||
          std::find(option.choices.begin(), option.choices.end(), text) != option.choices.end()) {
        canonical = text;
      }
      for (const std::string& choice : option.choices)
        accepted += (accepted.empty() ? "one of " : ", ") + choice;
      break;
  }
  if (!canonical) {
    throw InvalidSetting("disttune: strategy '" + strategy + "' option " + option.name +
                         " must be " + accepted + ", got '" + text + "'");
  }
  return *canonical;
}

std::map<std::string, std::string> read_declared_options(
    const std::string& strategy, const std::vector<StrategyOption>& declared,
    const std::map<std::string, std::string>& given) {
  for (const auto& [name, text] : given) {
    const bool known =
        std::any_of(declared.begin(), declared.end(),
                    [&name = name](const StrategyOption& option) { return option.name == name; });
    if (!known) {
      throw InvalidSetting("disttune: strategy '" + strategy + "' has no option '" + name +
                           "' (its options: " + names_of(declared) + ")");
    }
  }
  std::map<std::string, std::string> values;
  for (const StrategyOption& option : declared) {
    const auto found = given.find(option.name);
    if (found != given.end()) {
      values[option.name] = canonical_option_text(strategy, option, found->second);
    } else if (option.fallback) {
      values[option.name] = canonical_option_text(strategy, option, *option.fallback);
    }
  }
  return values;
}

void check_strategy_options(const Measurement& measurement, const std::string& strategy,
                            const std::vector<std::string>& declared) {
  std::vector<StrategyOption> options{StrategyOption::seed()};
  for (const std::string& name : declared)
    options.push_back(StrategyOption::text(name, std::nullopt));
  (void)read_declared_options(strategy, options, measurement.strategy_options);
}

std::uint64_t strategy_seed(const Measurement& measurement) {
  const auto found = measurement.strategy_options.find("seed");
  if (found == measurement.strategy_options.end()) return 0;
  const std::optional<std::uint64_t> seed = detail::whole_integer<std::uint64_t>(found->second);
  if (!seed) {
    throw InvalidSetting("disttune: strategy option seed must be an unsigned integer, got '" +
                         found->second + "'");
  }
  return *seed;
}

namespace detail {

const std::vector<StrategyOption>& seed_only_options() {
  static const std::vector<StrategyOption> options{StrategyOption::seed()};
  return options;
}

StrategyOptions::StrategyOptions(const Measurement& measurement, const std::string& strategy,
                                 const std::vector<StrategyOption>& declared)
    : strategy_(strategy),
      values_(read_declared_options(strategy, declared, measurement.strategy_options)) {}

const std::string& StrategyOptions::value(const std::string& name) const {
  const auto found = values_.find(name);
  if (found == values_.end()) {
    throw std::logic_error("disttune: strategy '" + strategy_ + "' read option " + name +
                           ", which it does not declare with a default and was not given");
  }
  return found->second;
}

double StrategyOptions::number(const std::string& name) const {
  return finite_number(value(name)).value();
}

long long StrategyOptions::integer(const std::string& name) const {
  const std::optional<long long> read = whole_integer<long long>(value(name));
  if (!read)
    throw std::logic_error("disttune: strategy option " + name + " is not a signed integer");
  return *read;
}

const std::string& StrategyOptions::text(const std::string& name) const {
  return value(name);
}

bool StrategyOptions::has(const std::string& name) const { return values_.count(name) > 0; }

}  // namespace detail
}  // namespace disttune
