// Cache hygiene: what writers leave behind in a function directory is bounded.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace disttune::detail {

/// A temporary file this old is left over from a writer that died; the next writer in its
/// directory removes it.
inline constexpr std::chrono::seconds kStaleTempAge{60};

/// Tidies the function directory `dir_fd` (call with it locked by the writer): removes
/// temporary record files ("<id>.json.tmp-*") older than kStaleTempAge, and keeps only the
/// newest `keep` replaced records ("<file_id>.json.<UTC>") and the newest `keep` logs of
/// each rank ("<file_id>.log-<UTC>[-rank<r>]") of the key `file_id`. Best effort: an entry
/// that cannot be removed stays for the next writer; never throws.
void tidy_function_dir(int dir_fd, const std::string& file_id, std::size_t keep) noexcept;

}  // namespace disttune::detail
