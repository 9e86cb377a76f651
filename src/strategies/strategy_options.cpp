// A strategy's named parameters: the seed every strategy takes, unknown names refused, typed reads.
#include "strategies/strategy_options.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "disttune/error.hpp"
#include "disttune/strategy.hpp"
#include "util/number_text.hpp"

namespace disttune {

void check_strategy_options(const Measurement& measurement, const std::string& strategy,
                            const std::vector<std::string>& declared) {
  for (const auto& [name, value] : measurement.strategy_options) {
    if (name == "seed" || std::find(declared.begin(), declared.end(), name) != declared.end())
      continue;
    std::string known = "seed";
    for (const std::string& other : declared) known += ", " + other;
    throw InvalidSetting("disttune: strategy '" + strategy + "' has no option '" + name +
                         "' (its options: " + known + ")");
  }
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

StrategyOptions::StrategyOptions(const Measurement& measurement, std::string strategy,
                                 const std::vector<std::string>& declared)
    : measurement_(measurement), strategy_(std::move(strategy)) {
  check_strategy_options(measurement, strategy_, declared);
  (void)strategy_seed(measurement);
}

bool StrategyOptions::has(const std::string& name) const {
  return measurement_.strategy_options.count(name) > 0;
}

void StrategyOptions::refuse(const std::string& name, const std::string& why) const {
  throw InvalidSetting("disttune: strategy '" + strategy_ + "' option " + name + " " + why +
                       ", got '" + measurement_.strategy_options.at(name) + "'");
}

double StrategyOptions::number(const std::string& name, double fallback, double least,
                               double most) const {
  if (!has(name)) return fallback;
  const std::optional<double> value = finite_number(measurement_.strategy_options.at(name));
  if (!value || *value < least || *value > most) {
    refuse(name, std::isinf(most) ? "must be a finite number >= " + number_text(least)
                                  : "must be a number in [" + number_text(least) + ", " + number_text(most) + "]");
  }
  return *value;
}

double StrategyOptions::proportion(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  const std::optional<double> value = finite_number(measurement_.strategy_options.at(name));
  if (!value || *value <= 0.0 || *value >= 1.0) refuse(name, "must be a number in (0, 1)");
  return *value;
}

long long StrategyOptions::integer(const std::string& name, long long fallback, long long least,
                                   long long most) const {
  if (!has(name)) return fallback;
  const std::optional<long long> value = whole_integer<long long>(measurement_.strategy_options.at(name));
  if (!value || *value < least || *value > most) {
    refuse(name,
           "must be an integer in [" + std::to_string(least) + ", " + std::to_string(most) + "]");
  }
  return *value;
}

std::string StrategyOptions::choice(const std::string& name, const std::string& fallback,
                                    const std::vector<std::string>& allowed) const {
  if (!has(name)) return fallback;
  const std::string& text = measurement_.strategy_options.at(name);
  if (std::find(allowed.begin(), allowed.end(), text) != allowed.end()) return text;
  std::string names;
  for (const std::string& one : allowed) names += (names.empty() ? "" : ", ") + one;
  refuse(name, "must be one of " + names);
}

}  // namespace detail
}  // namespace disttune
