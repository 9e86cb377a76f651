// show of a tuning's log: what a tuning that chose nothing leaves to read.
#pragma once

#include <filesystem>
#include <ostream>

namespace disttune::cli {

/// Whether `path` names a function-level tuning's log ("<record id>.log-<UTC stamp>[-rank<r>]",
/// beside the records; a tuning whose every config failed leaves only this).
bool is_tuning_log(const std::filesystem::path& path);

/// Prints the log (at most its first 16 MiB), each line as readable text: the tuning's
/// identity, settings, candidates, and each candidate's samples or its failure in full.
void show_log(const std::filesystem::path& path, std::ostream& out);

}  // namespace disttune::cli
