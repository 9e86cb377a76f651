// Stored choice: a record is a hit for the same candidates, a re-measure of its best with
// the new ones for a grown space, and a miss otherwise (or, if asked, for other deps).
#include "store/stored_choice.hpp"

#include <algorithm>
#include <stdexcept>

#include "report/warning.hpp"

namespace disttune::detail {
namespace {

// Vote numbers of a grown space lie in [2^51, 2^52): above every index, exact as a double.
constexpr std::size_t kGrownSpaceVote = std::size_t{1} << 51;

std::optional<std::size_t> index_of(const std::vector<std::string>& candidates,
                                    const std::string& config) {
  const auto found = std::find(candidates.begin(), candidates.end(), config);
  if (found == candidates.end()) return std::nullopt;
  return static_cast<std::size_t>(found - candidates.begin());
}

}  // namespace

std::vector<std::size_t> StoredChoice::remeasured() const {
  std::vector<std::size_t> indices = added;
  if (best) indices.push_back(*best);
  std::sort(indices.begin(), indices.end());
  return indices;
}

std::optional<std::size_t> StoredChoice::vote() const {
  if (!best) return std::nullopt;
  if (added.empty()) return best;
  std::vector<std::string> parts;
  for (const std::size_t index : remeasured()) parts.push_back(std::to_string(index));
  parts.push_back("best " + std::to_string(*best));
  const std::string digest = digest_of_parts(parts);
  return kGrownSpaceVote + (std::stoull(digest.substr(0, 12), nullptr, 16) % kGrownSpaceVote);
}

StoredChoice load_stored_choice(const DiskStore& store, const RecordId& id,
                                const std::vector<std::string>& candidates,
                                const Fingerprint& fingerprint, bool version_check) {
  StoredChoice choice;
  std::optional<Record> record = store.load(id);
  if (!record) return choice;
  const std::string& best = record->candidates.at(record->best_index).config;
  const std::optional<std::size_t> best_index = index_of(candidates, best);
  if (!best_index) {
    warn("stored best config " + best + " of '" + id.function_name +
         "' is not a candidate of the current config space; tuning again");
    return choice;
  }
  if (record->deps != fingerprint.deps) {
    const std::string mismatch = "record " + store.record_path(id).string() +
                                 " was made with deps " + record->deps.dump() + ", now " +
                                 fingerprint.deps.dump();
    if (version_check) {
      warn(mismatch + "; tuning again (TRITON_DIST_AUTOTUNE_VERSION_CHECK=1)");
      return choice;
    }
    warn(mismatch + "; using it (set TRITON_DIST_AUTOTUNE_VERSION_CHECK=1 to re-tune)");
  }
  std::vector<std::string> stored;
  for (const CandidateResult& result : record->candidates) stored.push_back(result.config);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!index_of(stored, candidates[i])) choice.added.push_back(i);
  }
  choice.best = best_index;
  choice.record = std::move(record);
  return choice;
}

std::vector<CandidateResult> merged_results(const StoredChoice& choice,
                                            const std::vector<std::string>& candidates,
                                            const std::vector<CandidateResult>& fresh) {
  const std::vector<std::size_t> measured = choice.remeasured();
  if (!choice.record || fresh.size() != measured.size()) {
    throw std::logic_error("disttune: merged_results needs a record and one result per re-measure");
  }
  std::vector<CandidateResult> results;
  std::size_t next_fresh = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (next_fresh < measured.size() && measured[next_fresh] == i) {
      results.push_back(fresh[next_fresh++]);
      continue;
    }
    const auto stored = std::find_if(
        choice.record->candidates.begin(), choice.record->candidates.end(),
        [&](const CandidateResult& result) { return result.config == candidates[i]; });
    if (stored == choice.record->candidates.end()) {
      throw std::logic_error("disttune: candidate " + candidates[i] + " is neither stored nor measured");
    }
    results.push_back(*stored);
  }
  return results;
}

}  // namespace disttune::detail
