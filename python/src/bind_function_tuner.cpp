// Binds FunctionTuner (the engine of a tuned function), its report and the canonical JSON helpers.
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "disttune/config.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/settings.hpp"
#include "disttune/store.hpp"
#include "facts_timer.hpp"
#include "interrupt_guard.hpp"
#include "python_timer.hpp"
#include "setting_values.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

/// The engine's options from the Python keyword arguments.
TunerOptions make_options(
    const nb::int_& warmup_runs, const nb::int_& timed_runs,
    const std::string& statistic, std::optional<std::string> strategy, std::string baseline,
    double budget_ms, double max_noise, double min_time_ms,
    std::map<std::string, std::string> strategy_options, std::shared_ptr<Timer> timer,
    const std::string& hardware_json, const std::string& deps_json,
    std::shared_ptr<Communicator> communicator, std::optional<double> collective_timeout_s,
    nb::handle cache_dir, bool disk_cache, bool split_across_ranks,
    std::optional<std::string> redis_url, std::optional<std::string> redis_prefix,
    std::optional<double> redis_timeout_s, std::optional<nb::callable> key_distance) {
  TunerOptions options;
  options.measurement.warmup_runs = run_count(warmup_runs, "warmup_runs", 0);
  options.measurement.timed_runs = run_count(timed_runs, "timed_runs", 1);
  options.measurement.statistic = parse_statistic(statistic);
  // None: TRITON_DIST_AUTOTUNE_STRATEGY (left to the engine, which checks the name), else the
  // spec's strategy (the C++ default, converge, is asked for by name from Python).
  if (strategy) {
    options.measurement.strategy = std::move(*strategy);
  } else if (!strategy_setting()) {
    options.measurement.strategy = std::string(kSpecStrategy);
  }
  options.measurement.baseline = std::move(baseline);
  options.measurement.budget_ms = budget_ms;
  options.measurement.max_noise = max_noise;
  options.measurement.min_time_ms = min_time_ms;
  options.measurement.strategy_options = std::move(strategy_options);
  if (!timer) timer = std::make_shared<CpuTimer>();
  options.timer = std::make_shared<FactsTimer>(std::move(timer),
                                               parse_json_object(hardware_json, "hardware facts"),
                                               parse_json_object(deps_json, "dependency facts"));
  options.communicator = std::move(communicator);
  options.collective_timeout = collective_timeout_from_seconds(collective_timeout_s);
  options.cache_root = cache_dir_from_python(cache_dir);
  options.disk_cache = disk_cache;
  options.split_across_ranks = split_across_ranks;
  if (key_distance) {
    // Called by the engine without the GIL: taken for each call.
    auto held = std::make_shared<nb::callable>(std::move(*key_distance));
    options.key_distance = [held](const std::string& a, const std::string& b) {
      nb::gil_scoped_acquire gil;
      return nb::cast<double>((*held)(a, b));
    };
  }
  if (redis_url || redis_prefix || redis_timeout_s) {
    // What is given replaces the environment's setting; the rest comes from it.
    options.redis = redis_options_from_environment();
    if (redis_url) options.redis->url = std::move(*redis_url);
    if (redis_prefix) options.redis->prefix = std::move(*redis_prefix);
    if (redis_timeout_s) {
      if (!std::isfinite(*redis_timeout_s) || *redis_timeout_s < 0.001 || *redis_timeout_s > 86400.0) {
        throw InvalidSetting("disttune: redis_timeout_s must be from 0.001 to 86400 seconds");
      }
      options.redis->timeout = std::chrono::milliseconds(std::llround(*redis_timeout_s * 1000.0));
    }
  }
  return options;
}

