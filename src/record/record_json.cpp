// Records <-> JSON (schema 1, described in store.hpp); reading is strict and names the
// first bad field.
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "disttune/store.hpp"
#include "util/number_text.hpp"

namespace disttune {
namespace {

constexpr const char* kSchemaName = "disttune.record";
/// How a split tuning shared the candidates out (Record::split_ranks).
constexpr const char* kSplitAssignment = "index modulo ranks";
/// The converge strategy's options that records keep as numbers, as they did when these
/// were Measurement fields: "measurement.max_noise" and not "measurement.strategy_options".
constexpr const char* kConvergeNumberOptions[] = {"max_noise", "min_time_ms", "budget_ms"};

[[noreturn]] void bad_field(const std::string& field, const std::string& problem) {
  throw std::runtime_error("disttune: record field '" + field + "' " + problem);
}

std::string field_name(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
}

// The checked members of one JSON object of a record; each getter names the field it
// rejects by its full path ("candidates[2].samples_ms[0]").
class Fields {
 public:
  Fields(const Value& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object()) bad_field(path_.empty() ? "(record)" : path_, "must be an object");
  }

  [[nodiscard]] std::string path(const std::string& name) const { return field_name(path_, name); }

  [[nodiscard]] const Value& any(const std::string& name) const {
    const auto found = object_.find(name);
    if (found == object_.end()) bad_field(path(name), "is missing");
    return *found;
  }

  [[nodiscard]] bool has(const std::string& name) const { return object_.contains(name); }

  [[nodiscard]] std::string string(const std::string& name) const {
    const Value& value = any(name);
    if (!value.is_string()) bad_field(path(name), "must be a string");
    return value.get<std::string>();
  }

  [[nodiscard]] bool boolean(const std::string& name) const {
    const Value& value = any(name);
    if (!value.is_boolean()) bad_field(path(name), "must be true or false");
    return value.get<bool>();
  }

  [[nodiscard]] long long integer(const std::string& name, long long low, long long high) const {
    const Value& value = any(name);
    if (!value.is_number_integer()) bad_field(path(name), "must be an integer");
    const bool in_range =
        value.is_number_unsigned()
            ? value.get<unsigned long long>() <= static_cast<unsigned long long>(high)
            : value.get<long long>() >= low && value.get<long long>() <= high;
    if (!in_range) {
      bad_field(path(name),
                "must be between " + std::to_string(low) + " and " + std::to_string(high));
    }
    return value.get<long long>();
  }

  [[nodiscard]] const Value& object(const std::string& name) const {
    const Value& value = any(name);
    if (!value.is_object()) bad_field(path(name), "must be an object");
    return value;
  }

  // The canonical text of a JSON value (a config).
  [[nodiscard]] std::string canonical(const std::string& name) const {
    try {
      return canonical_json(any(name));
    } catch (const std::invalid_argument& error) {
      bad_field(path(name), error.what());
    }
  }

  [[nodiscard]] const Value& array(const std::string& name) const {
    const Value& value = any(name);
    if (!value.is_array()) bad_field(path(name), "must be an array");
    return value;
  }

  // A finite number, or (when `null_as` is given) null read as that value.
  [[nodiscard]] double number(const std::string& name,
                              std::optional<double> null_as = std::nullopt) const {
    const Value& value = any(name);
    if (value.is_null() && null_as) return *null_as;
    if (!value.is_number())
      bad_field(path(name), null_as ? "must be a number or null" : "must be a number");
    const double number = value.get<double>();
    if (!std::isfinite(number)) bad_field(path(name), "must be finite");
    return number;
  }

