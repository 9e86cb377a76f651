// Binds the settings: the environment variables (read by the engine's rules) and both tuners' defaults.
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <limits>
#include <string>

#include "bindings.hpp"
#include "context_options.hpp"
#include "disttune/settings.hpp"
#include "function_options.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

double seconds_of(std::chrono::milliseconds timeout) {
  if (timeout == kNoDeadline) return std::numeric_limits<double>::infinity();
  return std::chrono::duration<double>(timeout).count();
}

}  // namespace

void bind_settings(nb::module_& module) {
  module.attr("function_defaults") = keyword_option_defaults(function_options());
  module.attr("function_option_names") = keyword_option_names(function_options());
  module.attr("contextual_defaults") = keyword_option_defaults(context_options());
  module.attr("contextual_option_names") = keyword_option_names(context_options());
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
  module.def("search_from_setting", &search_from_setting,
             "TRITON_DIST_AUTOTUNE_SEARCH_FROM (80 when unset); InvalidSetting for a bad value.");
  module.def("search_effort_setting", &search_effort_setting,
             "TRITON_DIST_AUTOTUNE_SEARCH_EFFORT in lower case, or None when unset; InvalidSetting for a "
             "bad value.");
  module.def("compile_threads_setting", &compile_threads_setting,
             "TRITON_DIST_AUTOTUNE_COMPILE_THREADS (the CPU cores, at most 32, when unset); "
             "InvalidSetting for a bad value.");
  module.def("timeline_setting", &timeline_setting,
             "TRITON_DIST_AUTOTUNE_TIMELINE as an absolute path, or None when unset.");
  module.def("strategy_setting", &strategy_setting,
             "TRITON_DIST_AUTOTUNE_STRATEGY, or None when unset.");
  module.def("collective_timeout_s", [](double seconds) {
    return seconds_of(timeout_from_seconds(seconds, "collective_timeout_s"));
  }, nb::arg("seconds"),
  "`seconds` as the engine keeps a collective timeout (rounded to ms; inf: no deadline); "
  "InvalidSetting under 0.001 s.");
}

}  // namespace disttune::python
