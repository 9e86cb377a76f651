// HitCache: lookups by key value, keys whose hashes collide, replacement, old snapshots.
#include <cstddef>
#include <optional>

#include <gtest/gtest.h>

#include "disttune/hit_cache.hpp"

namespace disttune {
namespace {

/// A key whose every value hashes alike, so every lookup walks the probe sequence.
struct Colliding {
  int id = 0;
  bool operator==(const Colliding&) const = default;
};

}  // namespace

template <>
struct KeyHash<Colliding> {
  std::size_t operator()(const Colliding&) const { return 5; }
};

namespace {

using Cache = detail::HitCache<Colliding, std::size_t>;

std::optional<std::size_t> lookup(const Cache::Snapshot* snapshot, int id) {
  const std::size_t* hit = Cache::find(snapshot, Colliding{id});  // the entry: a config index
  return hit ? std::optional<std::size_t>(*hit) : std::nullopt;
}

TEST(HitCache, AnEmptyCacheHasNoSnapshotAndFindsNothing) {
  Cache cache;
  EXPECT_EQ(cache.current(), nullptr);
  EXPECT_EQ(lookup(cache.current(), 1), std::nullopt);
}

TEST(HitCache, KeysWhoseHashesCollideKeepTheirOwnEntries) {
  Cache cache;
  for (int id = 0; id < 9; ++id) cache.insert(Colliding{id}, static_cast<std::size_t>(100 + id));
  for (int id = 0; id < 9; ++id) EXPECT_EQ(lookup(cache.current(), id), 100u + id) << id;
  EXPECT_EQ(lookup(cache.current(), 9), std::nullopt);
}

TEST(HitCache, AnInsertReplacesTheKeysEntryAndKeepsTheOthers) {
  Cache cache;
  cache.insert(Colliding{1}, 10);
  cache.insert(Colliding{2}, 20);
  const Cache::Snapshot* before = cache.current();
  cache.insert(Colliding{1}, 11);
  EXPECT_EQ(lookup(cache.current(), 1), 11u);
  EXPECT_EQ(lookup(cache.current(), 2), 20u);
  // A snapshot is immutable and lives as long as the cache: a reader holding it still
  // sees the state it was published in.
  EXPECT_NE(cache.current(), before);
  EXPECT_EQ(lookup(before, 1), 10u);
}

}  // namespace
}  // namespace disttune
