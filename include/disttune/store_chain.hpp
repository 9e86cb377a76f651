// The stores of a tuner as an ordered chain of URLs, and the registry of URL schemes.
//
// A chain is read first to last: the first store that holds a usable record answers, and
// that record is copied into the stores before it. A fresh record is written to every
// store. Each store is named by a URL whose scheme picks a registered kind of store:
//   file:///path, or a plain path     the directory store (DiskStore, store.hpp)
//   redis://..., rediss://...         the Redis store (redis_store.hpp)
//   <scheme>://...                    a scheme added with register_store_scheme()
// A tuner's chain (TunerOptions::stores, Python stores=[...]) is, by default,
// TRITON_DIST_AUTOTUNE_STORES (URLs separated by commas), else the older settings: the cache
// directory, then TRITON_DIST_AUTOTUNE_REDIS_URL when set (docs/settings.md).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "disttune/store.hpp"

namespace disttune {

/// Which process writes a store: one per node (a directory on the node's own disk: local
/// rank 0 of each node), or one per job (a store every node shares: rank 0 of the job).
enum class StoreReach { node, job };

/// A kind of store, named by the scheme of its URLs.
struct StoreScheme {
  /// The URL scheme, before "://": a lower-case letter, then letters, digits, '+', '-', '.'.
  std::string name;
  /// What TuningReport's source says for a record this store answered ("disk", "redis").
  std::string source;
  /// Who writes it (see StoreReach).
  StoreReach reach = StoreReach::job;
  /// The store a URL of this scheme names. Contacts nothing (a server is reached on first
  /// use); throws std::invalid_argument saying what is wrong with the URL, never quoting a
  /// password.
  std::function<std::shared_ptr<Store>(const std::string& url)> make;
};

/// Adds a kind of store: URLs of `scheme.name` are then accepted wherever a chain is given.
/// Throws std::invalid_argument for a name that is no scheme or is registered already, an
/// empty source, or no `make`. Every rank must register the same schemes.
void register_store_scheme(StoreScheme scheme);

/// The registered scheme names: the built-in ones (file, redis, rediss) first, then in
/// registration order.
std::vector<std::string> registered_store_schemes();

/// One store of a chain, made from its URL.
struct ChainedStore {
  std::shared_ptr<Store> store;
  std::string source;  ///< its scheme's StoreScheme::source
  StoreReach reach = StoreReach::job;
};

/// The store `url` names: a plain path (no "scheme://") or file:///path is the directory
/// store; any other URL goes to its registered scheme. Throws InvalidSetting for a scheme
/// that is not registered (naming it and listing those that are), std::invalid_argument
/// for a URL its scheme refuses.
ChainedStore make_chained_store(const std::string& url);

/// TRITON_DIST_AUTOTUNE_STORES's text as URLs: split at commas (a comma inside a path is
/// written %2C in a file:// URL), blanks around each trimmed. Throws InvalidSetting for an
/// empty entry.
std::vector<std::string> split_store_urls(const std::string& text);

/// The URLs of a tuner's chain, first read first, from what the tuner was given (the
/// TunerOptions fields of the same names):
///  - `stores`, when given (empty: no store);
///  - else, when `cache_root` or `shared_store` is given, or TRITON_DIST_AUTOTUNE_STORES is
///    unset: the directory `cache_root` (default_cache_root() when nullopt), then
///    `shared_store` (TRITON_DIST_AUTOTUNE_REDIS_URL when nullopt; none when empty);
///  - else TRITON_DIST_AUTOTUNE_STORES.
/// Throws InvalidSetting when `stores` comes with `cache_root` or `shared_store`, or when
/// TRITON_DIST_AUTOTUNE_STORES and TRITON_DIST_AUTOTUNE_REDIS_URL are both set.
std::vector<std::string> store_chain_urls(const std::optional<std::vector<std::string>>& stores,
                                          const std::optional<std::filesystem::path>& cache_root,
                                          const std::optional<std::string>& shared_store);

/// Checks the chain the environment names (TRITON_DIST_AUTOTUNE_STORES, the Redis store's
/// _REDIS_URL and _REDIS_TIMEOUT, and what each URL's scheme reads) by making each store
/// of TRITON_DIST_AUTOTUNE_STORES, which contacts nothing, and keeping none: every tuner calls
/// it whether or not it uses a store, so that a bad value is refused alike.
/// Throws InvalidSetting naming the variable.
void check_store_environment();

}  // namespace disttune
