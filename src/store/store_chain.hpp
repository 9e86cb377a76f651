// StoreChain: a tuner's stores, read in order; a record found further down is copied up.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "disttune/fingerprint.hpp"
#include "disttune/store.hpp"
#include "disttune/store_chain.hpp"
#include "store/stored_choice.hpp"

namespace disttune::detail {

/// Which stores of the chain this process writes: its node's (StoreReach::node) when it is
/// local rank 0, the job's (StoreReach::job) when it is rank 0.
struct StoreWriter {
  bool node = false;
  bool job = false;
  bool writes(StoreReach reach) const { return reach == StoreReach::node ? node : job; }
};

/// The stores of one tuned function, first read first (store_chain.hpp). Lookups and writes
/// make no collective calls, so ranks that find different things stay in step (the
/// engine's cache vote then decides for all of them).
class StoreChain {
 public:
  StoreChain() = default;
  explicit StoreChain(std::vector<ChainedStore> stores);
  /// The chain of `urls`, each made by make_chained_store().
  static StoreChain from_urls(const std::vector<std::string>& urls);

  /// A usable record read against the current call (a hit or a grown space), and where.
  struct Found {
    StoredChoice choice;  ///< choice.record and choice.best are set
    std::string source;   ///< the answering store's ChainedStore::source ("disk", "redis")
    /// The record's file in the first directory store that holds it: where it was read, or
    /// where it was copied.
    std::optional<std::filesystem::path> record_path;
  };

  /// The first usable record (load_stored_choice's rules) of the stores, in order. It is
  /// copied into each store before the one that answered that `writer` writes.
  std::optional<Found> find(const RecordId& id, const std::vector<std::string>& candidates,
                            const Fingerprint& fingerprint, bool version_check,
                            StoreWriter writer) const;

  /// Writes a fresh record into every store `writer` writes. Returns its file in the first
  /// directory store, if written there.
  std::optional<std::filesystem::path> save(const Record& record, StoreWriter writer) const;

  /// The records of the function's other keys for a warm start (Store::records_of): each
  /// store's, in order, of keys the stores before it lack (those are not fetched); at most
  /// `most` from each store.
  std::vector<Record> records_of(const RecordId& like, std::size_t most) const;

  /// Throws std::invalid_argument for a function name a directory store cannot hold.
  void check_function_name(const std::string& function_name) const;
  /// The first directory store's usable directory for `function_name` (tuning logs go
  /// there); nullopt when the chain has none or it is refused.
  std::optional<std::filesystem::path> log_dir(const std::string& function_name) const;

  /// The root of the first directory store; nullopt when the chain has none.
  std::optional<std::filesystem::path> directory_root() const;

  /// Whether the chain has any store.
  bool any() const { return !links_.empty(); }

 private:
  struct Link {
    ChainedStore chained;
    std::shared_ptr<const DiskStore> directory;  ///< set when the store is a directory store
  };
  /// Writes `record` into link `link`; its file when it is a directory store.
  static std::optional<std::filesystem::path> write(const Link& link, const Record& record);

  std::vector<Link> links_;
};

}  // namespace disttune::detail
