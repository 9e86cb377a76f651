// Stored choice: what a disk record means for the current call (a hit, a grown space to
// measure again, or a miss), and the record brought up to date after a grown space.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "disttune/fingerprint.hpp"
#include "disttune/store.hpp"

namespace disttune::detail {

/// The stored record for a call, read against the current, pruned candidate list.
struct StoredChoice {
  std::optional<Record> record;      ///< the usable record, if any
  std::optional<std::size_t> best;   ///< its best config's index among the candidates
  /// Candidates (indices) the record never measured: the space grew. When not empty, the
  /// stored best is measured again with them in one round and the faster is kept; a stored
  /// time is never compared with a fresh one.
  std::vector<std::size_t> added;

  /// The candidates to measure for a grown space: the stored best and the added ones, in
  /// candidate order.
  std::vector<std::size_t> remeasured() const;
  /// What the ranks vote on (vote_on_stored_choice), so that one vote settles the plan:
  /// `best` for a hit; for a grown space, a number above every index derived from
  /// (best, added); nullopt for a miss.
  std::optional<std::size_t> vote() const;
};

/// Loads the record for `id` and reads it against `candidates`. A best config that is not
/// among them is a miss (warned). A record whose deps differ from `fingerprint.deps` warns
/// and is used, or is a miss when `version_check` is set.
StoredChoice load_stored_choice(const DiskStore& store, const RecordId& id,
                                const std::vector<std::string>& candidates,
                                const Fingerprint& fingerprint, bool version_check);

/// The results for every candidate after a grown space was measured: `fresh` (the results
/// of choice.remeasured(), in that order) for those, the stored results for the others.
std::vector<CandidateResult> merged_results(const StoredChoice& choice,
                                            const std::vector<std::string>& candidates,
                                            const std::vector<CandidateResult>& fresh);

}  // namespace disttune::detail
