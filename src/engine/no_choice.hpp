// The error text of a tuning that chose nothing: which candidates failed and why, what the timer discarded, where the log is.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "disttune/candidate_result.hpp"
#include "disttune/config.hpp"

namespace disttune::detail {

/// "disttune: every config of SUBJECT failed for key KEY WHERE:" when every candidate failed,
/// else "disttune: every finalist of SUBJECT failed for key KEY WHERE (F of N configs
/// failed):"; then each failed candidate (index, config, reason), and when some did not fail,
/// how many were measured without failing and how many never ran (not finalists either
/// way). When `clocks` (Timer::clocks() of the tuning) counts runs the timer discarded
/// ("gapped_runs", "discarded_runs"), a last line says so: a discarded run is an invalid
/// time, and a candidate past its re-takes fails with "invalid times". Each failure is one
/// line, the first of its reason; the last line names the `log` that holds them in full, or
/// says that none was written.
std::string no_choice_text(const std::string& subject, const std::string& key, const std::string& where,
                           const std::vector<CandidateResult>& results, const Value& clocks,
                           const std::optional<std::filesystem::path>& log);

}  // namespace disttune::detail
