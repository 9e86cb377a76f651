// The table of tuning records: what `export` and sweeps write, what `import` and
// disttune.load_table read (docs/cache.md, "Tables").
//
//   {"schema": "disttune.table", "schema_version": 1, "library_version": "0.1.0",
//    "exported_utc": "YYYY-MM-DDTHH:MM:SSZ",
//    "devices": {<hardware digest>: <hardware object>},
//    "software": {<deps digest>: <deps object>},
//    "functions": {<function name>: {<canonical key text>: {<hardware digest>: <record>}}}}
//
// Each <record> is a schema-1 record as the disk store holds it; "devices" and "software"
// are the fingerprints its records carry (tables written before they existed lack them and
// still read).
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/cache_listing.hpp"
#include "disttune/config.hpp"
#include "disttune/settings.hpp"
#include "disttune/store.hpp"

namespace disttune::cli {

inline constexpr const char* kTableSchema = "disttune.table";
inline constexpr int kTableSchemaVersion = 1;
/// The largest table import reads; a larger file is refused before it is read.
inline constexpr std::size_t kMaxTableBytes = std::size_t{256} << 20;

/// The table of every valid record of `records`.
Value make_table(const std::vector<Record>& records);

/// Writes the table of every valid record under `cache` to `path` (atomically) and returns
/// how many it holds; each bad record file is named on `skipped` ("skipped BAD ...") and left
/// out. CliError naming the problem (a missing root, a file that cannot be written).
std::size_t export_table(const CacheListing& cache, const std::filesystem::path& path, std::ostream& skipped);

/// Every record of the table file at `path`, each checked by the engine's record reader, its
/// function name by the store's name checks, and filed under its own identity. Reads only
/// a regular file of at most kMaxTableBytes (a FIFO, a device or a directory is refused
/// without reading). CliError naming the first problem; nothing is written.
std::vector<Record> read_table(const std::filesystem::path& path);

/// What the importing program is, for the mismatch policy: this program's device and
/// software facts (each compared key by key with a record's hardware and deps: only the
/// keys given here count) and TRITON_DIST_AUTOTUNE_TABLE_MISMATCH.
struct TableExpectation {
  Value device = Value::object();
  Value software = Value::object();
  TableMismatch policy = TableMismatch::warn;
};

/// This host's expectation as the engine sees it with a CPU timer (CPU model and cores,
/// library version and compiler), with the policy from the environment.
TableExpectation host_expectation();

/// Reads the whole table (read_table), then writes its records under `cache` (each
/// atomically, through the store). A record already on disk that is newer is kept unless
/// `force`; one with the same date is left. A record made with other software than
/// `expected` is written with one warning (policy warn) or skipped (policy retune); one
/// measured on another device is written with one warning (the engine looks records up by
/// device, so its keys are tuned again here). Returns one line per record.
std::vector<std::string> import_table(const CacheListing& cache, const std::filesystem::path& path,
                                      bool force, const TableExpectation& expected);

}  // namespace disttune::cli
