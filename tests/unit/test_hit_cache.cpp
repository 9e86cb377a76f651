// HitCache: lookups by key value, colliding hashes, replacement, what a miss knows, memory
// linear in the keys, readers on other threads beside a writer.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <latch>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/hit_cache.hpp"

namespace disttune {
namespace {

/// A key whose every value hashes alike, so every lookup walks the probe sequence.
struct Colliding {
  int id = 0;
  bool operator==(const Colliding&) const = default;
};

/// A key whose hash is its number, so the tests know which slot its probe starts at.
struct Placing {
  std::uint64_t n = 0;
  bool operator==(const Placing&) const = default;
};

}  // namespace

template <>
struct KeyHash<Colliding> {
  std::size_t operator()(const Colliding&) const { return 5; }
};
template <>
struct KeyHash<Placing> {
  std::size_t operator()(const Placing& key) const { return key.n; }
};

namespace {

using Cache = detail::HitCache<Colliding, std::size_t>;
using Placed = detail::HitCache<Placing, std::size_t>;

/// The entry `cache` holds for `key`, if any.
template <class Key, class Entry>
std::optional<Entry> found(const detail::HitCache<Key, Entry>& cache, const Key& key) {
  Entry entry{};
  return cache.find(key, entry) ? std::optional<Entry>(entry) : std::nullopt;
}

std::optional<std::size_t> lookup(const Cache& cache, int id) { return found(cache, Colliding{id}); }

TEST(HitCache, AnEmptyCacheFindsNothingAndHoldsNoSlot) {
  Cache cache;
  EXPECT_EQ(lookup(cache, 1), std::nullopt);
  EXPECT_EQ(cache.held_slots(), 0u);
}

TEST(HitCache, KeysWhoseHashesCollideKeepTheirOwnEntries) {
  Cache cache;
  for (int id = 0; id < 9; ++id) cache.insert(Colliding{id}, static_cast<std::size_t>(100 + id));
  for (int id = 0; id < 9; ++id) EXPECT_EQ(lookup(cache, id), 100u + id) << id;
  EXPECT_EQ(lookup(cache, 9), std::nullopt);
}

TEST(HitCache, AnInsertReplacesTheKeysEntryInPlaceAndKeepsTheOthers) {
  Cache cache;
  cache.insert(Colliding{1}, 10);
  cache.insert(Colliding{2}, 20);
  const std::size_t held = cache.held_slots();
  cache.insert(Colliding{1}, 11);
  EXPECT_EQ(lookup(cache, 1), 11u);
  EXPECT_EQ(lookup(cache, 2), 20u);
  EXPECT_EQ(cache.held_slots(), held);
}

TEST(HitCache, AMissOnAnEmptyCacheStaysKnownUntilTheFirstInsert) {
  Placed cache;
  std::size_t entry = 0;
  Placed::Miss miss;
  EXPECT_FALSE(cache.find(Placing{1}, entry, miss));
  EXPECT_TRUE(cache.still_missing(miss));
  cache.insert(Placing{0}, 100);
  EXPECT_FALSE(cache.still_missing(miss));
}

TEST(HitCache, AMissStaysKnownUntilAKeyFillsTheSlotItsProbeEndedIn) {
  Placed cache;
  for (std::uint64_t n = 0; n < 5; ++n) cache.insert(Placing{n}, 100 + n);  // 16 slots now
  std::size_t entry = 0;
  Placed::Miss miss;
  ASSERT_FALSE(cache.find(Placing{5}, entry, miss));  // its probe ends at slot 5
  const std::size_t held = cache.held_slots();
  cache.insert(Placing{6}, 106);  // slot 6
  EXPECT_TRUE(cache.still_missing(miss));
  cache.insert(Placing{21}, 121);  // 21 & 15 == 5: slot 5
  ASSERT_EQ(cache.held_slots(), held);  // the same table
  EXPECT_FALSE(cache.still_missing(miss));
  ASSERT_FALSE(cache.find(Placing{5}, entry, miss));  // now past 21 and 6, at slot 7
  EXPECT_TRUE(cache.still_missing(miss));
}

TEST(HitCache, AMissIsStaleOnceTheTableGrows) {
  Placed cache;
  cache.insert(Placing{0}, 100);  // 4 slots
  std::size_t entry = 0;
  Placed::Miss miss;
  ASSERT_FALSE(cache.find(Placing{3}, entry, miss));
  cache.insert(Placing{1}, 101);
  EXPECT_TRUE(cache.still_missing(miss));
  const std::size_t held = cache.held_slots();
  cache.insert(Placing{6}, 106);  // a third key: the table grows to 8 slots (6 & 3 is not 3)
  ASSERT_GT(cache.held_slots(), held);
  EXPECT_FALSE(cache.still_missing(miss));
  ASSERT_FALSE(cache.find(Placing{3}, entry, miss));
  EXPECT_TRUE(cache.still_missing(miss));
}

/// An entry of three words (read under its slot's seqlock) whose words must agree.
struct Stamp {
  std::uint64_t key = 0;
  std::uint64_t round = 0;
  std::uint64_t sum = 0;  ///< key + round: a read mixing two writes shows here
};

Stamp stamp(std::uint64_t key, std::uint64_t round) { return {key, round, key + round}; }

TEST(HitCache, AHundredThousandKeysHoldSlotsLinearInTheirNumber) {
  constexpr std::uint64_t kKeys = 100'000;
  detail::HitCache<std::uint64_t, Stamp> cache;
  for (std::uint64_t key = 0; key < kKeys; ++key) {
    cache.insert(key, stamp(key, 0));
    // The live table is under 4 slots a key, the outgrown ones fewer than it together (a
    // table kept per insert, as the cache once did, held about 1.5 x keys^2 slots).
    ASSERT_LE(cache.held_slots(), 8 * (key + 1)) << key + 1 << " keys";
  }
  const std::size_t held = cache.held_slots();
  EXPECT_EQ(held, 524'284u);  // 4 + 8 + ... + 262,144: the live table is the first twice the keys
  // Later entries of every key (KeyMemo notes one per key and epoch) are written in place.
  for (std::uint64_t round = 1; round <= 3; ++round) {
    for (std::uint64_t key = 0; key < kKeys; ++key) cache.insert(key, stamp(key, round));
  }
  EXPECT_EQ(cache.held_slots(), held);
  for (std::uint64_t key = 0; key < kKeys; ++key) {
    const std::optional<Stamp> entry = found(cache, key);
    ASSERT_TRUE(entry) << key;
    EXPECT_EQ(entry->round, 3u);
    EXPECT_EQ(entry->sum, key + 3);
  }
  EXPECT_FALSE(found(cache, kKeys));
}

/// What a reader made of one entry.
struct Read {
  std::uint64_t key;
  std::uint64_t round;
  bool whole;  ///< its parts agree
};

/// Readers on three threads look up published keys while this thread inserts 20,000 keys (the
/// table grows under them; after every 256 the writer waits for 256 more lookups, so the
/// readers run all along) and then writes the entries of 4 of them over, round after round,
/// until the readers have made 3,000,000 lookups meanwhile; every other lookup is of those 4.
/// Every key published before a lookup is found, no entry is torn, and no reader sees a
/// key's entry go back to an older round.
template <class Entry, class Encode, class Decode>
void check_readers_beside_a_writer(Encode encode, Decode decode) {
  constexpr std::uint64_t kKeys = 20'000;
  constexpr std::uint64_t kHotKeys = 4;
  constexpr std::uint64_t kLookupsWhileRewriting = 3'000'000;
  constexpr int kReaders = 3;
  detail::HitCache<std::uint64_t, Entry> cache;
  std::atomic<std::uint64_t> published{0};
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> lookups{0};  ///< counted in steps of 256
  std::atomic<std::uint64_t> missing{0}, torn{0}, backwards{0};
  std::latch started(kReaders + 1);
  const auto reader = [&](std::uint64_t state) {
    std::vector<std::uint64_t> last_round(kKeys, 0);
    started.arrive_and_wait();
    for (std::uint64_t lookup = 0; !done.load(std::memory_order_acquire); ++lookup) {
      const std::uint64_t keys = published.load(std::memory_order_acquire);
      if (keys == 0) continue;
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const std::uint64_t key = (state >> 33) % (lookup % 2 == 0 ? keys : std::min(keys, kHotKeys));
      Entry entry{};
      const bool hit = cache.find(key, entry);
      if (lookup % 256 == 255) lookups += 256;
      if (!hit) {
        ++missing;
        continue;
      }
      const Read read = decode(entry);
      if (!read.whole || read.key != key) {
        ++torn;
      } else if (read.round < last_round[key]) {
        ++backwards;
      } else {
        last_round[key] = read.round;
      }
    }
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) readers.emplace_back(reader, 17 + r);
  started.arrive_and_wait();
  const auto wait_for_lookups = [&](std::uint64_t more) {
    const std::uint64_t until = lookups.load() + more;
    while (lookups.load() < until) std::this_thread::yield();
  };
  for (std::uint64_t key = 0; key < kKeys; ++key) {
    cache.insert(key, encode(key, 0));
    published.store(key + 1, std::memory_order_release);
    if (key % 256 == 255) wait_for_lookups(256);
  }
  const std::uint64_t rewrites_end = lookups.load() + kLookupsWhileRewriting;
  std::uint64_t rounds = 0;
  while (lookups.load(std::memory_order_relaxed) < rewrites_end) {
    ++rounds;
    for (std::uint64_t key = 0; key < kHotKeys; ++key) cache.insert(key, encode(key, rounds));
  }
  done.store(true, std::memory_order_release);
  for (std::thread& thread : readers) thread.join();
  EXPECT_EQ(missing.load(), 0u);
  EXPECT_EQ(torn.load(), 0u);
  EXPECT_EQ(backwards.load(), 0u);
  for (std::uint64_t key = 0; key < kKeys; ++key) {
    const std::optional<Entry> entry = found(cache, key);
    ASSERT_TRUE(entry) << key;
    EXPECT_EQ(decode(*entry).round, key < kHotKeys ? rounds : 0u);
  }
}

TEST(HitCache, ReadersBesideAWriterSeeEveryPublishedKeyAndNoTornEntryOfThreeWords) {
  check_readers_beside_a_writer<Stamp>(stamp, [](const Stamp& s) {
    return Read{s.key, s.round, s.sum == s.key + s.round};
  });
}

TEST(HitCache, ReadersBesideAWriterSeeEveryPublishedKeyAndNoTornEntryOfOneWord) {
  // The word: the key in the high half, the round in the low half.
  check_readers_beside_a_writer<std::uint64_t>(
      [](std::uint64_t key, std::uint64_t round) { return key << 32 | round; },
      [](std::uint64_t word) { return Read{word >> 32, word & 0xffff'ffffu, true}; });
}

}  // namespace
}  // namespace disttune
