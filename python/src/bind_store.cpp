// Binds the typed record (Record, RecordRead) and its one reader, for every Python reader
// of records: the command line, disttune.load_table, tools that inspect a cache; and the
// claims sweeps put on the stores' keys (KeyClaims).
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "disttune/error.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/store_chain.hpp"
#include "disttune/store.hpp"
#include "function_options.hpp"
#include "store/key_claims.hpp"
#include "store/store_schemes.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

// The claim boards of the chain of stores a FunctionTuner with `options` would use (none
// with disk_cache=False).
std::vector<std::unique_ptr<detail::ClaimBoard>> claim_boards(const TunerOptions& options) {
  if (!options.disk_cache) return {};
  return detail::claim_boards(store_chain_urls(options.stores, options.cache_root, options.shared_store));
}

}  // namespace

void bind_store(nb::module_& module) {
  nb::class_<Record>(module, "Record",
                     "One finished tuning as stored (schema 1), read-only: what every reader of "
                     "records uses instead of the raw JSON.")
      .def_prop_ro("function_name", [](const Record& r) { return r.id.function_name; })
      .def_prop_ro("function_digest", [](const Record& r) { return r.id.function_digest; })
      .def_prop_ro("hardware_digest", [](const Record& r) { return r.id.hardware_digest; })
      .def_prop_ro("key", [](const Record& r) { return r.id.key; }, "canonical key text")
      .def_prop_ro("file_id", [](const Record& r) { return r.id.file_id(); },
                   "the record's file name without '.json'")
      .def_prop_ro("hardware_json", [](const Record& r) { return canonical_json(r.hardware); })
      .def_prop_ro("deps_json", [](const Record& r) { return canonical_json(r.deps); })
      .def_prop_ro("warmup_runs", [](const Record& r) { return r.measurement.warmup_runs; })
      .def_prop_ro("timed_runs", [](const Record& r) { return r.measurement.timed_runs; })
      .def_prop_ro("statistic", [](const Record& r) { return to_string(r.measurement.statistic); })
      .def_prop_ro("strategy", [](const Record& r) { return r.measurement.strategy; })
      .def_ro("flush_l2", &Record::flush_l2)
      .def_ro("timer", &Record::timer)
      .def_ro("candidates", &Record::candidates, "CandidateResult per config, in order")
      .def_ro("best_index", &Record::best_index)
      .def_prop_ro("best_config", [](const Record& r) { return r.candidates.at(r.best_index).config; },
                   "canonical JSON of the chosen config")
      .def_ro("ranks", &Record::ranks)
      .def_ro("split_ranks", &Record::split_ranks)
      .def_ro("created_utc", &Record::created_utc)
      .def_ro("library_version", &Record::library_version)
      .def("to_json", [](const Record& r) { return record_to_json(r).dump(); },
           "the record's JSON text, as the stores write it");
  nb::class_<RecordRead>(module, "RecordRead", "A record, or why the bytes are not one.")
      .def_ro("record", &RecordRead::record, "the Record, or None")
      .def_ro("error", &RecordRead::error, "why it is unusable ('' when record is set)");
  module.def("candidate_status", &candidate_status, nb::arg("candidate"),
             "'ok', 'dropped', 'failed' or 'skipped', as a record stores it.");
  module.def(
      "read_record", [](const std::filesystem::path& path) { return disttune::read_record(path); },
      nb::arg("path"),
      "The record file at `path` as a RecordRead: read-only, never follows a symbolic link, "
      "never moves a bad file; checks the file's name and directory against the record.");
  module.def(
      "parse_record", [](const nb::bytes& bytes) {
        return disttune::parse_record(std::string_view(bytes.c_str(), bytes.size()));
      },
      nb::arg("data"), "Record bytes (from any store) through the engine's one reader: a RecordRead.");
  nb::class_<detail::KeyClaims>(
      module, "KeyClaims",
      "Claims on keys in the stores a FunctionTuner with the same keyword options uses (its "
      "chain of stores), so that sweeps sharing them split the keys. A "
      "claim lasts lease_s seconds and is renewed by a thread until released; a dead "
      "holder's claims expire and are taken over.")
      .def(
          "__init__",
          [](detail::KeyClaims* self, double lease_s, const nb::kwargs& options) {
            if (!std::isfinite(lease_s) || lease_s < 0.003 || lease_s > 86400.0) {
              throw InvalidSetting(
                  "disttune: a claim's lease_s must be from 0.003 to 86400 seconds");
            }
            const auto lease = std::chrono::milliseconds(std::llround(lease_s * 1000.0));
            new (self) detail::KeyClaims(claim_boards(function_tuner_options(options)), lease);
          },
          nb::arg("lease_s"), nb::arg("options"))
      .def("claim", &detail::KeyClaims::claim, nb::arg("name"),
           nb::call_guard<nb::gil_scoped_release>(),
           "Whether this process holds `name` now (claimed, or held already); False while "
           "another holder's live claim has it.")
      .def("release", &detail::KeyClaims::release, nb::arg("name"),
           nb::call_guard<nb::gil_scoped_release>(), "Gives `name` up (nothing if not held).")
      .def_prop_ro("holder", &detail::KeyClaims::holder, "this process's name on the boards");
}

}  // namespace disttune::python
