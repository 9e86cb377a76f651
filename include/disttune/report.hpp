// TuningReport: where a choice came from and what the tuning measured, and its table.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "disttune/candidate_result.hpp"

namespace disttune {

struct Record;  // disttune/store.hpp

/// Where a choice came from, and what the tuning measured.
struct TuningReport {
  /// tuned: measured by this call; stored: read from a store of the chain (`store` says
  /// which); memory: the process's cache held the choice (a front end's hit); table: a
  /// record a table import wrote (Record::imported), read from a store.
  enum class Source { tuned, stored, memory, table };
  Source source = Source::tuned;
  /// With Source::stored: the source word of the store that answered (its scheme's
  /// StoreScheme::source, store_chain.hpp): "disk" for a directory, "redis", ...
  std::string store;
  std::string function;
  std::string key;
  std::vector<CandidateResult> candidates;  ///< pruned candidates, in order
  std::size_t best = 0;                     ///< index into candidates
  std::string timer;  ///< the timer that measured (Timer::name()); from a store: the record's
  std::optional<std::filesystem::path> record_path;  ///< the local record, if there is one
  std::optional<std::filesystem::path> log_path;
  /// 0, or the number of ranks the tuning was split across (TunerOptions::split_across_ranks).
  int split_ranks = 0;
  /// The neighbouring keys whose records warm-started the tuning (nearest first); empty
  /// when it was tuned in full.
  std::vector<std::string> warm_start_from;
  /// Canonical JSON of the configs the prune function removed for this key (never run).
  std::vector<std::string> pruned;
  /// Candidates named to the request's prepare hook (compiled, speculation included), to
  /// set against those measured; nullopt without a hook or for a split tuning.
  std::optional<std::size_t> prepared;
};

/// The report of a stored record read from the store whose source word is `store` ("disk",
/// ...): its function, key, candidates, choice, timer, split, warm start and pruned configs.
TuningReport report_of_record(const Record& record, std::string store);

/// Where the report's choice came from, in one word: "tuned", "memory", "table", or the
/// answering store's word ("disk", "redis", ...).
std::string source_name(const TuningReport& report);

/// The report as a table: one row per candidate (config, status, agreed time, samples),
/// the chosen one marked, followed by the timer and where the choice came from.
std::string format_table(const TuningReport& report);

}  // namespace disttune
