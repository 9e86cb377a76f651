// HitCache: the key -> entry map that the C++ hit paths search without a lock.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "disttune/key_hash.hpp"

namespace disttune::detail {

/// Key -> entry map that readers search without a lock, beside one writer at a time (writers
/// hold a mutex of the owner's). An open-addressing table, power-of-two sized and at most half
/// full, so a lookup is a hash, a mask and a compare; a reader copies the entry out, so it
/// holds nothing of the cache once find() returns.
///
/// Memory is linear in the number of keys. A new key is written into the live table's empty
/// slot and then published (the slot's version, a release store); a key's later entry is
/// written over the old one in place (a seqlock on the slot's version where the entry is more
/// than one word), so neither adds a table. When the table is half full, a table of twice the
/// size is built from it and published; the outgrown table stays readable for a reader that
/// loaded it before, and is freed with the cache (so a Miss never names a table that has
/// been reused). The outgrown tables together hold fewer
/// slots than the live one (held_slots() < 8 x keys); freeing them earlier would need each
/// reader to announce itself with a fence, which the hit path would pay on every call.
///
/// `Entry` is trivially copyable (it is copied word by word). A reader sees, for each key, an
/// entry that some insert wrote and the cache held while the reader's find() ran.
template <class Key, class Entry>
class HitCache {
  static_assert(std::is_trivially_copyable_v<Entry> && std::is_default_constructible_v<Entry>,
                "disttune::detail::HitCache copies entries word by word");
  static constexpr std::size_t kWords = (sizeof(Entry) + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t);

 public:
  HitCache() = default;
  HitCache(const HitCache&) = delete;
  HitCache& operator=(const HitCache&) = delete;

  class Miss;

  /// Copies `key`'s entry into `entry` and returns true, or returns false (`entry` untouched).
  /// Lock-free. (A flag and an out-parameter, not a std::optional: an optional built in two
  /// stores and read back in one stalls the hit path on store forwarding, +10 ns a call.)
  bool find(const Key& key, Entry& entry) const {
    Miss unused;
    return find(key, entry, unused);
  }
  /// find(), noting in `miss`, when it returns false, where the probe for `key` ended.
  bool find(const Key& key, Entry& entry, Miss& miss) const {
    const Table* table = live_.load(std::memory_order_acquire);
    if (table == nullptr) {
      miss = Miss(nullptr, nullptr);
      return false;
    }
    auto [slot, version] = table->probe(key);
    if (version == 0) {
      miss = Miss(table, &slot);
      return false;
    }
    slot.read(entry);
    if constexpr (kWords > 1) {
      for (;;) {  // the seqlock: a read that overlapped a write is read again
        std::atomic_thread_fence(std::memory_order_acquire);
        const std::uint64_t after = slot.version.load(std::memory_order_relaxed);
        if (version % 2 == 0 && after == version) break;
        version = slot.version.load(std::memory_order_acquire);
        slot.read(entry);
      }
    }
    return true;
  }

  /// True if the key whose lookup noted `miss` is still absent, known without a second lookup:
  /// the table is the one it missed in and the empty slot that ended its probe is still empty
  /// (a key inserted since would have filled it; tables are not reused while the cache lives).
  /// False says only that the cache changed there: find() again. Caller holds the writers'
  /// mutex.
  bool still_missing(const Miss& miss) const {
    return live_.load(std::memory_order_relaxed) == miss.table_ &&
           (miss.slot_ == nullptr || miss.slot_->version.load(std::memory_order_relaxed) == 0);
  }

  /// Sets `key`'s entry to `entry` (a new key, or over an older entry of `key`). Caller holds
  /// the writers' mutex.
  void insert(const Key& key, const Entry& entry) {
    if (Table* table = live_.load(std::memory_order_relaxed); table != nullptr) {
      const Probe found = table->probe(key);
      if (found.version != 0) {
        found.slot.overwrite(entry);
        return;
      }
      if (2 * (keys_ + 1) <= table->size()) {
        found.slot.fill(key, entry);
        ++keys_;
        return;
      }
    }
    grow().probe(key).slot.fill(key, entry);
    ++keys_;
  }