 private:
  const Value& object_;
  std::string path_;
};

bool is_utc_timestamp(const std::string& text) {
  static constexpr std::string_view kPattern = "dddd-dd-ddTdd:dd:ddZ";
  if (text.size() != kPattern.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool ok = kPattern[i] == 'd' ? text[i] >= '0' && text[i] <= '9' : text[i] == kPattern[i];
    if (!ok) return false;
  }
  return true;
}

Value parse_config(const std::string& text, std::size_t index) {
  try {
    return Value::parse(text);
  } catch (const Value::parse_error&) {
    throw std::invalid_argument("disttune: candidate " + std::to_string(index) +
                                " config is not JSON text: " + text);
  }
}

// A time for the record: a number if finite, null otherwise (JSON has no infinity).
Value time_value(double ms) {
  return std::isfinite(ms) ? Value(ms) : Value(nullptr);
}

Value candidate_to_json(const CandidateResult& candidate, std::size_t index) {
  for (const double sample : candidate.samples) {
    if (!std::isfinite(sample)) {
      throw std::invalid_argument("disttune: candidate " + std::to_string(index) +
                                  " has a non-finite sample");
    }
  }
  const std::string status = candidate_status(candidate);
  const bool skipped = status == "skipped";
  Value json{{"config", parse_config(candidate.config, index)},
               {"status", status},
               {"error", candidate.error},
               {"samples_ms", candidate.samples},
               {"local_ms", skipped ? Value(nullptr) : time_value(candidate.local_ms)},
               {"agreed_ms", skipped ? Value(nullptr) : time_value(candidate.agreed_ms)},
               {"noise", candidate.noise}};
  if (candidate.within_noise) json["within_noise"] = true;  // optional: older records lack it
  return json;
}

CandidateResult candidate_from_json(const Value& json, const std::string& path) {
  const Fields fields(json, path);
  CandidateResult candidate;
  candidate.config = fields.canonical("config");
  candidate.error = fields.string("error");
  const Value& samples = fields.array("samples_ms");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::string sample_path = fields.path("samples_ms") + "[" + std::to_string(i) + "]";
    if (!samples[i].is_number()) bad_field(sample_path, "must be a number");
    const double sample = samples[i].get<double>();
    if (!std::isfinite(sample)) bad_field(sample_path, "must be finite");
    candidate.samples.push_back(sample);
  }
  candidate.noise = fields.number("noise");
  if (!(candidate.noise >= 0.0)) bad_field(fields.path("noise"), "must be >= 0");
  if (fields.has("within_noise")) candidate.within_noise = fields.boolean("within_noise");
  const std::string status = fields.string("status");
  const double infinity = std::numeric_limits<double>::infinity();
  if (status == "ok" || status == "dropped") {
    candidate.measured = true;
    candidate.dropped = status == "dropped";
    candidate.local_ms = fields.number("local_ms");
    candidate.agreed_ms = fields.number("agreed_ms");
    // The engine re-takes a run that gave a negative time: no measured time is below 0.
    for (std::size_t i = 0; i < candidate.samples.size(); ++i) {
      if (candidate.samples[i] < 0.0)
        bad_field(fields.path("samples_ms") + "[" + std::to_string(i) + "]", "must be >= 0");
    }
    if (candidate.local_ms < 0.0) bad_field(fields.path("local_ms"), "must be >= 0");
    if (candidate.agreed_ms < 0.0) bad_field(fields.path("agreed_ms"), "must be >= 0");
  } else if (status == "failed") {
    candidate.measured = true;
    candidate.failed = true;
    candidate.local_ms = fields.number("local_ms", infinity);
    candidate.agreed_ms = fields.number("agreed_ms", infinity);
  } else if (status == "skipped") {
    if (!fields.any("local_ms").is_null())
      bad_field(fields.path("local_ms"), "must be null for a skipped candidate");
    if (!fields.any("agreed_ms").is_null())
      bad_field(fields.path("agreed_ms"), "must be null for a skipped candidate");
  } else {
    bad_field(fields.path("status"),
              R"(must be "ok", "dropped", "failed" or "skipped", got ")" + status + "\"");
  }
  return candidate;
}

