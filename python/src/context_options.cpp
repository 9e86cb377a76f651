// ContextualAutotuner's keyword options from Python: the table, and ContextOptions made from it.
#include "context_options.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "disttune/communicator.hpp"
#include "disttune/timer.hpp"
#include "setting_values.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

const ContextOption kContextOptions[] = {
    {"is_dist", []() -> nb::object { return nb::bool_(ContextOptions{}.is_dist); },
     [](ContextOptions& o, nb::handle value, const char* name) {
       o.is_dist = value_of<bool>(value, name, "a bool");
     }},
    {"n_warmup", []() -> nb::object { return nb::int_(ContextOptions{}.n_warmup); },
     [](ContextOptions& o, nb::handle value, const char* name) {
       o.n_warmup = run_count(value_of<nb::int_>(value, name, "an int"), name, 0);
     }},
    {"n_repeat", []() -> nb::object { return nb::int_(ContextOptions{}.n_repeat); },
     [](ContextOptions& o, nb::handle value, const char* name) {
       o.n_repeat = run_count(value_of<nb::int_>(value, name, "an int"), name, 1);
     }},
    {"statistic",
     []() -> nb::object { return nb::str(to_string(ContextOptions{}.statistic).c_str()); },
     [](ContextOptions& o, nb::handle value, const char* name) {
       o.statistic = parse_statistic(value_of<std::string>(value, name, "a str"));
     }},
    // A registered strategy's name (the engine checks it).
    {"strategy", []() -> nb::object { return nb::str(ContextOptions{}.strategy.c_str()); },
     [](ContextOptions& o, nb::handle value, const char* name) {
       o.strategy = value_of<std::string>(value, name, "a str");
     }},
    // The strategy's named parameters as texts; None: none.
    {"strategy_options", none_default,
     [](ContextOptions& o, nb::handle value, const char* name) {
       using Texts = std::map<std::string, std::string>;
       o.strategy_options =
           optional_of<Texts>(value, name, "a dict of str to str or None").value_or(Texts{});
     }},
    // None: CpuTimer.
    {"timer", none_default,
     [](ContextOptions& o, nb::handle value, const char* name) {
       o.timer = optional_of<std::shared_ptr<Timer>>(value, name, "a disttune._core.Timer or None")
                     .value_or(nullptr);
     }},
    // None: one process (required when is_dist).
    {"communicator", none_default,
     [](ContextOptions& o, nb::handle value, const char* name) {
       o.communicator = optional_of<std::shared_ptr<Communicator>>(
                            value, name, "a disttune._core.Communicator or None")
                            .value_or(nullptr);
     }},
    // None: TRITON_DIST_AUTOTUNE_TIMEOUT, else 600.
    {"collective_timeout_s", none_default,
     [](ContextOptions& o, nb::handle value, const char* name) {
       o.collective_timeout = collective_timeout_from_seconds(
           optional_of<double>(value, name, "a number of seconds or None"));
     }},
    // None or "": ContextOptions{}.log_dir (.autotune_logs).
    {"log_dir", none_default,
     [](ContextOptions& o, nb::handle value, const char* name) {
       if (auto directory = directory_setting(value, name)) o.log_dir = std::move(*directory);
     }},
    {"split_across_ranks",
     []() -> nb::object { return nb::bool_(ContextOptions{}.split_across_ranks); },
     [](ContextOptions& o, nb::handle value, const char* name) {
       o.split_across_ranks = value_of<bool>(value, name, "a bool");
     }},
    // None: the process's compile pool (TRITON_DIST_AUTOTUNE_COMPILE_THREADS); the Python
    // front end compiles on a pool of that many threads of the call's own when given. The
    // engine refuses 0 (ContextualAutotuner's constructor).
    {"compile_threads", none_default,
     [](ContextOptions& o, nb::handle value, const char* name) {
       o.compile_threads = optional_of<std::size_t>(value, name, "None or an int >= 1");
     }},
};

}  // namespace

std::span<const ContextOption> context_options() {
  return kContextOptions;
}

ContextOptions contextual_tuner_options(const nb::kwargs& given) {
  ContextOptions options;
  apply_keyword_options(context_options(), given, "ContextualAutotuner", options);
  return options;
}

}  // namespace disttune::python
