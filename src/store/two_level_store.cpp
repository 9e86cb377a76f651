// TwoLevelStore: local directory, then shared store, then a miss; a shared hit is copied down.
#include "store/two_level_store.hpp"

#include <set>


namespace disttune::detail {

TwoLevelStore::TwoLevelStore(std::optional<DiskStore> local, std::shared_ptr<Store> shared)
    : local_(std::move(local)), shared_(std::move(shared)) {}

std::optional<TwoLevelStore::Found> TwoLevelStore::find(const RecordId& id,
                                                        const std::vector<std::string>& candidates,
                                                        const Fingerprint& fingerprint,
                                                        bool version_check,
                                                        bool local_writer) const {
  if (local_) {
    StoredChoice choice = load_stored_choice(*local_, id, candidates, fingerprint, version_check);
    if (choice.record) return Found{std::move(choice), Level::local, local_->record_path(id)};
  }
  if (!shared_) return std::nullopt;
  StoredChoice choice = load_stored_choice(*shared_, id, candidates, fingerprint, version_check);
  if (!choice.record) return std::nullopt;
  Found found{std::move(choice), Level::shared, std::nullopt};
  if (local_ && local_writer) found.local_path = local_->save(*found.choice.record);
  return found;
}

std::vector<Record> TwoLevelStore::records_of(const RecordId& like, std::size_t most) const {
  std::vector<Record> records;
  if (local_) {
    records = local_->records_of(like.function_name, like.function_digest, like.hardware_digest, most, {});
  }
  if (!shared_) return records;
  // The shared store's records of keys the directory lacks (its own copies are not fetched).
  std::set<std::string> known;
  for (const Record& record : records) known.insert(record.id.file_id());
  for (Record& record :
       shared_->records_of(like.function_name, like.function_digest, like.hardware_digest, most, known)) {
    records.push_back(std::move(record));
  }
  return records;
}

std::optional<std::filesystem::path> TwoLevelStore::save(const Record& record, bool local_writer,
                                                         bool job_writer) const {
  std::optional<std::filesystem::path> path;
  if (local_ && local_writer) path = local_->save(record);
  if (shared_ && job_writer) shared_->write(record);
  return path;
}

}  // namespace disttune::detail