  /// The slots of every table the cache holds, the live one and those it outgrew: what its
  /// memory grows with (each slot holds a key and an entry). Caller holds the writers' mutex.
  std::size_t held_slots() const {
    std::size_t slots = 0;
    for (const auto& table : tables_) slots += table->size();
    return slots;
  }

 private:
  struct Slot;
  struct Table;

 public:
  /// Where a lookup found nothing (see still_missing()).
  class Miss {
   public:
    Miss() = default;

   private:
    friend class HitCache;
    Miss(const Table* table, const Slot* slot) : table_(table), slot_(slot) {}
    const Table* table_ = nullptr;
    const Slot* slot_ = nullptr;
  };

 private:
  struct Slot {
    /// 0: empty; even: holds `key`; odd: its entry is being written over (seqlock).
    std::atomic<std::uint64_t> version{0};
    std::optional<Key> key;  ///< written before the first version is published, then fixed
    std::atomic<std::uint64_t> words[kWords] = {};  ///< the entry's bytes

    /// Word by word into `entry` (each word stored where the entry's fields are then loaded
    /// from: a copy through a buffer would read it back in wider loads, which stall).
    void read(Entry& entry) const {
      auto* bytes = reinterpret_cast<unsigned char*>(&entry);
      for (std::size_t i = 0; i < kWords; ++i) {
        const std::uint64_t word = words[i].load(std::memory_order_acquire);
        std::memcpy(bytes + i * sizeof(word), &word, std::min(sizeof(word), sizeof(Entry) - i * sizeof(word)));
      }
    }
    void write(const Entry& entry) {
      std::uint64_t copy[kWords] = {};
      std::memcpy(copy, &entry, sizeof(Entry));
      for (std::size_t i = 0; i < kWords; ++i) words[i].store(copy[i], std::memory_order_release);
    }
    /// An empty slot takes `key`; readers see it whole from the version's release on.
    void fill(const Key& new_key, const Entry& entry) {
      key.emplace(new_key);
      write(entry);
      version.store(2, std::memory_order_release);
    }
    /// A held key's entry, written over in place.
    void overwrite(const Entry& entry) {
      if constexpr (kWords == 1) {
        write(entry);  // one word: a reader sees the old entry or the new one
      } else {
        const std::uint64_t held = version.load(std::memory_order_relaxed);
        version.store(held + 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        write(entry);
        version.store(held + 2, std::memory_order_release);
      }
    }
  };

  /// Where a probe for a key ended: the slot holding it, or the empty slot where it goes
  /// (version 0, as read: a slot read empty may be filled with another key at once).
  struct Probe {
    Slot& slot;
    std::uint64_t version;
  };

  struct Table {
    explicit Table(std::size_t size) : slots(std::make_unique<Slot[]>(size)), mask(size - 1) {}
    std::size_t size() const { return mask + 1; }
    /// The probe for `key` (it ends: the table is never full).
    Probe probe(const Key& key) const {
      for (std::size_t i = KeyHash<Key>{}(key) & mask;; i = (i + 1) & mask) {
        Slot& slot = slots[i];
        const std::uint64_t version = slot.version.load(std::memory_order_acquire);
        if (version == 0 || *slot.key == key) return {slot, version};
      }
    }
    std::unique_ptr<Slot[]> slots;
    std::size_t mask;
  };

  /// Publishes a table twice the live one's size (4 slots at first) holding its keys.
  Table& grow() {
    const Table* outgrown = live_.load(std::memory_order_relaxed);
    auto next = std::make_unique<Table>(outgrown != nullptr ? 2 * outgrown->size() : 4);
    if (outgrown != nullptr) {
      for (std::size_t i = 0; i < outgrown->size(); ++i) {
        const Slot& slot = outgrown->slots[i];
        if (slot.version.load(std::memory_order_relaxed) == 0) continue;
        Entry entry;
        slot.read(entry);
        next->probe(*slot.key).slot.fill(*slot.key, entry);
      }
    }
    live_.store(next.get(), std::memory_order_release);
    tables_.push_back(std::move(next));
    return *tables_.back();
  }

  std::atomic<Table*> live_{nullptr};
  std::vector<std::unique_ptr<Table>> tables_;  ///< every table published, the live one last
  std::size_t keys_ = 0;                        ///< keys in the live table
};

}  // namespace disttune::detail