/// Fills record.measurement and record.flush_l2 from the record's "measurement" object.
void read_measurement(const Value& json, Record& record) {
  const Fields fields(json, "measurement");
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  Measurement& measurement = record.measurement;
  measurement.warmup_runs = static_cast<int>(fields.integer("warmup_runs", 0, kIntMax));
  measurement.timed_runs = static_cast<int>(fields.integer("timed_runs", 1, kIntMax));
  try {
    measurement.statistic = parse_statistic(fields.string("statistic"));
  } catch (const std::invalid_argument& error) {
    bad_field(fields.path("statistic"), std::string("is not valid: ") + error.what());
  }
  measurement.strategy = fields.string("strategy");
  if (measurement.strategy.empty()) bad_field(fields.path("strategy"), "must not be empty");
  // Optional (older records lack it): the baseline.
  if (fields.has("baseline")) measurement.baseline = fields.canonical("baseline");
  // Optional (records of strategies without options lack it): the strategy's own options.
  if (fields.has("strategy_options")) {
    const Fields options(fields.any("strategy_options"), fields.path("strategy_options"));
    for (const auto& [name, value] : fields.any("strategy_options").items()) {
      measurement.strategy_options[name] = options.string(name);
    }
  }
  // Optional: converge's numeric options, back into the strategy's options as texts.
  for (const char* name : kConvergeNumberOptions) {
    if (fields.has(name)) measurement.strategy_options[name] = detail::number_text(fields.number(name));
  }
  record.flush_l2 = fields.boolean("flush_l2");
  // Optional: records written before the timer was named lack it.
  if (json.contains("timer")) record.timer = fields.string("timer");
}

Value refresh_to_json(const RecordRefresh& refresh, const Record& record) {
  if (!is_utc_timestamp(refresh.utc)) {
    throw std::invalid_argument("disttune: record refreshed.utc must be YYYY-MM-DDTHH:MM:SSZ, got '" +
                                refresh.utc + "'");
  }
  const std::size_t count = record.candidates.size();
  bool in_range = refresh.previous_best < count && !refresh.measured.empty();
  for (const std::size_t index : refresh.measured) in_range = in_range && index < count;
  if (!in_range) {
    throw std::invalid_argument("disttune: record refreshed names candidates out of range");
  }
  return Value{{"utc", refresh.utc},
               {"measured", refresh.measured},
               {"previous_best", refresh.previous_best}};
}

RecordRefresh refresh_from_json(const Value& json, long long last) {
  const Fields fields(json, "refreshed");
  RecordRefresh refresh;
  refresh.utc = fields.string("utc");
  if (!is_utc_timestamp(refresh.utc)) bad_field("refreshed.utc", "must be YYYY-MM-DDTHH:MM:SSZ");
  const Value& measured = fields.array("measured");
  if (measured.empty()) bad_field("refreshed.measured", "must not be empty");
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const Value& index = measured[i];
    if (!index.is_number_unsigned() || index.get<unsigned long long>() > static_cast<unsigned long long>(last)) {
      bad_field("refreshed.measured[" + std::to_string(i) + "]",
                "must be a candidate index from 0 to " + std::to_string(last));
    }
    refresh.measured.push_back(index.get<std::size_t>());
  }
  refresh.previous_best = static_cast<std::size_t>(fields.integer("previous_best", 0, last));
  return refresh;
}

Value warm_start_to_json(const WarmStart& warm, const Record& record) {
  for (const std::size_t index : warm.prior) {
    if (index >= record.candidates.size()) {
      throw std::invalid_argument("disttune: record warm_start.prior names a candidate out of range");
    }
  }
  return Value{{"from_keys", warm.from_keys}, {"prior", warm.prior}};
}

WarmStart warm_start_from_json(const Value& json, long long last) {
  const Fields fields(json, "warm_start");
  WarmStart warm;
  const Value& keys = fields.array("from_keys");
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!keys[i].is_string()) bad_field("warm_start.from_keys[" + std::to_string(i) + "]", "must be a string");
    warm.from_keys.push_back(keys[i].get<std::string>());
  }
  const Value& prior = fields.array("prior");
  for (std::size_t i = 0; i < prior.size(); ++i) {
    if (!prior[i].is_number_unsigned() || prior[i].get<unsigned long long>() > static_cast<unsigned long long>(last)) {
      bad_field("warm_start.prior[" + std::to_string(i) + "]",
                "must be a candidate index from 0 to " + std::to_string(last));
    }
    warm.prior.push_back(prior[i].get<std::size_t>());
  }
  return warm;
}

/// Which won, the baseline or another candidate, and both times: the record's "baseline".
Value baseline_outcome(const Record& record) {
  std::optional<std::size_t> index;
  for (std::size_t i = 0; i < record.candidates.size(); ++i) {
    if (record.candidates[i].config == record.measurement.baseline) index = i;
  }
  if (!index) return Value{{"index", nullptr}, {"won", false}};  // pruned for this key
  const CandidateResult& baseline = record.candidates[*index];
  const CandidateResult& chosen = record.candidates[record.best_index];
  return Value{{"index", *index},
               {"won", *index == record.best_index},
               {"baseline_ms", baseline.measured ? time_value(baseline.agreed_ms) : Value(nullptr)},
               {"chosen_ms", time_value(chosen.agreed_ms)}};
}

}  // namespace

