// Binds FunctionTuner (the engine of a tuned function), its report and the canonical JSON helpers.
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "disttune/config.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/store.hpp"
#include "function_options.hpp"
#include "interrupt_guard.hpp"
#include "report/failure_line.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

/// Resolves one key; the Python callable `run(i)` runs candidate i, and `prepare(now, ahead)`,
/// if given, is TuningRequest::prepare (lists of indices in, a list of reasons out). The GIL is
/// released while the engine works and taken back for each run, each prepare and each Python
/// collective. A KeyboardInterrupt in a run or a prepare ends the call (see InterruptGuard).
/// `prepared(i)`, if given, is TuningRequest::prepared (None, or the seconds candidate i's
/// compile took); `compile_threads`, TuningRequest::compile_threads (the threads `prepare`
/// compiles on).
TuningReport resolve(FunctionTuner& tuner, std::string key, std::vector<std::string> candidates,
                     nb::callable run, bool verbose,
                     std::shared_ptr<Communicator> communicator, std::optional<nb::callable> prepare,
                     std::vector<std::string> pruned, std::optional<nb::callable> prepared,
                     std::size_t compile_threads) {
  TuningRequest request;
  request.compile_threads = compile_threads;
  request.key = std::move(key);
  request.candidates = std::move(candidates);
  request.pruned = std::move(pruned);
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
  if (prepared) {
    request.prepared = [&prepared, &guard](std::size_t index) {
      nb::gil_scoped_acquire gil;
      std::optional<double> seconds;
      guard.run([&] { seconds = nb::cast<std::optional<double>>((*prepared)(index)); });
      return seconds;
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

/// A candidate's outcome in one word, as records and tables write it.
std::string status_of(const CandidateResult& candidate) { return candidate_status(candidate); }

/// The agreed time in ms, or None when the candidate has none (failed, never run).
nb::object agreed_ms_of(const CandidateResult& candidate) {
  if (candidate.failed || !candidate.measured) return nb::none();
  return nb::float_(candidate.agreed_ms);
}

std::string candidate_repr(const CandidateResult& candidate) {
  std::string text = "CandidateResult(config=" + nb::cast<std::string>(nb::repr(nb::str(candidate.config.c_str()))) +
                     ", status='" + status_of(candidate) + "'";
  if (candidate.failed) {
    text += ", error=" + nb::cast<std::string>(nb::repr(nb::str(detail::failure_line(candidate.error).c_str())));
  } else if (candidate.measured) {
    text += ", agreed_ms=" + nb::cast<std::string>(nb::repr(agreed_ms_of(candidate))) +
            ", samples=" + std::to_string(candidate.samples.size());
  }
  return text + ")";
}

/// The report's candidates as data: one dict per candidate, in order.
nb::list report_rows(const TuningReport& report) {
  nb::object loads = nb::module_::import_("json").attr("loads");
  nb::list rows;
  for (std::size_t i = 0; i < report.candidates.size(); ++i) {
    const CandidateResult& c = report.candidates[i];
    nb::dict row;
    row["index"] = i;
    row["config"] = loads(c.config);
    row["status"] = status_of(c);
    row["chosen"] = i == report.best;
    row["agreed_ms"] = agreed_ms_of(c);
    row["noise"] = c.noise;
    row["samples"] = c.samples.size();
    row["within_noise"] = c.within_noise;
    row["error"] = c.failed ? nb::object(nb::str(detail::failure_line(c.error).c_str())) : nb::none();
    rows.append(row);
  }
  return rows;
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
      .def_ro("within_noise", &CandidateResult::within_noise)
      .def_prop_ro("status", &status_of, "'ok', 'dropped', 'failed' or 'skipped' (never run)")
      .def("__repr__", &candidate_repr);

  nb::class_<TuningReport>(module, "TuningReport",
                           "Where a choice came from ('tuned', 'memory', 'table' or the store that "
                           "answered: 'disk', 'redis', ...) and what was measured.")
      .def_prop_ro("source", &source_name,
                   "'tuned' (measured by this call), the word of the store of the chain that held "
                   "the record ('disk' for a directory, 'redis', a registered scheme's), 'table' (a "
                   "record an imported table wrote), 'memory' (the process's cache held the choice: "
                   "a call after the first of its key)")
      .def("from_memory",
           [](const TuningReport& report) {
             TuningReport copy = report;
             copy.source = TuningReport::Source::memory;
             return copy;
           },
           "The same report, its source 'memory': what a later call of the key sees.")
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
      .def_ro("pruned", &TuningReport::pruned,
              "Canonical JSON of the configs prune_fn removed for this key (never run).")
      .def_ro("prepared", &TuningReport::prepared,
              "How many candidates the precompile hook was asked to compile (speculation ahead "
              "included), to set against those measured; None without a hook, for a split "
              "tuning, or from an older record.")
      .def("rows", &report_rows,
           "The candidates as data: one dict per candidate, in order: index, config (the entry "
           "as JSON data), status ('ok', 'dropped', 'failed', 'skipped'), chosen, agreed_ms "
           "(None without a time), noise, samples (how many), within_noise, error (its first "
           "line, None unless failed).")
      .def("table", [](const TuningReport& report) { return format_table(report); },
           "One row per candidate, the choice marked, and where it came from.");

  nb::class_<FunctionTuner>(
      module, "FunctionTuner",
      "The engine of one tuned function: disk lookup, rank agreement, measurement, selection, "
      "record and log. One tuning at a time.")
      .def("__init__",
           [](FunctionTuner* self, std::string name, std::string digest, const nb::kwargs& options) {
             new (self) FunctionTuner(FunctionIdentity{std::move(name), std::move(digest)},
                                      function_tuner_options(options));
           },
           nb::arg("name"), nb::arg("digest"), nb::arg("options"),
           "The tuner of function `name` (source digest `digest`); its keyword options are those "
           "of function_option_names, with function_defaults' defaults. An unknown option is "
           "InvalidSetting naming it.")
      .def_prop_ro("name", [](const FunctionTuner& tuner) { return tuner.identity().name; })
      .def_prop_ro("digest", [](const FunctionTuner& tuner) { return tuner.identity().digest; })
      .def_prop_ro("split_across_ranks",
                   [](const FunctionTuner& tuner) { return tuner.options().split_across_ranks; })
      .def("resolve", &resolve, nb::arg("key"), nb::arg("candidates"), nb::arg("run"),
           nb::arg("verbose") = false, nb::arg("communicator").none() = nb::none(),
           nb::arg("prepare").none() = nb::none(), nb::arg("pruned") = std::vector<std::string>{},
           nb::arg("prepared").none() = nb::none(), nb::arg("compile_threads") = kDefaultCompileThreads,
           "The best candidate for `key` (canonical text) among `candidates` (canonical JSON "
           "texts, in order), from the disk store or by tuning; run(i) runs candidate i once. "
           "prepare(now, ahead), if given, readies the candidates in `now` before their runs and "
           "returns one text per entry (empty: ready, else why it cannot run, which fails it); "
           "it may start `ahead` in the background. `pruned`: the configs prune_fn removed "
           "(canonical JSON), named in the report and the record. prepared(i), if given, says "
           "without waiting whether candidate i is compiled: None, or the seconds its compile "
           "took; the search learns compile costs from it. compile_threads: how many candidates "
           "prepare compiles at once (its pool's threads); the search shapes its rounds by it.")
      .def_prop_ro("directory_root", &FunctionTuner::directory_root,
                   "The root of the first directory store of this function's stores, or None.")
      .def("stored_records", &FunctionTuner::stored_records, nb::arg("most"),
           nb::call_guard<nb::gil_scoped_release>(),
           "What the stores know of this function on this device: the valid records of its "
           "keys (same source digest, same device), at most `most`, the directory's first; "
           "[] with disk_cache off.");
  module.def("split_share", &split_share, nb::arg("count"), nb::arg("rank"), nb::arg("ranks"),
             "The candidate indices rank `rank` of `ranks` measures in a rank-split tuning.");
}

}  // namespace disttune::python
