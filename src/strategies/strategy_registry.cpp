// The strategy registry: strategies selectable by name, built-in and registered at run time,
// the name a measurement asks for and the options that strategy reads.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "disttune/error.hpp"
#include "disttune/settings.hpp"
#include "disttune/strategy.hpp"
#include "disttune/strategy_option.hpp"
#include "strategies/strategy_options.hpp"

namespace disttune {
namespace {

/// One registered strategy: its factory and, when it declared them, its options.
struct Entry {
  std::string name;
  StrategyFactory factory;
  std::optional<std::vector<StrategyOption>> declared;
};

struct Registry {
  std::mutex mutex;
  std::vector<Entry> entries;  ///< in registration order
};

/// The process's registry, holding the built-in strategies from its first use (a new
/// built-in strategy is added to this list).
Registry& registry() {
  static Registry instance{{},
                           {{"exhaustive", make_exhaustive_strategy, detail::seed_only_options()},
                            {"adaptive", make_adaptive_strategy, detail::seed_only_options()},
                            {"converge", make_converge_strategy, detail::converge_options()},
                            {"search", make_search_strategy, detail::search_options()},
                            {"random", make_random_strategy, detail::search_options()}}};
  return instance;
}

std::string joined(const std::vector<Entry>& entries) {
  std::string text;
  for (const Entry& entry : entries) text += (text.empty() ? "" : ", ") + entry.name;
  return text;
}

/// std::invalid_argument unless every option has a distinct non-empty name and a default
/// the option accepts.
void check_declared(const std::string& strategy, const std::vector<StrategyOption>& declared) {
  for (auto option = declared.begin(); option != declared.end(); ++option) {
    if (option->name.empty())
      throw std::invalid_argument("disttune: strategy '" + strategy +
                                  "' declares an option without a name");
    if (std::any_of(declared.begin(), option,
                    [&](const StrategyOption& o) { return o.name == option->name; })) {
      throw std::invalid_argument("disttune: strategy '" + strategy + "' declares option " +
                                  option->name + " twice");
    }
    try {
      if (option->fallback) (void)canonical_option_text(strategy, *option, *option->fallback);
    } catch (const InvalidSetting& error) {
      throw std::invalid_argument(std::string(error.what()) + " (its default)");
    }
  }
}

void add_entry(Entry entry) {
  if (entry.name.empty()) throw std::invalid_argument("disttune: a strategy needs a name");
  if (!entry.factory)
    throw std::invalid_argument("disttune: strategy '" + entry.name + "' has no factory");
  if (entry.declared) check_declared(entry.name, *entry.declared);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const bool taken = std::any_of(r.entries.begin(), r.entries.end(),
                                 [&](const Entry& other) { return other.name == entry.name; });
  if (taken)
    throw std::invalid_argument("disttune: strategy '" + entry.name + "' is already registered");
  r.entries.push_back(std::move(entry));
}

/// The registered entry of `name` (a copy: the factory runs outside the lock, and may
/// register); InvalidSetting listing the registered names if there is none.
Entry entry_of(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const auto found = std::find_if(r.entries.begin(), r.entries.end(),
                                  [&](const Entry& entry) { return entry.name == name; });
  if (found == r.entries.end()) {
    throw InvalidSetting("disttune: unknown strategy '" + name +
                         "' (registered: " + joined(r.entries) + ")");
  }
  return *found;
}

/// The options strategy `name` (registered as `entry`) is made with: as read_declared_options
/// reads them where it declares its options, else as given.
std::map<std::string, std::string> options_of(const std::string& name, const Entry& entry,
                                              const Measurement& measurement) {
  if (!entry.declared) return measurement.strategy_options;
  return read_declared_options(name, *entry.declared, measurement.strategy_options);
}

}  // namespace

void register_strategy(const std::string& name, StrategyFactory factory) {
  add_entry(Entry{name, std::move(factory), std::nullopt});
}

void register_strategy(const std::string& name, std::vector<StrategyOption> options,
                       StrategyFactory factory) {
  add_entry(Entry{name, std::move(factory), std::move(options)});
}

std::vector<std::string> registered_strategies() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const Entry& entry : r.entries) names.push_back(entry.name);
  return names;
}

std::unique_ptr<Strategy> make_strategy(const Measurement& measurement) {
  const std::string name = strategy_name(measurement);
  const Entry entry = entry_of(name);
  Measurement effective = measurement;
  effective.strategy_options = options_of(name, entry, measurement);
  std::unique_ptr<Strategy> strategy = entry.factory(effective);
  if (!strategy)
    throw std::logic_error("disttune: strategy '" + name + "' factory returned nothing");
  return strategy;
}

std::map<std::string, std::string> effective_strategy_options(const Measurement& measurement) {
  const std::string name = strategy_name(measurement);
  return options_of(name, entry_of(name), measurement);
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
