// TwoLevelStore: local directory, then shared store, then a miss; a shared hit is copied down.
#include "store/two_level_store.hpp"

#include "store/stored_choice.hpp"

namespace disttune::detail {

TwoLevelStore::TwoLevelStore(std::optional<DiskStore> local, std::shared_ptr<Store> shared)
    : local_(std::move(local)), shared_(std::move(shared)) {}

std::optional<TwoLevelStore::Found> TwoLevelStore::find(const RecordId& id,
                                                        const std::vector<std::string>& candidates,
                                                        const Fingerprint& fingerprint,
                                                        bool version_check,
                                                        bool local_writer) const {
  std::optional<std::size_t> choice;
  if (local_) {
    if (auto record =
            load_usable_record(*local_, id, candidates, fingerprint, version_check, choice)) {
      return Found{std::move(*record), *choice, Level::local, local_->record_path(id)};
    }
  }
  if (!shared_) return std::nullopt;
  auto record = load_usable_record(*shared_, id, candidates, fingerprint, version_check, choice);
  if (!record) return std::nullopt;
  Found found{std::move(*record), *choice, Level::shared, std::nullopt};
  if (local_ && local_writer) found.local_path = local_->save(found.record);
  return found;
}

std::optional<std::filesystem::path> TwoLevelStore::save(const Record& record, bool local_writer,
                                                         bool job_writer) const {
  std::optional<std::filesystem::path> path;
  if (local_ && local_writer) path = local_->save(record);
  if (shared_ && job_writer) shared_->write(record);
  return path;
}

}  // namespace disttune::detail