/// Resolves one key; the Python callable `run(i)` runs candidate i, and `prepare(now, ahead)`,
/// if given, is TuningRequest::prepare (lists of indices in, a list of reasons out). The GIL is
/// released while the engine works and taken back for each run, each prepare and each Python
/// collective. A KeyboardInterrupt in a run or a prepare ends the call (see InterruptGuard).
TuningReport resolve(FunctionTuner& tuner, std::string key, std::vector<std::string> candidates,
                     nb::callable run, bool verbose,
                     std::shared_ptr<Communicator> communicator, std::optional<nb::callable> prepare) {
  TuningRequest request;
  request.key = std::move(key);
  request.candidates = std::move(candidates);
  InterruptGuard guard;
  request.run = [&run, &guard](std::size_t index) {
    nb::gil_scoped_acquire gil;
    guard.run([&] { run(index); });
  };
  if (prepare) {
    request.prepare = [&prepare, &guard](std::span<const std::size_t> now, std::span<const std::size_t> ahead) {
      nb::gil_scoped_acquire gil;
      std::vector<std::string> reasons;
      guard.run([&] {
        reasons = nb::cast<std::vector<std::string>>((*prepare)(std::vector<std::size_t>(now.begin(), now.end()),
                                                                std::vector<std::size_t>(ahead.begin(), ahead.end())));
      });
      return reasons;
    };
  }
  request.verbose = verbose;
  request.communicator = communicator.get();
  // An interrupted tuning is no result: it is not stored.
  request.cancelled = [&guard] { return guard.interrupted(); };
  nb::gil_scoped_release released;
  TuningReport report;
  try {
    report = tuner.resolve(request);
  } catch (...) {
    guard.rethrow();
    throw;
  }
  guard.rethrow();
  return report;
}

std::string canonical_json_text(const std::string& text) {
  Value value = Value::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) throw std::invalid_argument("disttune: not JSON: " + text);
  return canonical_json(value);
}

}  // namespace

