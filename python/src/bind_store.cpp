// Binds the disk store's records for the command line: read a record file read-only,
// validate record JSON with the engine's reader, store a record atomically, show one.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/store.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

// The record in `text` through the engine's one record reader (parse_record: size and depth
// limits, then record_from_json); ValueError naming the problem.
Record record_from_text(const std::string& text) {
  RecordRead read = parse_record(text);
  if (!read.record) throw nb::value_error(read.error.c_str());
  return std::move(*read.record);
}

}  // namespace

void bind_store(nb::module_& module) {
  module.def(
      "read_record",
      [](const std::string& path) -> std::pair<std::optional<std::string>, std::string> {
        const RecordRead read = disttune::read_record(path);
        if (!read.record) return {std::nullopt, read.error};
        return {record_to_json(*read.record).dump(), ""};
      },
      nb::arg("path"),
      "(record JSON text, '') for a valid record file, else (None, why it is bad). Read-only: "
      "never follows a symbolic link, never moves a bad file; checks the file's name and "
      "directory against the record's identity.");
  module.def(
      "validate_record",
      [](const std::string& text) -> std::pair<std::string, std::string> {
        const Record record = record_from_text(text);
        return {record_to_json(record).dump(), record.id.file_id()};
      },
      nb::arg("text"),
      "(the record's JSON as the engine writes it, its file id) for record JSON text checked "
      "by the engine's record reader; ValueError naming the first bad field.");
  module.def(
      "store_record",
      [](const std::string& root, const std::string& text) {
        const Record record = record_from_text(text);
        const std::optional<std::filesystem::path> path = DiskStore(root).save(record);
        if (!path) {
          throw std::runtime_error("cannot write the record of '" + record.id.function_name +
                                   "' under " + root + " (see the warning above)");
        }
        return path->string();
      },
      nb::arg("root"), nb::arg("text"),
      "Writes a validated record under `root` atomically (the replaced record is kept as "
      "<id>.json.<UTC>) and returns its path.");
  module.def(
      "record_path",
      [](const std::string& root, const std::string& text) {
        return DiskStore(root).record_path(record_from_text(text).id).string();
      },
      nb::arg("root"), nb::arg("text"), "Where the record in `text` lives under `root`.");
  module.def(
      "format_record",
      [](const std::string& text, const std::string& path) {
        const Record record = record_from_text(text);
        TuningReport report;
        report.source = TuningReport::Source::disk;
        report.function = record.id.function_name;
        report.key = record.id.key;
        report.candidates = record.candidates;
        report.best = record.best_index;
        report.record_path = path;
        return format_table(report);
      },
      nb::arg("text"), nb::arg("path"),
      "The record's candidates as the engine's table (what `disttune show` prints first).");
}

}  // namespace disttune::python
