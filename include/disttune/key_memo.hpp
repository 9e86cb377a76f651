// KeyMemo: what a tunable kernel knows of each key value it has launched with: the key's
// canonical text, built once, and the config its cache held for the key in some epoch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <string>

#include "disttune/config.hpp"
#include "disttune/hit_cache.hpp"

namespace disttune::detail {

/// Per key value (a Key for which EqualKeysDescribeAlike holds, so the value decides the
/// text): its canonical text and the config index read for it from a cache whose answers
/// hold while its epoch stays the same (KernelTuningState::epoch). Readers take no lock and
/// get a copy of the entry; the texts stay where they are as long as the memo. Thread-safe.
template <class Key>
class KeyMemo {
 public:
  /// The epoch of an entry that holds only the text.
  static constexpr std::uint64_t kNoConfig = std::numeric_limits<std::uint64_t>::max();
  struct Entry {
    const std::string* text = nullptr;  ///< canonical_json(describe(key))
    std::size_t config = 0;             ///< the config index the cache held in `epoch`
    std::uint64_t epoch = kNoConfig;
  };

  /// Copies what is known of `key` into `known` and returns true, or returns false.
  bool find(const Key& key, Entry& known) const { return entries_.find(key, known); }

  /// The canonical text of `key`: that of `known` (find(key)) if given, else built now and
  /// kept. Throws what canonical_json throws (nothing is kept then).
  const std::string& text(const Key& key, const Entry* known) {
    if (known != nullptr) return *known->text;
    std::string built = canonical_json(describe(key));
    std::lock_guard lock(mutex_);
    if (Entry now; entries_.find(key, now)) return *now.text;
    const std::string& kept = texts_.emplace_back(std::move(built));
    entries_.insert(key, Entry{&kept, 0, kNoConfig});
    return kept;
  }

  /// Notes that the cache held config `config` for `key` when its epoch was `epoch` (read
  /// before the cache was); `text` is text(key, ...). An entry of a later epoch is kept.
  void note_config(const Key& key, const std::string& text, std::size_t config, std::uint64_t epoch) {
    std::lock_guard lock(mutex_);
    if (Entry now; entries_.find(key, now) && now.epoch != kNoConfig && now.epoch > epoch) return;
    entries_.insert(key, Entry{&text, config, epoch});
  }

 private:
  HitCache<Key, Entry> entries_;
  std::deque<std::string> texts_;  ///< the texts entries point to (a deque never moves them)
  std::mutex mutex_;               ///< held by writers
};

}  // namespace disttune::detail