std::string candidate_status(const CandidateResult& candidate) {
  if (candidate.failed) return "failed";
  if (candidate.dropped) return "dropped";
  return candidate.measured ? "ok" : "skipped";
}

Value record_to_json(const Record& record) {
  if (record.created_utc.empty() || record.library_version.empty()) {
    throw std::invalid_argument("disttune: the record is not stamped (build_record sets "
                                "created_utc and library_version)");
  }
  if (!record.hardware.is_object())
    throw std::invalid_argument("disttune: record hardware must be an object");
  if (!record.deps.is_object())
    throw std::invalid_argument("disttune: record deps must be an object");
  if (record.best_index >= record.candidates.size()) {
    throw std::invalid_argument("disttune: record best_index " + std::to_string(record.best_index) +
                                " is out of range for " + std::to_string(record.candidates.size()) +
                                " candidates");
  }
  if (record.measurement.strategy.empty()) {
    throw std::invalid_argument(
        "disttune: record measurement.strategy must name the strategy used");
  }
  if (record.split_ranks != 0 && record.split_ranks != record.ranks) {
    throw std::invalid_argument("disttune: record split_ranks must be 0 or ranks (" +
                                std::to_string(record.ranks) + "), got " + std::to_string(record.split_ranks));
  }
  if (!is_utc_timestamp(record.created_utc)) {
    throw std::invalid_argument("disttune: record created_utc must be YYYY-MM-DDTHH:MM:SSZ, got '" +
                                record.created_utc + "'");
  }
  Value candidates = Value::array();
  for (std::size_t i = 0; i < record.candidates.size(); ++i) {
    candidates.push_back(candidate_to_json(record.candidates[i], i));
  }
  const Measurement& m = record.measurement;
  Value measurement{{"warmup_runs", m.warmup_runs},
                    {"timed_runs", m.timed_runs},
                    {"statistic", to_string(m.statistic)},
                    {"strategy", m.strategy},
                    {"flush_l2", record.flush_l2}};
  if (!record.timer.empty()) measurement["timer"] = record.timer;
  Value json{
      {"schema", kSchemaName},
      {"schema_version", kRecordSchemaVersion},
      {"library_version", record.library_version},
      {"function", {{"name", record.id.function_name}, {"digest", record.id.function_digest}}},
      {"key", record.id.key},
      {"hardware", record.hardware},
      {"hardware_digest", record.id.hardware_digest},
      {"deps", record.deps},
      {"measurement", std::move(measurement)},
      {"candidates", std::move(candidates)},
      {"best",
       {{"index", record.best_index},
        {"config", parse_config(record.candidates[record.best_index].config, record.best_index)}}},
      {"ranks", record.ranks},
      {"created_utc", record.created_utc}};
  std::map<std::string, std::string> options = m.strategy_options;
  if (m.strategy == "converge") {
    for (const char* name : kConvergeNumberOptions) {
      const auto given = options.find(name);
      if (given == options.end()) continue;
      if (const std::optional<double> number = detail::finite_number(given->second)) {
        json["measurement"][name] = *number;
        options.erase(given);
      }
    }
  }
  if (!options.empty()) json["measurement"]["strategy_options"] = options;
  if (record.clocks.is_object() && !record.clocks.empty()) json["clocks"] = record.clocks;
  if (!m.baseline.empty()) {
    json["measurement"]["baseline"] = Value::parse(m.baseline);
    json["baseline"] = baseline_outcome(record);
  }
  if (record.split_ranks > 0) {
    json["split"] = Value{{"ranks", record.split_ranks}, {"assignment", kSplitAssignment}};
  }
  if (record.refreshed) json["refreshed"] = refresh_to_json(*record.refreshed, record);
  if (record.warm_start) json["warm_start"] = warm_start_to_json(*record.warm_start, record);
  if (record.imported) {
    if (!is_utc_timestamp(record.imported->utc)) {
      throw std::invalid_argument("disttune: record imported.utc must be YYYY-MM-DDTHH:MM:SSZ, got '" +
                                  record.imported->utc + "'");
    }
    json["imported"] = Value{{"utc", record.imported->utc}, {"table", record.imported->table}};
  }
  if (!record.pruned.empty()) {
    Value pruned = Value::array();
    for (const std::string& config : record.pruned) pruned.push_back(Value::parse(config));
    json["pruned"] = std::move(pruned);
  }
  if (record.prepared) json["prepared"] = *record.prepared;
  return json;
}

