// Replay tables: parse and validate the recorded-space format, version checked, every problem
// named.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "disttune/config.hpp"
#include "disttune/replay.hpp"
#include "record/bounded_json.hpp"
#include "report/readable_text.hpp"
#include "store/regular_file.hpp"

namespace disttune {
namespace {

// The deepest nesting a table may hold: a config (kMaxValueDepth) inside
// table.entries[i].config. Refused while parsing, before any copy or print walks it.
constexpr std::size_t kMaxTableDepth = kMaxValueDepth + 3;
// The largest table read; a larger file is not a recorded space.
constexpr std::size_t kMaxTableBytes = std::size_t{256} << 20;

/// Reads one table, naming the file and the entry in every error.
class TableReader {
 public:
  explicit TableReader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void refuse(const std::string& where, const std::string& problem) const {
    throw BadReplayTable("disttune: replay table " + origin_ + ": " + where + " " + problem);
  }

  ReplayTable read(const std::string& text) const {
    Value json;
    try {
      json = detail::parse_bounded(text, kMaxTableDepth);
    } catch (const detail::TooDeep&) {
      refuse("nests", "deeper than " + std::to_string(kMaxTableDepth) + " levels");
    } catch (const Value::exception&) {
      refuse("is", "not JSON");
    }
    if (!json.is_object()) refuse("is", "not a JSON object");
    if (!json.contains("format") || json["format"] != kReplayTableFormat) {
      refuse("\"format\"", std::string("must be \"") + kReplayTableFormat + "\"");
    }
    if (!json.contains("version") || !json["version"].is_number_integer())
      refuse("\"version\"", "must be an integer");
    if (json["version"] != kReplayTableVersion) {
      refuse("\"version\"", json["version"].dump() +
                                " is not supported (this build reads version " +
                                std::to_string(kReplayTableVersion) + ")");
    }
    ReplayTable table;
    if (!json.contains("kernel") || !json["kernel"].is_string() ||
        json["kernel"].get<std::string>().empty()) {
      refuse("\"kernel\"", "must be a non-empty string");
    }
    table.kernel = detail::printable_line(json["kernel"].get<std::string>());
    Value description = Value::object();
    for (const char* field : {"problem", "device", "software", "method"}) {
      if (json.contains(field)) description[field] = json[field];
    }
    table.description = description.dump();
    try {
      table.problem = canonical_json(json.contains("problem") ? json["problem"] : Value::object());
    } catch (const std::exception& error) {
      refuse("\"problem\"", std::string("is not a key: ") + error.what());
    }
    if (!json.contains("entries") || !json["entries"].is_array() || json["entries"].empty()) {
      refuse("\"entries\"", "must be a non-empty array");
    }
    std::set<std::string> configs;
    for (std::size_t i = 0; i < json["entries"].size(); ++i) {
      table.entries.push_back(entry(json["entries"][i], "entry " + std::to_string(i)));
      if (!configs.insert(table.entries.back().config).second) {
        refuse("entry " + std::to_string(i), "repeats the config of an earlier entry");
      }
    }
    if (std::all_of(table.entries.begin(), table.entries.end(),
                    [](const ReplayEntry& e) { return e.failed; })) {
      refuse("\"entries\"", "has no entry with status \"ok\"");
    }
    return table;
  }

 private:
  ReplayEntry entry(const Value& json, const std::string& where) const {
    if (!json.is_object()) refuse(where, "is not an object");
    if (!json.contains("config")) refuse(where, "has no \"config\"");
    ReplayEntry result;
    try {
      result.config = canonical_json(json["config"]);
    } catch (const std::exception& error) {
      refuse(where + " \"config\"", std::string("is not a config: ") + error.what());
    }
    if (!json.contains("status") || !json["status"].is_string())
      refuse(where, "has no string \"status\"");
    const std::string status = json["status"].get<std::string>();
    if (status != "ok" && status != "failed")
      refuse(where + " \"status\"", "must be \"ok\" or \"failed\", got \"" + status + "\"");
    result.failed = status == "failed";
    if (json.contains("compile_s")) {
      const Value& compile = json["compile_s"];
      if (!compile.is_number() || !(compile.get<double>() >= 0.0) ||
          !std::isfinite(compile.get<double>())) {
        refuse(where + " \"compile_s\"", "must be a finite number >= 0");
      }
      result.compile_s = compile.get<double>();
    }
    if (result.failed) {
      if (!json.contains("reason") || !json["reason"].is_string())
        refuse(where, "failed without a string \"reason\"");
      result.reason = json["reason"].get<std::string>();
      return result;
    }
    if (!json.contains("samples_ms") || !json["samples_ms"].is_array() ||
        json["samples_ms"].empty()) {
      refuse(where, "is ok without a non-empty array \"samples_ms\"");
    }
    for (const Value& sample : json["samples_ms"]) {
      if (!sample.is_number() || !std::isfinite(sample.get<double>()) ||
          !(sample.get<double>() > 0.0)) {
        refuse(where + " \"samples_ms\"", "holds " + sample.dump() + ", not a finite time > 0");
      }
      result.samples_ms.push_back(sample.get<double>());
    }
    return result;
  }

  std::string origin_;
};

}  // namespace

double ReplayEntry::true_ms() const {
  return failed ? 0.0 : summarize(samples_ms, Statistic::median);
}

double ReplayTable::best_ms() const {
  double best = std::numeric_limits<double>::infinity();
  for (const ReplayEntry& entry : entries) {
    if (!entry.failed) best = std::min(best, entry.true_ms());
  }
  return best;
}

ReplayTable parse_replay_table(const std::string& text, const std::string& origin) {
  return TableReader(origin).read(text);
}

ReplayTable read_replay_table(const std::string& path) {
  try {
    return parse_replay_table(
        detail::read_regular_file(path, kMaxTableBytes, "a replay table is read"),
        detail::printable_line(path));
  } catch (const detail::UnreadableFile& error) {
    throw BadReplayTable(std::string("disttune: replay table: ") + error.what());
  }
}

}  // namespace disttune
