// Two-level store: the local directory first, then a shared store (Redis); writes go to both.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "disttune/fingerprint.hpp"
#include "disttune/store.hpp"
#include "store/stored_choice.hpp"

namespace disttune::detail {

/// The stores of one tuned function: an optional local DiskStore and an optional shared store.
/// Lookups and writes make no collective calls, so ranks that find different things stay
/// in step (the engine's cache vote then decides for all of them).
class TwoLevelStore {
 public:
  TwoLevelStore() = default;
  TwoLevelStore(std::optional<DiskStore> local, std::shared_ptr<Store> shared);

  /// Which level answered a lookup.
  enum class Level { local, shared };
  /// A usable record read against the current call (a hit or a grown space), and where.
  struct Found {
    StoredChoice choice;  ///< choice.record and choice.best are set
    Level level = Level::local;
    /// The local record: where it was read, or where a shared record was copied.
    std::optional<std::filesystem::path> local_path;
  };

  /// The first usable record (load_stored_choice's rules) of the local directory, then of
  /// the shared store. A record found only in the shared store is copied into the local
  /// directory when `local_writer` (one process per node writes its directory).
  std::optional<Found> find(const RecordId& id, const std::vector<std::string>& candidates,
                            const Fingerprint& fingerprint, bool version_check,
                            bool local_writer) const;

  /// Writes a fresh record into the local directory when `local_writer` and into the shared
  /// store when `job_writer` (one process per job). Returns the local path if written.
  std::optional<std::filesystem::path> save(const Record& record, bool local_writer,
                                            bool job_writer) const;

  /// The records of the function's other keys for a warm start (Store::records_of): the
  /// local directory's, then the shared store's of keys the directory lacks (those it has
  /// are not fetched); at most `most` from each store.
  std::vector<Record> records_of(const RecordId& like, std::size_t most) const;

  /// Whether any store is configured.
  bool any() const { return local_.has_value() || shared_ != nullptr; }
  const std::optional<DiskStore>& local() const { return local_; }

 private:
  std::optional<DiskStore> local_;
  std::shared_ptr<Store> shared_;
};

}  // namespace disttune::detail