Record record_from_json(const Value& json) {
  const Fields fields(json, "");
  const std::string schema = fields.string("schema");
  if (schema != kSchemaName)
    bad_field("schema", "is \"" + schema + "\", expected \"" + kSchemaName + "\"");
  const long long version = fields.integer("schema_version", 0, std::numeric_limits<int>::max());
  if (version != kRecordSchemaVersion) {
    bad_field("schema_version", "is " + std::to_string(version) + ", this library reads version " +
                                    std::to_string(kRecordSchemaVersion));
  }

  Record record;
  record.library_version = fields.string("library_version");
  const Fields function(fields.object("function"), "function");
  record.id.function_name = function.string("name");
  record.id.function_digest = function.string("digest");
  record.id.key = fields.string("key");
  record.hardware = fields.object("hardware");
  record.id.hardware_digest = fields.string("hardware_digest");
  record.deps = fields.object("deps");
  read_measurement(fields.object("measurement"), record);
  if (fields.has("clocks")) record.clocks = fields.object("clocks");

  const Value& candidates = fields.array("candidates");
  if (candidates.empty()) bad_field("candidates", "must not be empty");
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    record.candidates.push_back(
        candidate_from_json(candidates[i], "candidates[" + std::to_string(i) + "]"));
  }

  const Fields best(fields.object("best"), "best");
  const long long last = static_cast<long long>(record.candidates.size()) - 1;
  record.best_index = static_cast<std::size_t>(best.integer("index", 0, last));
  const CandidateResult& chosen = record.candidates[record.best_index];
  if (chosen.failed || chosen.dropped || !chosen.measured) {
    bad_field("best.index", "names candidate " + std::to_string(record.best_index) +
                                ", whose status is not \"ok\"");
  }
  if (best.canonical("config") != chosen.config) {
    bad_field("best.config",
              "differs from candidates[" + std::to_string(record.best_index) + "].config");
  }

  record.ranks = static_cast<int>(fields.integer("ranks", 1, std::numeric_limits<int>::max()));
  if (json.contains("split")) {
    const Fields split(fields.object("split"), "split");
    record.split_ranks = static_cast<int>(split.integer("ranks", 2, record.ranks));
    if (record.split_ranks != record.ranks) bad_field("split.ranks", "differs from ranks");
    if (split.string("assignment") != kSplitAssignment) {
      bad_field("split.assignment", std::string("must be \"") + kSplitAssignment + "\"");
    }
  }
  record.created_utc = fields.string("created_utc");
  if (!is_utc_timestamp(record.created_utc))
    bad_field("created_utc", "must be YYYY-MM-DDTHH:MM:SSZ");
  if (json.contains("refreshed")) record.refreshed = refresh_from_json(fields.object("refreshed"), last);
  if (json.contains("warm_start")) record.warm_start = warm_start_from_json(fields.object("warm_start"), last);
  if (json.contains("imported")) {
    const Fields imported(fields.object("imported"), "imported");
    record.imported = TableImport{imported.string("utc"), imported.string("table")};
    if (!is_utc_timestamp(record.imported->utc)) bad_field("imported.utc", "must be YYYY-MM-DDTHH:MM:SSZ");
  }
  if (json.contains("pruned")) {
    const Value& pruned = fields.array("pruned");
    for (std::size_t i = 0; i < pruned.size(); ++i) {
      try {
        record.pruned.push_back(canonical_json(pruned[i]));
      } catch (const std::invalid_argument& error) {
        bad_field("pruned[" + std::to_string(i) + "]", error.what());
      }
    }
  }
  if (json.contains("prepared")) {
    record.prepared = static_cast<std::size_t>(
        fields.integer("prepared", 0, static_cast<long long>(record.candidates.size())));
  }
  return record;
}

}  // namespace disttune
