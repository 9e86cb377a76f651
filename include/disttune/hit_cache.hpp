// HitCache: the key -> entry map that the C++ hit paths search without a lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "disttune/key_hash.hpp"

namespace disttune::detail {

/// Key -> entry map that readers search without a lock: each insert publishes a new
/// immutable snapshot (an open-addressing table, power-of-two sized, so a lookup is a hash,
/// a mask and a compare); old snapshots live as long as the cache, so a snapshot's address
/// names one state of the cache, and an entry found stays readable. That costs one table per
/// insert: keys are few (Autotuned inserts once per key; KeyMemo once per key and again per
/// key launched after each epoch change).
/// Writers hold a mutex of the owner's; readers take none.
template <class Key, class Entry>
class HitCache {
 public:
  struct Slot {
    std::optional<Key> key;
    Entry entry{};
  };
  /// One state of the cache.
  struct Snapshot {
    std::vector<Slot> slots;
  };

  /// The latest snapshot; nullptr while the cache is empty.
  const Snapshot* current() const { return current_.load(std::memory_order_acquire); }

  /// The entry of `key` in `snapshot`, or nullptr.
  static const Entry* find(const Snapshot* snapshot, const Key& key) {
    if (snapshot == nullptr) return nullptr;
    const std::size_t mask = snapshot->slots.size() - 1;
    for (std::size_t i = KeyHash<Key>{}(key) & mask;; i = (i + 1) & mask) {
      const Slot& slot = snapshot->slots[i];
      if (!slot.key) return nullptr;
      if (*slot.key == key) return &slot.entry;
    }
  }

  /// Publishes a snapshot with `key` -> `entry` (replacing an older entry of `key`). Caller
  /// holds the writers' mutex.
  void insert(const Key& key, const Entry& entry) {
    const Snapshot* current = current_.load(std::memory_order_acquire);
    std::vector<std::pair<Key, Entry>> entries;
    if (current != nullptr) {
      for (const Slot& slot : current->slots) {
        if (slot.key && !(*slot.key == key)) entries.emplace_back(*slot.key, slot.entry);
      }
    }
    entries.emplace_back(key, entry);
    std::size_t capacity = 4;
    while (capacity < 2 * entries.size()) capacity *= 2;
    auto next = std::make_unique<Snapshot>();
    next->slots.resize(capacity);
    for (auto& [k, e] : entries) {
      std::size_t i = KeyHash<Key>{}(k) & (capacity - 1);
      while (next->slots[i].key) i = (i + 1) & (capacity - 1);
      next->slots[i].key.emplace(std::move(k));
      next->slots[i].entry = std::move(e);
    }
    current_.store(next.get(), std::memory_order_release);
    snapshots_.push_back(std::move(next));
  }

 private:
  std::atomic<const Snapshot*> current_{nullptr};
  std::vector<std::unique_ptr<Snapshot>> snapshots_;
};

}  // namespace disttune::detail
