// HitCache: the key -> config index map that the C++ hit paths search without a lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "disttune/key_hash.hpp"

namespace disttune::detail {

/// Key -> config index map that readers search without a lock: each insert publishes a new
/// immutable snapshot (an open-addressing table, power-of-two sized, so a lookup is a hash,
/// a mask and a compare); old snapshots live as long as the cache (keys are few), so a
/// snapshot's address names one state of the cache. Each snapshot carries the epoch of the
/// source its entries were read from (0 where the cache is the only source): an insert in a
/// later epoch starts an empty table, one in an earlier epoch is dropped, and a reader that
/// knows its source's epoch ignores a snapshot of another one. Writers hold a mutex of the
/// owner's; readers take none.
template <class Key>
class HitCache {
 public:
  struct Slot {
    std::optional<Key> key;
    std::size_t config = 0;
  };
  /// One state of the cache.
  struct Snapshot {
    std::uint64_t epoch = 0;
    std::vector<Slot> slots;
  };

  /// The latest snapshot; nullptr while the cache is empty.
  const Snapshot* current() const { return current_.load(std::memory_order_acquire); }

  /// The config index of `key` in `snapshot`, or nullptr.
  static const std::size_t* find(const Snapshot* snapshot, const Key& key) {
    if (snapshot == nullptr) return nullptr;
    const std::size_t mask = snapshot->slots.size() - 1;
    for (std::size_t i = KeyHash<Key>{}(key) & mask;; i = (i + 1) & mask) {
      const Slot& slot = snapshot->slots[i];
      if (!slot.key) return nullptr;
      if (*slot.key == key) return &slot.config;
    }
  }

  /// Publishes a snapshot with `key` -> `config` (replacing an older entry of `key`), read
  /// from the source in `epoch`. Caller holds the writers' mutex.
  void insert(const Key& key, std::size_t config, std::uint64_t epoch = 0) {
    const Snapshot* current = current_.load(std::memory_order_acquire);
    std::vector<std::pair<Key, std::size_t>> entries;
    if (current != nullptr && current->epoch > epoch) return;  // read before the source changed
    if (current != nullptr && current->epoch == epoch) {
      for (const Slot& slot : current->slots) {
        if (slot.key && !(*slot.key == key)) entries.emplace_back(*slot.key, slot.config);
      }
    }
    entries.emplace_back(key, config);
    std::size_t capacity = 4;
    while (capacity < 2 * entries.size()) capacity *= 2;
    auto next = std::make_unique<Snapshot>();
    next->epoch = epoch;
    next->slots.resize(capacity);
    for (auto& [k, c] : entries) {
      std::size_t i = KeyHash<Key>{}(k) & (capacity - 1);
      while (next->slots[i].key) i = (i + 1) & (capacity - 1);
      next->slots[i].key.emplace(std::move(k));
      next->slots[i].config = c;
    }
    current_.store(next.get(), std::memory_order_release);
    snapshots_.push_back(std::move(next));
  }

 private:
  std::atomic<const Snapshot*> current_{nullptr};
  std::vector<std::unique_ptr<Snapshot>> snapshots_;
};

}  // namespace disttune::detail
