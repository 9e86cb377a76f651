// make_table / read_table / import_table: the one table format, read whole before writing.
#include "cli/record_table.hpp"

#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "cli/cli_error.hpp"
#include "cli/output_file.hpp"
#include "disttune/fingerprint.hpp"
#include "disttune/timer.hpp"
#include "record/bounded_json.hpp"
#include "report/readable_text.hpp"
#include "report/warning.hpp"
#include "store/regular_file.hpp"
#include "util/utc_time.hpp"

namespace disttune::cli {
namespace {

namespace fs = std::filesystem;

// A table nests a record under functions, name, key and hardware digest.
constexpr std::size_t kMaxTableDepth = kMaxRecordDepth + 4;

// The table file's bytes (a regular file of at most kMaxTableBytes); CliError otherwise.
std::string table_bytes(const fs::path& path) {
  try {
    return detail::read_regular_file(path, kMaxTableBytes, "import reads a table");
  } catch (const detail::UnreadableFile& error) {
    throw CliError(error.what());
  }
}

// The first time of 0 ms of a measured candidate ("candidates[i].samples_ms[j]", ...), or ""
// when none: a run takes time, and the reader refuses times below 0 already.
std::string time_of_zero(const Record& record) {
  for (std::size_t i = 0; i < record.candidates.size(); ++i) {
    const CandidateResult& candidate = record.candidates[i];
    if (!candidate.measured || candidate.failed) continue;
    const std::string where = "candidates[" + std::to_string(i) + "].";
    for (std::size_t j = 0; j < candidate.samples.size(); ++j) {
      if (candidate.samples[j] <= 0.0) return where + "samples_ms[" + std::to_string(j) + "]";
    }
    if (candidate.local_ms <= 0.0) return where + "local_ms";
    if (candidate.agreed_ms <= 0.0) return where + "agreed_ms";
  }
  return "";
}

Value parse_table(const std::string& bytes, const std::string& shown) {
  try {
    return detail::parse_bounded(bytes, kMaxTableDepth);
  } catch (const detail::TooDeep&) {
    throw CliError(shown + " is not a disttune table: it is not valid JSON: it nests deeper than " +
                   std::to_string(kMaxTableDepth) + " levels");
  } catch (const Value::exception& error) {
    throw CliError(shown + " is not a disttune table: it is not valid JSON: " + error.what());
  }
}

// 'text' for a string, the JSON otherwise, "missing" for null: a field's value in messages.
std::string quoted(const Value& value) {
  if (value.is_null()) return "missing";
  if (value.is_string()) {
    // Appended, not `"'" + text + "'"`: GCC 12 warns (-Wrestrict) on that expression here.
    std::string text(1, '\'');
    text.append(detail::readable_text(value.get<std::string>())).push_back('\'');
    return text;
  }
  return detail::readable_text(value.dump(-1, ' ', false, Value::error_handler_t::replace));
}

const Value& object_at(const Value& value, const std::string& where) {
  if (!value.is_object()) {
    throw CliError(where + " must be a JSON object, not " + std::string(value.type_name()));
  }
  return value;
}

// "key: 'here' here, 'there' in the table" for each key of `expected` that `actual` differs in.
std::string differences(const Value& expected, const Value& actual) {
  std::string text;
  for (const auto& [name, value] : expected.items()) {
    const Value theirs = actual.is_object() && actual.contains(name) ? actual.at(name) : Value();
    if (theirs == value) continue;
    if (!text.empty()) text += ", ";
    text += name + " " + quoted(theirs) + " (here " + quoted(value) + ")";
  }
  return text;
}

std::string record_line(const char* verb, const Record& record) {
  return std::string(verb) + record.id.function_name + "  key " + record.id.key;
}

}  // namespace

Value make_table(const std::vector<Record>& records) {
  Value functions = Value::object();
  Value devices = Value::object();
  Value software = Value::object();
  for (const Record& record : records) {
    functions[record.id.function_name][record.id.key][record.id.hardware_digest] =
        record_to_json(record);
    devices[record.id.hardware_digest] = record.hardware;
    software[digest(record.deps)] = record.deps;
  }
  return {{"schema", kTableSchema},
          {"schema_version", kTableSchemaVersion},
          {"library_version", library_version()},
          {"exported_utc", detail::utc_iso_now()},
          {"devices", devices},
          {"software", software},
          {"functions", functions}};
}

std::size_t export_table(const CacheListing& cache, const fs::path& path, std::ostream& skipped) {
  std::vector<Record> records;
  for (ListedRecord& listed : cache.records("")) {
    if (listed.read.record) {
      records.push_back(std::move(*listed.read.record));
    } else {
      skipped << "skipped BAD " << bad_record_line(listed) << '\n';
    }
  }
  write_output_file(path, make_table(records).dump(1) + "\n");
  return records.size();
}

std::vector<Record> read_table(const fs::path& path) {
  const std::string shown = detail::readable_text(path.string());
  const Value table = parse_table(table_bytes(path), shown);
  object_at(table, shown);
  const Value schema = table.value("schema", Value());
  if (schema != kTableSchema) {
    throw CliError(shown + " is not a disttune table: its schema is " + quoted(schema) +
                   ", expected '" + kTableSchema + "'");
  }
  const Value version = table.value("schema_version", Value());
  if (version != kTableSchemaVersion) {
    throw CliError(shown + ": table schema_version " + quoted(version) +
                   " is not supported (this disttune reads version " +
                   std::to_string(kTableSchemaVersion) + ")");
  }
  const DiskStore names("/");  // only for the store's name checks; nothing is written
  std::vector<Record> records;
  const Value functions = table.value("functions", Value());
  for (const auto& [function, keys] : object_at(functions, shown + ": 'functions'").items()) {
    const std::string where_function = shown + ": functions['" + detail::readable_text(function) + "']";
    try {
      names.function_dir(function);
    } catch (const std::invalid_argument& error) {
      throw CliError(where_function + ": " + detail::readable_text(error.what()));
    }
    for (const auto& [key, by_hardware] : object_at(keys, where_function).items()) {
      const std::string where_key = where_function + "['" + detail::readable_text(key) + "']";
      for (const auto& [hardware_digest, json] : object_at(by_hardware, where_key).items()) {
        const std::string where = where_key + "['" + detail::readable_text(hardware_digest) + "']";
        // The engine's one reader, as for a record of any store: limits, then validation.
        RecordRead read = parse_record(json.dump());
        if (!read.record) throw CliError(where + " is not a valid record: " + read.error);
        if (const std::string field = time_of_zero(*read.record); !field.empty()) {
          throw CliError(where + " is not a valid record: its " + field +
                         " is 0 ms; a table ships times measured");
        }
        const RecordId& id = read.record->id;
        if (id.function_name != function || id.key != key || id.hardware_digest != hardware_digest) {
          throw CliError(where + " is the record of function '" + id.function_name + "', key '" +
                         id.key + "', hardware '" + id.hardware_digest +
                         "': it is filed under another identity");
        }
        try {
          names.record_path(id);  // the name and key limits of the store that will hold it
        } catch (const std::invalid_argument& error) {
          throw CliError(where + ": " + detail::readable_text(error.what()));
        }
        records.push_back(std::move(*read.record));
      }
    }
  }
  return records;
}

TableExpectation host_expectation() {
  const Fingerprint host = make_fingerprint(CpuTimer());
  return {host.hardware, host.deps, table_mismatch_setting()};
}

std::vector<std::string> import_table(const CacheListing& cache, const fs::path& path, bool force,
                                      const TableExpectation& expected) {
  const std::vector<Record> records = read_table(path);  // all checked before any write
  std::vector<std::string> lines;
  std::set<std::string> warned;
  const auto warn_once = [&](const std::string& message) {
    if (warned.insert(message).second) detail::warn(message);
  };
  for (const Record& record : records) {
    const std::string software = differences(expected.software, record.deps);
    if (!software.empty()) {
      if (expected.policy == TableMismatch::retune) {
        lines.push_back(record_line("skip  ", record) + ": made with other software: " + software +
                        " (TRITON_DIST_AUTOTUNE_TABLE_MISMATCH=retune)");
        continue;
      }
      warn_once("table " + detail::readable_text(path.string()) + " holds records made with other software: " +
                software + "; using them (TRITON_DIST_AUTOTUNE_TABLE_MISMATCH=retune leaves them out)");
    }
    const std::string device = differences(expected.device, record.hardware);
    if (!device.empty()) {
      warn_once("table " + detail::readable_text(path.string()) + " holds records measured on another device: " +
                device + "; the engine finds records by device, so those keys are tuned here");
    }
    const fs::path target = cache.store().record_path(record.id);
    std::error_code missing;
    std::optional<std::string> existing;
    if (fs::symlink_status(target, missing).type() != fs::file_type::not_found) {
      const RecordRead stored = read_record(target);
      if (stored.record) existing = stored.record->created_utc;
    }
    if (existing && *existing > record.created_utc && !force) {
      lines.push_back(record_line("kept  ", record) + ": the record on disk (" + *existing +
                      ") is newer than the table's (" + record.created_utc + "); --force replaces it");
      continue;
    }
    if (existing && *existing == record.created_utc && !force) {
      lines.push_back(record_line("same  ", record) + ": already on disk");
      continue;
    }
    Record imported = record;
    imported.imported = TableImport{detail::utc_iso_now(), detail::readable_text(path.filename().string())};
    const std::optional<fs::path> written = cache.store().save(imported);
    if (!written) {
      throw CliError("cannot write the record of '" + record.id.function_name + "' under " +
                     detail::readable_text(cache.root().string()) + " (see the warning above)");
    }
    lines.push_back(record_line("wrote ", record) + ": " + detail::readable_text(written->string()));
  }
  return lines;
}

}  // namespace disttune::cli
