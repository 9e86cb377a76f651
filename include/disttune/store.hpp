// Disk store of tuning records: layout, record format (schema 1) and reliability rules.
//
// Layout: <root>/<function name>/<id>.json, where <id> is the SHA-256 (64 lower-case hex
// digits) of (function digest, hardware digest, canonical key text), and <root> is
// TRITON_DIST_AUTOTUNE_CACHE_DIR or ~/.triton_dist/autotune.
//
// Record (JSON object, schema 1):
//   "schema": "disttune.record", "schema_version": 1, "library_version": "0.1.0",
//   "function": {"name": str, "digest": str}, "key": str (canonical JSON text),
//   "hardware": object, "hardware_digest": str, "deps": object,
//   "measurement": {"warmup_runs": int, "timed_runs": int, "statistic": str,
//                   "strategy": str, "flush_l2": bool, "timer": str (optional),
//                   optional: "max_noise", "min_time_ms", "budget_ms": num (converge's
//                   strategy options, those given; older records wrote all three; read
//                   back into Measurement::strategy_options as texts),
//                   "strategy_options": {str: str} (the strategy's other named options,
//                   when set), "baseline": <JSON value> (the baseline entry, when one was set)},
//   "candidates": [{"config": <JSON value>, "status": "ok"|"dropped"|"failed"|"skipped",
//                   "error": str, "samples_ms": [num], "local_ms": num|null,
//                   "agreed_ms": num|null, "noise": num}],
//   ("dropped": measured, then left out by the adaptive strategy; "noise": the agreed
//    relative spread of the samples, median absolute deviation over the median)
//   (optional "within_noise": true: not told apart from the choice by the measurement)
//   "best": {"index": int, "config": <JSON value>},
//   optional "baseline": {"index": int|null (null: pruned for this key), "won": bool,
//                         "baseline_ms": num|null, "chosen_ms": num},
//   "ranks": int, "created_utc": "YYYY-MM-DDTHH:MM:SSZ",
//   optional "clocks": {"steady_sm_mhz": num, "lowest_sm_mhz": num, "discarded_runs": int,
//                       "gapped_runs": int, "host_bound_runs": int, "lead_ms": num,
//                       "led_runs": int, "leads_ms": num, "settle_ms": num, "probes": int}
//   (CudaTimer's, docs/strategies.md "Clock control"; the fields after "discarded_runs" are
//    absent in older records)
//   optional "split": {"ranks": int (= "ranks"), "assignment": "index modulo ranks"}
//   (present only for a rank-split tuning; a record without it was not split)
//   optional "refreshed": {"utc": "YYYY-MM-DDTHH:MM:SSZ", "measured": [int],
//                          "previous_best": int}
//   optional "imported": {"utc": "YYYY-MM-DDTHH:MM:SSZ", "table": str} (written by a table
//   import: when, and the table's file name; a record tuned here has none)
//   optional "pruned": [<JSON value>] (the configs the prune function removed for this key,
//   never run; absent when it removed none, and in records that predate it)
//   optional "prepared": int (the candidates the front end's prepare hook was asked to ready,
//   e.g. compile, speculation ahead included: compiled against the candidates measured;
//   absent without a prepare hook, for a rank-split tuning, and in records that predate it)
//   optional "warm_start": {"from_keys": [str], "prior": [int]}
//   ("warm_start": the tuning started from the records of these neighbouring keys, nearest
//    first; "prior" lists the candidates they ranked best-first, which were measured first.
//    Candidates the warm start never ran have status "skipped". Readers that predate it
//    ignore it; records without it were tuned in full.)
//   ("refreshed": the space grew since the record was made; the candidates in "measured"
//    were measured in that session, the stored best among them, and the faster kept.
//    Readers that predate it ignore it; records without it read as before.)
//
// Rules: data only (never executed); written atomically (temp file in the same directory,
// fsync, rename, fsync of the directory); directories 0700, files 0600; only names of 64
// hex digits + ".json" are read; symlinks are never followed; a root or function directory
// owned by another user or writable by group/others is refused with one warning (tuning
// then keeps results in memory only). A record that does not parse or has the wrong
// schema, types or identity is a miss: logged once and moved aside to "<name>.bad-<UTC>".
// Replacing a record keeps the old one as "<name>.json.<UTC>"; a socket, FIFO, device or
// directory at the record's name is moved aside instead.
//
// Limits of the reader (everything read from any store is untrusted): at most
// kMaxRecordBytes bytes and kMaxRecordDepth levels of nesting; any other failure of the
// JSON library or of validation is an unusable record, never an exception or a crash.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "disttune/candidate_result.hpp"
#include "disttune/config.hpp"
#include "disttune/measurement.hpp"

