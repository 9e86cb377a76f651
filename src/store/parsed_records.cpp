// ParsedRecords: a listing's parses, kept for the next listing of the same directory.
#include "store/parsed_records.hpp"

#include <utility>

namespace disttune::detail {

std::shared_ptr<const RecordRead> ParsedRecords::parse(const std::string& dir, const std::string& name,
                                                       std::string bytes) {
  std::lock_guard lock(mutex_);
  Directory& directory = directories_[dir];
  for (auto* listing : {&directory.current, &directory.previous}) {
    const auto seen = listing->find(name);
    if (seen == listing->end() || seen->second.bytes != bytes) continue;
    std::shared_ptr<const RecordRead> read = seen->second.read;
    if (listing == &directory.previous) {
      directory.current_bytes += seen->second.bytes.size();
      directory.current.insert_or_assign(name, std::move(seen->second));
      directory.previous.erase(seen);
    }
    return read;
  }
  auto read = std::make_shared<const RecordRead>(parse_record(bytes));
  if (directory.current.size() < kMostRemembered &&
      directory.current_bytes + bytes.size() <= kMostRememberedBytes && !directory.current.contains(name)) {
    directory.current_bytes += bytes.size();
    directory.current.emplace(name, Parsed{std::move(bytes), read});
  }
  return read;
}

void ParsedRecords::end_listing(const std::string& dir) {
  std::lock_guard lock(mutex_);
  Directory& directory = directories_[dir];
  directory.previous = std::move(directory.current);
  directory.current.clear();
  directory.current_bytes = 0;
}

}  // namespace disttune::detail
