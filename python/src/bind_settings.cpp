// Binds the settings: the environment variables (read by the engine's rules) and both tuners' defaults.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <limits>
#include <string>

#include "bindings.hpp"
#include "disttune/context.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/settings.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

/// The defaults of a function-level tuner (TunerOptions{}), by the Python names.
nb::dict function_defaults() {
  const TunerOptions options{};
  nb::dict defaults;
  defaults["warmup_runs"] = options.measurement.warmup_runs;
  defaults["timed_runs"] = options.measurement.timed_runs;
  defaults["statistic"] = to_string(options.measurement.statistic);
  defaults["strategy"] = nb::none();  // TRITON_DIST_AUTOTUNE_STRATEGY, else kSpecStrategy
  defaults["baseline"] = nb::none();  // no baseline entry
  defaults["budget_ms"] = options.measurement.budget_ms;
  defaults["max_noise"] = options.measurement.max_noise;
  defaults["min_time_ms"] = options.measurement.min_time_ms;
  defaults["collective_timeout_s"] = nb::none();  // TRITON_DIST_AUTOTUNE_TIMEOUT, else 600
  defaults["cache_dir"] = nb::none();  // TRITON_DIST_AUTOTUNE_CACHE_DIR, else DEFAULT_CACHE_ROOT
  defaults["disk_cache"] = options.disk_cache;
  return defaults;
}

/// The defaults of a contextual tuner (ContextOptions{}), by the spec's names.
nb::dict contextual_defaults() {
  const ContextOptions options{};
  nb::dict defaults;
  defaults["is_dist"] = options.is_dist;
  defaults["n_repeat"] = options.n_repeat;
  defaults["n_warmup"] = options.n_warmup;
  defaults["statistic"] = to_string(options.statistic);
  defaults["collective_timeout_s"] = nb::none();
  defaults["log_dir"] = options.log_dir.string();
  return defaults;
}

double seconds_of(std::chrono::milliseconds timeout) {
  if (timeout == kNoDeadline) return std::numeric_limits<double>::infinity();
  return std::chrono::duration<double>(timeout).count();
}

}  // namespace

void bind_settings(nb::module_& module) {
  module.attr("function_defaults") = function_defaults();
  module.attr("contextual_defaults") = contextual_defaults();
  module.attr("DEFAULT_CACHE_ROOT") = std::string(kDefaultCacheRoot);
  module.def(
      "environment_settings",
      []() {
        nb::list settings;
        for (const EnvironmentSetting& setting : environment_settings()) {
          settings.append(nb::make_tuple(std::string(setting.name), std::string(setting.accepts),
                                         std::string(setting.when_unset)));
        }
        return settings;
      },
      "Every environment variable disttune reads, as (name, accepted values, when unset).");
  module.def("collective_timeout_setting_s",
             []() { return seconds_of(collective_timeout_setting()); },
             "TRITON_DIST_AUTOTUNE_TIMEOUT in seconds (inf for no deadline; 600 when unset); "
             "InvalidSetting for a bad value.");
  module.def("triton_dropin_setting", &triton_dropin_setting,
             "TRITON_DIST_AUTOTUNE_TRITON_DROPIN (off when unset); InvalidSetting for a bad value.");
  module.def("strategy_setting", &strategy_setting,
             "TRITON_DIST_AUTOTUNE_STRATEGY, or None when unset.");
  module.def("collective_timeout_s", [](double seconds) {
    return seconds_of(timeout_from_seconds(seconds, "collective_timeout_s"));
  }, nb::arg("seconds"),
  "`seconds` as the engine keeps a collective timeout (rounded to ms; inf: no deadline); "
  "InvalidSetting under 0.001 s.");
}

}  // namespace disttune::python
