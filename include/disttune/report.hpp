// TuningReport: where a choice came from and what the tuning measured, and its table.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "disttune/candidate_result.hpp"

namespace disttune {

/// Where a choice came from, and what the tuning measured.
struct TuningReport {
  enum class Source { tuned, disk, redis };  ///< redis: read from Redis (then copied to disk)
  Source source = Source::tuned;
  std::string function;
  std::string key;
  std::vector<CandidateResult> candidates;  ///< pruned candidates, in order
  std::size_t best = 0;                     ///< index into candidates
  std::string timer;  ///< the timer that measured (Timer::name()); from a store: the record's
  std::optional<std::filesystem::path> record_path;  ///< the local record, if there is one
  std::optional<std::filesystem::path> log_path;
  /// 0, or the number of ranks the tuning was split across (TunerOptions::split_across_ranks).
  int split_ranks = 0;
};

/// The report as a table: one row per candidate (config, status, agreed time, samples),
/// the chosen one marked, followed by the timer and where the choice came from.
std::string format_table(const TuningReport& report);

}  // namespace disttune
