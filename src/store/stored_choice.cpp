// Stored choice: a stored record is used only for the same candidates and, if asked, deps.
#include "store/stored_choice.hpp"

#include <algorithm>

#include "report/warning.hpp"

namespace disttune::detail {

std::optional<Record> load_usable_record(const Store& store, const RecordId& id,
                                         const std::vector<std::string>& candidates,
                                         const Fingerprint& fingerprint, bool version_check,
                                         std::optional<std::size_t>& choice) {
  choice.reset();
  std::optional<Record> record = store.load(id);
  if (!record) return std::nullopt;
  const std::string& best = record->candidates.at(record->best_index).config;
  const auto found = std::find(candidates.begin(), candidates.end(), best);
  if (found == candidates.end()) {
    warn("stored best config " + best + " of '" + id.function_name +
         "' is not a candidate of the current config space; tuning again");
    return std::nullopt;
  }
  if (record->deps != fingerprint.deps) {
    const std::string mismatch = "record " + store.where(id) +
                                 " was made with deps " + record->deps.dump() + ", now " +
                                 fingerprint.deps.dump();
    if (version_check) {
      warn(mismatch + "; tuning again (TRITON_DIST_AUTOTUNE_VERSION_CHECK=1)");
      return std::nullopt;
    }
    warn(mismatch + "; using it (set TRITON_DIST_AUTOTUNE_VERSION_CHECK=1 to re-tune)");
  }
  choice = static_cast<std::size_t>(found - candidates.begin());
  return record;
}

}  // namespace disttune::detail