namespace disttune {

inline constexpr int kRecordSchemaVersion = 1;

/// The largest record the reader reads; a larger one is not one we wrote.
inline constexpr std::size_t kMaxRecordBytes = std::size_t{64} << 20;
/// The deepest nesting the reader parses: a config (kMaxValueDepth) inside
/// record.candidates[i].config.
inline constexpr std::size_t kMaxRecordDepth = kMaxValueDepth + 3;

/// Which record: the parts of its identity.
struct RecordId {
  std::string function_name;    ///< directory name: letters, digits, '_', '-', '.'; no leading '.'
  std::string function_digest;
  std::string hardware_digest;
  std::string key;              ///< canonical key text
  /// SHA-256 of (function digest, hardware digest, key): the file name without ".json".
  std::string file_id() const;
  /// The first field in which this differs from `other` ("function.name",
  /// "function.digest", "hardware_digest" or "key"); empty when they are the same record.
  std::string first_difference(const RecordId& other) const;
};

/// How a record was brought up to date when the config space grew: this session measured
/// the stored best together with the candidates the record did not hold, in one round, and
/// kept the faster; the other candidates keep the results of the session that made them.
struct RecordRefresh {
  std::string utc;                    ///< when, "YYYY-MM-DDTHH:MM:SSZ"
  std::vector<std::size_t> measured;  ///< indices of the candidates measured then
  std::size_t previous_best = 0;      ///< index of the stored best that was measured again
};

/// How a tuning was warm-started (docs/many-shapes.md): the neighbouring keys whose records
/// ordered the candidates, nearest first, and that order (indices, best first).
struct WarmStart {
  std::vector<std::string> from_keys;
  std::vector<std::size_t> prior;
};

/// Where a record came from when a table import wrote it (`disttune import`, load_table).
struct TableImport {
  std::string utc;    ///< when, "YYYY-MM-DDTHH:MM:SSZ"
  std::string table;  ///< the table's file name
};

/// One finished tuning, as stored.
struct Record {
  RecordId id;
  Value hardware = Value::object();
  Value deps = Value::object();
  Measurement measurement;
  /// Whether the timer cleared the device cache before each timed run (Timer::flushes_l2());
  /// stored as measurement.flush_l2.
  bool flush_l2 = false;
  /// The timer's name (Timer::name(): "cpu", "cuda", "torch-npu-events", ...); stored as
  /// measurement.timer. Empty for a record written before the field existed.
  std::string timer;
  /// The timer's clocks during the tuning (Timer::clocks(); "clocks" in the record, written
  /// when not empty; older records lack it).
  Value clocks = Value::object();
  std::vector<CandidateResult> candidates;  ///< in candidate-list order
  std::size_t best_index = 0;
  int ranks = 1;
  /// 0: every rank measured every candidate (the spec's). Otherwise the tuning was split
  /// across this many ranks (= ranks): rank r measured the candidates i with
  /// i % split_ranks == r. Stored as "split": {"ranks": n, "assignment": "index modulo
  /// ranks"} only when split, so records without it (older ones too) read as 0.
  int split_ranks = 0;
  /// Stamped once, by the record builder, when the tuning finished ("YYYY-MM-DDTHH:MM:SSZ");
  /// stores write what it holds and refuse a record without it.
  std::string created_utc;
  std::string library_version;  ///< the library that tuned it; stamped with created_utc
  std::optional<RecordRefresh> refreshed;  ///< set when the space grew (see RecordRefresh)
  std::optional<WarmStart> warm_start;     ///< set when the tuning was warm-started
  std::vector<std::string> pruned;  ///< canonical JSON of the configs pruned for this key ("pruned")
  std::optional<TableImport> imported;  ///< set when a table import wrote it ("imported")
  /// Candidates named to the prepare hook (compiled, speculation included; "prepared");
  /// nullopt without a hook, for a split tuning, or in an older record.
  std::optional<std::size_t> prepared;
};

/// A candidate's status as a record stores it: "ok", "dropped", "failed" or "skipped".
std::string candidate_status(const CandidateResult& candidate);

/// Record <-> JSON. from_json throws std::runtime_error naming the first bad field.
Value record_to_json(const Record& record);
Record record_from_json(const Value& json);

/// One record read without changing anything: the record, or why it is unusable.
struct RecordRead {
  std::optional<Record> record;  ///< set when the bytes are a valid schema-1 record
  std::string error;             ///< why they are not (empty when record is set)
};

/// The one reader of record bytes from any store (a file, a value a server sent): parses them
/// within kMaxRecordBytes and kMaxRecordDepth and validates them with record_from_json.
/// Never throws and never crashes, whatever the bytes; an unusable record gets a reason.
/// The caller checks the record's identity against what it asked for.
RecordRead parse_record(std::string_view bytes) noexcept;

/// Reads the record file at `path` read-only, for inspection tools: the final component is
/// never followed if it is a symbolic link, and a bad file is reported, not moved aside.
/// Besides record_from_json, checks that the file is named "<record's file id>.json" in a
/// directory named after the record's function. Never throws for what is on disk.
RecordRead read_record(const std::filesystem::path& path);

/// The longest key text a record may hold: a record must stay within kMaxRecordBytes
/// with its key escaped as a JSON string (at most twice as long) and its candidates.
inline constexpr std::size_t kMaxKeyBytes = kMaxRecordBytes / 4;

/// Throws std::invalid_argument, naming the sizes, when `key` is longer than kMaxKeyBytes.
void check_record_key(const std::string& key);

/// The root: cache_root_setting() (TRITON_DIST_AUTOTUNE_CACHE_DIR if set, else
/// kDefaultCacheRoot under the user's home).
std::filesystem::path default_cache_root();

/// How many replaced records and tuning logs are kept per key:
/// TRITON_DIST_AUTOTUNE_CACHE_KEEP (a whole number from 0 to 10000), else 3. Throws
/// std::invalid_argument for any other value.
std::size_t default_kept_per_key();

/// A place where records are kept (the seam between the engine and its stores: DiskStore,
/// and the others a chain of stores is made of, store_chain.hpp). Implementations are thread-safe and never throw for
/// what they hold or for a fault of what holds it: a bad record or a store out of reach is
/// a miss (load) or a write not done (write), with a warning.
class Store {
 public:
  virtual ~Store() = default;
  /// The valid record for `id` (schema, types and identity checked), or nullopt on a miss.
  virtual std::optional<Record> load(const RecordId& id) const = 0;
  /// Writes `record`; false (warned) if it was not written.
  virtual bool write(const Record& record) const = 0;
  /// Where the record for `id` is kept (a path, a URL and key), for messages.
  virtual std::string where(const RecordId& id) const = 0;
  /// The valid records of every key of `like`'s function, with its function digest and
  /// hardware digest (`like.key` is not read; each record read by parse_record, its identity
  /// checked), at most `most`, for a warm start; those whose RecordId::file_id() is in
  /// `known` (the caller has them already) are neither read nor returned. Never throws; the
  /// default (a store that cannot list): none.
  virtual std::vector<Record> records_of(const RecordId& like, std::size_t most,
                                         const std::set<std::string>& known) const {
    (void)like, (void)most, (void)known;
    return {};
  }
};

/// Reads and writes records under one root, following the rules above. Thread-safe.
namespace detail {
class ParsedRecords;
}  // namespace detail

class DiskStore final : public Store {
 public:
  /// What a report's source says for a record a directory store answered.
  static constexpr const char* kSource = "disk";

