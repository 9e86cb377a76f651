// Binds the typed record (Record, RecordRead) and its one reader, for every Python reader
// of records: the command line, disttune.load_table, tools that inspect a cache.
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <string>

#include "bindings.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/store.hpp"

namespace nb = nanobind;

namespace disttune::python {

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
}

}  // namespace disttune::python
