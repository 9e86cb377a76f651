// StoreChain: the stores in order, then a miss; a hit is copied into the stores before it.
#include "store/store_chain.hpp"

#include <set>
#include <utility>

namespace disttune::detail {

StoreChain::StoreChain(std::vector<ChainedStore> stores) {
  for (ChainedStore& chained : stores) {
    std::shared_ptr<const DiskStore> directory =
        std::dynamic_pointer_cast<const DiskStore>(chained.store);
    links_.push_back(Link{.chained = std::move(chained), .directory = std::move(directory)});
  }
}

StoreChain StoreChain::from_urls(const std::vector<std::string>& urls) {
  std::vector<ChainedStore> stores;
  for (const std::string& url : urls) stores.push_back(make_chained_store(url));
  return StoreChain(std::move(stores));
}

std::optional<std::filesystem::path> StoreChain::write(const Link& link, const Record& record) {
  if (link.directory) return link.directory->save(record);
  link.chained.store->write(record);
  return std::nullopt;
}

std::optional<StoreChain::Found> StoreChain::find(const RecordId& id,
                                                  const std::vector<std::string>& candidates,
                                                  const Fingerprint& fingerprint,
                                                  bool version_check, StoreWriter writer) const {
  for (std::size_t answered = 0; answered < links_.size(); ++answered) {
    const Link& link = links_[answered];
    StoredChoice choice =
        load_stored_choice(*link.chained.store, id, candidates, fingerprint, version_check);
    if (!choice.record) continue;
    Found found{
        .choice = std::move(choice), .source = link.chained.source, .record_path = std::nullopt};
    for (std::size_t above = 0; above < answered; ++above) {
      if (!writer.writes(links_[above].chained.reach)) continue;
      std::optional<std::filesystem::path> copy = write(links_[above], *found.choice.record);
      if (!found.record_path) found.record_path = std::move(copy);
    }
    if (!found.record_path && link.directory) found.record_path = link.directory->record_path(id);
    return found;
  }
  return std::nullopt;
}

std::optional<std::filesystem::path> StoreChain::save(const Record& record,
                                                      StoreWriter writer) const {
  std::optional<std::filesystem::path> path;
  for (const Link& link : links_) {
    if (!writer.writes(link.chained.reach)) continue;
    std::optional<std::filesystem::path> written = write(link, record);
    if (!path) path = std::move(written);
  }
  return path;
}

std::vector<Record> StoreChain::records_of(const RecordId& like, std::size_t most) const {
  std::vector<Record> records;
  std::set<std::string> known;  // the file ids of the stores read so far
  for (const Link& link : links_) {
    for (Record& record : link.chained.store->records_of(like, most, known)) {
      known.insert(record.id.file_id());
      records.push_back(std::move(record));
    }
  }
  return records;
}

void StoreChain::check_function_name(const std::string& function_name) const {
  for (const Link& link : links_) {
    if (link.directory) (void)link.directory->function_dir(function_name);
  }
}

std::optional<std::filesystem::path> StoreChain::directory_root() const {
  for (const Link& link : links_) {
    if (link.directory) return link.directory->root();
  }
  return std::nullopt;
}

std::optional<std::filesystem::path> StoreChain::log_dir(const std::string& function_name) const {
  for (const Link& link : links_) {
    if (link.directory) return link.directory->usable_function_dir(function_name);
  }
  return std::nullopt;
}

}  // namespace disttune::detail
