// FunctionTuner's keyword options from Python: the table, and TunerOptions made from it.
#include "function_options.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "disttune/config.hpp"
#include "disttune/error.hpp"
#include "disttune/settings.hpp"
#include "disttune/timer.hpp"
#include "facts_timer.hpp"
#include "python_timer.hpp"
#include "setting_values.hpp"

namespace nb = nanobind;

namespace disttune::python {

/// The options as the keywords set them, before they become TunerOptions (the timer and its
/// facts are put together at the end).
struct FunctionSettings {
  TunerOptions options;
  std::shared_ptr<Timer> timer;
  std::string hardware_json;
  std::string deps_json;
};

namespace {

/// Adds one of the strategy's named parameters; given twice (as a keyword and in
/// strategy_options) is InvalidSetting naming both.
void add_strategy_option(Measurement& measurement, const std::string& name, std::string text) {
  if (!measurement.strategy_options.emplace(name, std::move(text)).second) {
    throw InvalidSetting("disttune: " + name + "= and strategy_options['" + name +
                         "'] are both given; give one");
  }
}

/// A keyword that fills the strategy's named parameter of the same name (None: not given,
/// the strategy's default). The strategy refuses it if it does not declare it.
void apply_strategy_parameter(FunctionSettings& s, nb::handle value, const char* name) {
  if (value.is_none()) return;
  if (PyBool_Check(value.ptr()) || !(PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr()))) {
    throw InvalidSetting("disttune: " + std::string(name) + " must be a number or None, got " +
                         nb::cast<std::string>(nb::repr(value)));
  }
  add_strategy_option(s.options.measurement, name, nb::cast<std::string>(nb::repr(value)));
}

const FunctionOption kFunctionOptions[] = {
    {"warmup_runs", []() -> nb::object { return nb::int_(Measurement{}.warmup_runs); },
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.options.measurement.warmup_runs = run_count(value_of<nb::int_>(value, name, "an int"), name, 0);
     }},
    {"timed_runs", []() -> nb::object { return nb::int_(Measurement{}.timed_runs); },
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.options.measurement.timed_runs = run_count(value_of<nb::int_>(value, name, "an int"), name, 1);
     }},
    {"statistic", []() -> nb::object { return nb::str(to_string(Measurement{}.statistic).c_str()); },
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.options.measurement.statistic = parse_statistic(value_of<std::string>(value, name, "a str"));
     }},
    // None: TRITON_DIST_AUTOTUNE_STRATEGY (left to the engine, which checks the name), else
    // the spec's strategy (the C++ default, converge, is asked for by name from Python).
    {"strategy", none_default,
     [](FunctionSettings& s, nb::handle value, const char* name) {
       if (auto strategy = optional_of<std::string>(value, name, "a str or None")) {
         s.options.measurement.strategy = std::move(*strategy);
       } else if (!strategy_setting()) {
         s.options.measurement.strategy = std::string(kSpecStrategy);
       }
     }},
    // Canonical JSON of the baseline entry; None: none.
    {"baseline", none_default,
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.options.measurement.baseline = optional_of<std::string>(value, name, "a str or None").value_or("");
     }},
    {"strategy_options", none_default,
     [](FunctionSettings& s, nb::handle value, const char* name) {
       using Texts = std::map<std::string, std::string>;
       for (auto& [option, text] : optional_of<Texts>(value, name, "a dict of str to str or None").value_or(Texts{})) {
         add_strategy_option(s.options.measurement, option, std::move(text));
       }
     }},
    // The converge strategy's parameters (docs/strategies.md), as keywords.
    {"max_noise", none_default, apply_strategy_parameter},
    {"min_time_ms", none_default, apply_strategy_parameter},
    {"budget_ms", none_default, apply_strategy_parameter},
    // None: CpuTimer.
    {"timer", none_default,
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.timer = optional_of<std::shared_ptr<Timer>>(value, name, "a disttune._core.Timer or None")
                     .value_or(nullptr);
     }},
    // The device and software facts the record keeps (JSON objects).
    {"hardware_json", []() -> nb::object { return nb::str("{}"); },
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.hardware_json = value_of<std::string>(value, name, "a str");
     }},
    {"deps_json", []() -> nb::object { return nb::str("{}"); },
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.deps_json = value_of<std::string>(value, name, "a str");
     }},
    // None: one process.
    {"communicator", none_default,
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.options.communicator =
           optional_of<std::shared_ptr<Communicator>>(value, name, "a disttune._core.Communicator or None")
               .value_or(nullptr);
     }},
    // None: TRITON_DIST_AUTOTUNE_TIMEOUT, else 600.
    {"collective_timeout_s", none_default,
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.options.collective_timeout =
           collective_timeout_from_seconds(optional_of<double>(value, name, "a number of seconds or None"));
     }},
    // None or "": TRITON_DIST_AUTOTUNE_CACHE_DIR, else DEFAULT_CACHE_ROOT.
    {"cache_dir", none_default,
     [](FunctionSettings& s, nb::handle value, const char*) { s.options.cache_root = cache_dir_from_python(value); }},
    {"disk_cache", []() -> nb::object { return nb::bool_(TunerOptions{}.disk_cache); },
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.options.disk_cache = value_of<bool>(value, name, "a bool");
     }},
    {"split_across_ranks", []() -> nb::object { return nb::bool_(TunerOptions{}.split_across_ranks); },
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.options.split_across_ranks = value_of<bool>(value, name, "a bool");
     }},
    // The chain of stores as URLs, first read first (store_chain.hpp); None: cache_dir and
    // redis_url when either is given, else the environment's chain.
    {"stores", none_default,
     [](FunctionSettings& s, nb::handle value, const char* name) {
       if (PyUnicode_Check(value.ptr())) {  // a sequence too, but one URL is no chain
         throw nb::type_error(("disttune: option stores must be a list of str or None, got " +
                               nb::cast<std::string>(nb::repr(value))).c_str());
       }
       s.options.stores = optional_of<std::vector<std::string>>(value, name, "a list of str or None");
     }},
    // The older spelling of the store every node shares, after cache_dir (TunerOptions::
    // shared_store); None: the environment's, "": none.
    {"redis_url", none_default,
     [](FunctionSettings& s, nb::handle value, const char* name) {
       s.options.shared_store = optional_of<std::string>(value, name, "a str or None");
     }},
    // key_distance(a, b) over key texts; None: default_key_distance.
    {"key_distance", none_default,
     [](FunctionSettings& s, nb::handle value, const char* name) {
       if (value.is_none()) return;
       // Called by the engine without the GIL: taken for each call.
       auto held = std::make_shared<nb::callable>(value_of<nb::callable>(value, name, "callable or None"));
       s.options.key_distance = [held](const std::string& a, const std::string& b) {
         nb::gil_scoped_acquire gil;
         return nb::cast<double>((*held)(a, b));
       };
     }},
};

/// The options the table's values make, with the timer and its facts put together.
TunerOptions finish(FunctionSettings s) {
  TunerOptions options = std::move(s.options);
  if (!s.timer) s.timer = std::make_shared<CpuTimer>();
  options.timer = std::make_shared<FactsTimer>(std::move(s.timer), parse_json_object(s.hardware_json, "hardware facts"),
                                               parse_json_object(s.deps_json, "dependency facts"));
  return options;
}

}  // namespace

std::span<const FunctionOption> function_options() { return kFunctionOptions; }

TunerOptions function_tuner_options(const nb::kwargs& given) {
  FunctionSettings settings;
  apply_keyword_options(function_options(), given, "FunctionTuner", settings);
  return finish(std::move(settings));
}

}  // namespace disttune::python