  explicit DiskStore(std::filesystem::path root = default_cache_root(),
                     std::size_t kept_per_key = default_kept_per_key());

  const std::filesystem::path& root() const { return root_; }
  /// Replaced records and tuning logs kept per key (see save()).
  std::size_t kept_per_key() const { return kept_per_key_; }
  /// <root>/<function name>; throws std::invalid_argument for a name that is not a safe
  /// directory name.
  std::filesystem::path function_dir(const std::string& function_name) const;
  /// Throws std::invalid_argument for an unsafe function name or a key over kMaxKeyBytes.
  std::filesystem::path record_path(const RecordId& id) const;

  /// The stored record for `id`, or nullopt on a miss (absent, refused directory, or a bad
  /// record, which is moved aside). Never throws for what is on disk.
  std::optional<Record> load(const RecordId& id) const override;

  /// Writes atomically; returns the path, or nullopt (with a warning on stderr) if the
  /// directory is refused, the record would be over kMaxRecordBytes, or the write fails.
  /// Then tidies the directory: temporary files of dead writers older than a minute are
  /// removed, and only the newest kept_per_key() replaced records and tunings' logs of the
  /// key stay.
  std::optional<std::filesystem::path> save(const Record& record) const;
  /// save(), for the Store seam.
  bool write(const Record& record) const override { return save(record).has_value(); }
  /// record_path(id).
  std::string where(const RecordId& id) const override { return record_path(id).string(); }
  /// The records of the function's directory (names of 64 hex digits + ".json", read like
  /// read_record(): symbolic links never followed, bad files skipped and left in place);
  /// none when the directory is refused or absent. Every file is read at every call; one
  /// whose bytes are those it held at the previous call is not parsed again (the store and
  /// its copies remember the last listing's parses).
  std::vector<Record> records_of(const RecordId& like, std::size_t most,
                                 const std::set<std::string>& known) const override;

  /// Why the engine refuses the root or the directory of `function_name` (symbolic link,
  /// another owner, writable by others, not a directory), or nullopt when it would use it
  /// or it does not exist. Creates nothing.
  std::optional<std::string> refusal(const std::string& function_name) const;

  /// The function directory, created 0700 if absent, if it passes the ownership and
  /// permission checks; nullopt (warned once) otherwise. Logs go here too.
  std::optional<std::filesystem::path> usable_function_dir(const std::string& function_name) const;

 private:
  std::filesystem::path root_;
  std::size_t kept_per_key_;
  std::shared_ptr<detail::ParsedRecords> parsed_;  ///< the last listing's parses, by file
};

}  // namespace disttune