void bind_function_tuner(nb::module_& module) {
  module.def("canonical_json", &canonical_json_text, nb::arg("text"),
             "The engine's canonical text of a JSON text (compact, map keys sorted, floats in "
             "shortest round-trip form). ValueError if it is not JSON or holds a non-finite float.");
  module.def("sha256_hex", [](nb::bytes data) { return sha256_hex({data.c_str(), data.size()}); },
             nb::arg("data"), "Lower-case hex SHA-256 of bytes.");
  module.def("default_cache_root", []() { return default_cache_root(); },
             "The disk store root: TRITON_DIST_AUTOTUNE_CACHE_DIR, else DEFAULT_CACHE_ROOT under "
             "the user's home.");

  nb::class_<CandidateResult>(module, "CandidateResult",
                              "One candidate's measurement on this rank and the agreed outcome.")
      .def_ro("config", &CandidateResult::config)
      .def_ro("failed", &CandidateResult::failed)
      .def_ro("error", &CandidateResult::error)
      .def_ro("samples", &CandidateResult::samples)
      .def_ro("local_ms", &CandidateResult::local_ms)
      .def_ro("agreed_ms", &CandidateResult::agreed_ms)
      .def_ro("measured", &CandidateResult::measured)
      .def_ro("dropped", &CandidateResult::dropped)
      .def_ro("noise", &CandidateResult::noise)
      .def_ro("within_noise", &CandidateResult::within_noise);

  nb::class_<TuningReport>(module, "TuningReport",
                           "Where a choice came from ('tuned', 'disk' or 'redis') and what was measured.")
      .def_prop_ro("source",
                   [](const TuningReport& report) {
                     switch (report.source) {
                       case TuningReport::Source::disk: return "disk";
                       case TuningReport::Source::redis: return "redis";
                       case TuningReport::Source::tuned: break;
                     }
                     return "tuned";
                   })
      .def_ro("function", &TuningReport::function)
      .def_ro("key", &TuningReport::key)
      .def_ro("candidates", &TuningReport::candidates)
      .def_ro("best", &TuningReport::best)
      .def_ro("timer", &TuningReport::timer, "the timer that measured (its name); from disk: the record's")
      .def_ro("record_path", &TuningReport::record_path)
      .def_ro("log_path", &TuningReport::log_path)
      .def_ro("split_ranks", &TuningReport::split_ranks,
              "0, or how many ranks the tuning was split across (each measured its share).")
      .def_ro("warm_start_from", &TuningReport::warm_start_from,
              "The neighbouring keys whose records warm-started the tuning, nearest first; "
              "empty when it was tuned in full.")
      .def("table", [](const TuningReport& report) { return format_table(report); },
           "One row per candidate, the choice marked, and where it came from.");

  nb::class_<FunctionTuner>(
      module, "FunctionTuner",
      "The engine of one tuned function: disk lookup, rank agreement, measurement, selection, "
      "record and log. One tuning at a time.")
      .def("__init__",
           [](FunctionTuner* self, std::string name, std::string digest, const nb::int_& warmup_runs,
              const nb::int_& timed_runs, const std::string& statistic,
              std::optional<std::string> strategy, std::string baseline, double budget_ms,
              double max_noise, double min_time_ms, std::map<std::string, std::string> strategy_options,
              std::shared_ptr<Timer> timer, const std::string& hardware_json,
              const std::string& deps_json, std::shared_ptr<Communicator> communicator,
              std::optional<double> collective_timeout_s,
              nb::object cache_dir, bool disk_cache,
              bool split_across_ranks, std::optional<std::string> redis_url,
              std::optional<std::string> redis_prefix, std::optional<double> redis_timeout_s,
              std::optional<nb::callable> key_distance) {
             new (self) FunctionTuner(
                 FunctionIdentity{std::move(name), std::move(digest)},
                 make_options(warmup_runs, timed_runs, statistic, std::move(strategy),
                              std::move(baseline), budget_ms, max_noise, min_time_ms,
                              std::move(strategy_options), std::move(timer), hardware_json, deps_json,
                              std::move(communicator), collective_timeout_s, cache_dir, disk_cache,
                              split_across_ranks, std::move(redis_url), std::move(redis_prefix),
                              redis_timeout_s, std::move(key_distance)));
           },
           nb::arg("name"), nb::arg("digest"), nb::kw_only(),
           nb::arg("warmup_runs") = nb::int_(Measurement{}.warmup_runs),
           nb::arg("timed_runs") = nb::int_(Measurement{}.timed_runs),
           nb::arg("statistic") = to_string(Measurement{}.statistic),
           nb::arg("strategy").none() = nb::none(), nb::arg("baseline") = Measurement{}.baseline,
           nb::arg("budget_ms") = Measurement{}.budget_ms,
           nb::arg("max_noise") = Measurement{}.max_noise,
           nb::arg("min_time_ms") = Measurement{}.min_time_ms,
           nb::arg("strategy_options") = std::map<std::string, std::string>{},
           nb::arg("timer").none() = nb::none(), nb::arg("hardware_json") = "{}",
           nb::arg("deps_json") = "{}", nb::arg("communicator").none() = nb::none(),
           nb::arg("collective_timeout_s").none() = nb::none(),
           nb::arg("cache_dir").none() = nb::none(), nb::arg("disk_cache") = true,
           nb::arg("split_across_ranks") = false,
           nb::arg("redis_url").none() = nb::none(), nb::arg("redis_prefix").none() = nb::none(),
           nb::arg("redis_timeout_s").none() = nb::none(),
           nb::arg("key_distance").none() = nb::none())
      .def_prop_ro("name", [](const FunctionTuner& tuner) { return tuner.identity().name; })
      .def_prop_ro("digest", [](const FunctionTuner& tuner) { return tuner.identity().digest; })
      .def_prop_ro("split_across_ranks",
                   [](const FunctionTuner& tuner) { return tuner.options().split_across_ranks; })
      .def("resolve", &resolve, nb::arg("key"), nb::arg("candidates"), nb::arg("run"),
           nb::arg("verbose") = false, nb::arg("communicator").none() = nb::none(),
           nb::arg("prepare").none() = nb::none(),
           "The best candidate for `key` (canonical text) among `candidates` (canonical JSON "
           "texts, in order), from the disk store or by tuning; run(i) runs candidate i once. "
           "prepare(now, ahead), if given, readies the candidates in `now` before their runs and "
           "returns one text per entry (empty: ready, else why it cannot run, which fails it); "
           "it may start `ahead` in the background.");
  module.def("split_share", &split_share, nb::arg("count"), nb::arg("rank"), nb::arg("ranks"),
             "The candidate indices rank `rank` of `ranks` measures in a rank-split tuning.");
}

}  // namespace disttune::python
