// The strategy registry: strategies selectable by name, built-in and registered at run time,
// and the name a measurement asks for.
#include <algorithm>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "disttune/error.hpp"
#include "disttune/settings.hpp"
#include "disttune/strategy.hpp"

namespace disttune {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::pair<std::string, StrategyFactory>> entries;  ///< in registration order
};

/// The process's registry, holding the built-in strategies from its first use (a new
/// built-in strategy is added to this list).
Registry& registry() {
  static Registry instance{{}, {{"exhaustive", make_exhaustive_strategy}, {"adaptive", make_adaptive_strategy}, {"converge", make_converge_strategy},
                            {"search", make_search_strategy},
                            {"random", make_random_strategy}}};
  return instance;
}

std::string joined(const std::vector<std::pair<std::string, StrategyFactory>>& entries) {
  std::string text;
  for (const auto& entry : entries) text += (text.empty() ? "" : ", ") + entry.first;
  return text;
}

}  // namespace

void register_strategy(const std::string& name, StrategyFactory factory) {
  if (name.empty()) throw std::invalid_argument("disttune: a strategy needs a name");
  if (!factory) throw std::invalid_argument("disttune: strategy '" + name + "' has no factory");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const bool taken = std::any_of(r.entries.begin(), r.entries.end(),
                                 [&](const auto& entry) { return entry.first == name; });
  if (taken) throw std::invalid_argument("disttune: strategy '" + name + "' is already registered");
  r.entries.emplace_back(name, std::move(factory));
}

std::vector<std::string> registered_strategies() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& entry : r.entries) names.push_back(entry.first);
  return names;
}

std::unique_ptr<Strategy> make_strategy(const Measurement& measurement) {
  const std::string name = strategy_name(measurement);
  StrategyFactory factory;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    const auto found = std::find_if(r.entries.begin(), r.entries.end(),
                                    [&](const auto& entry) { return entry.first == name; });
    if (found == r.entries.end()) {
      throw InvalidSetting("disttune: unknown strategy '" + name + "' (registered: " +
                           joined(r.entries) + ")");
    }
    factory = found->second;
  }
  std::unique_ptr<Strategy> strategy = factory(measurement);  // outside the lock: it may register
  if (!strategy) throw std::logic_error("disttune: strategy '" + name + "' factory returned nothing");
  return strategy;
}

std::string strategy_name(const Measurement& measurement) {
  if (!measurement.strategy.empty()) return measurement.strategy;
  const std::optional<std::string> chosen = strategy_setting();
  if (!chosen) return std::string(kDefaultStrategy);
  const std::vector<std::string> registered = registered_strategies();
  if (std::find(registered.begin(), registered.end(), *chosen) == registered.end()) {
    std::string names;
    for (const std::string& name : registered) names += (names.empty() ? "" : ", ") + name;
    throw InvalidSetting("disttune: TRITON_DIST_AUTOTUNE_STRATEGY='" + *chosen +
                         "' is not a registered strategy (registered: " + names + ")");
  }
  return *chosen;
}

}  // namespace disttune
