// The registry of store schemes: the built-in ones (directory, Redis) and those registered at
// run time; a URL becomes a store, and a claim board, through the entry of its scheme.
#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "disttune/error.hpp"
#include "disttune/store_chain.hpp"
#include "store/key_claims.hpp"
#include "store/store_schemes.hpp"
#include "store/store_url.hpp"

namespace disttune {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<detail::SchemeEntry> entries;  ///< in registration order
};

/// The kinds of store every process has (a new built-in kind is one line here).
std::vector<detail::SchemeEntry> built_in_schemes() {
  std::vector<detail::SchemeEntry> schemes{detail::directory_scheme()};
  for (detail::SchemeEntry& redis : detail::redis_schemes()) schemes.push_back(std::move(redis));
  return schemes;
}

/// The process's registry, holding the built-in schemes from its first use.
Registry& registry() {
  static Registry instance{{}, built_in_schemes()};
  return instance;
}

std::string joined_names(const std::vector<detail::SchemeEntry>& entries) {
  std::string text;
  for (const detail::SchemeEntry& entry : entries)
    text += (text.empty() ? "" : ", ") + entry.scheme.name;
  return text;
}

/// The entry of `url`'s scheme (a plain path: the directory's); InvalidSetting naming the
/// scheme and listing the registered ones when there is none. A copy: its factory runs
/// outside the lock.
detail::SchemeEntry entry_of(const std::string& url) {
  const std::string scheme = detail::url_scheme(url).value_or("file");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const auto found =
      std::find_if(r.entries.begin(), r.entries.end(),
                   [&](const detail::SchemeEntry& entry) { return entry.scheme.name == scheme; });
  if (found == r.entries.end()) {
    throw InvalidSetting("disttune: store URL scheme '" + scheme +
                         "' is not registered (registered: " + joined_names(r.entries) + ")");
  }
  return *found;
}

}  // namespace

void register_store_scheme(StoreScheme scheme) {
  const std::optional<std::string> name = detail::url_scheme(scheme.name + "://");
  if (!name || *name != scheme.name) {
    throw std::invalid_argument(
        "disttune: store scheme '" + scheme.name +
        "' is no URL scheme (a lower-case letter, then letters, digits, '+', '-', '.')");
  }
  if (scheme.source.empty())
    throw std::invalid_argument("disttune: store scheme '" + scheme.name + "' has no source");
  if (!scheme.make)
    throw std::invalid_argument("disttune: store scheme '" + scheme.name + "' has no factory");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const bool taken = std::any_of(
      r.entries.begin(), r.entries.end(),
      [&](const detail::SchemeEntry& entry) { return entry.scheme.name == scheme.name; });
  if (taken)
    throw std::invalid_argument("disttune: store scheme '" + scheme.name +
                                "' is already registered");
  r.entries.push_back(detail::SchemeEntry{.scheme = std::move(scheme), .claim_board = nullptr});
}

std::vector<std::string> registered_store_schemes() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const detail::SchemeEntry& entry : r.entries) names.push_back(entry.scheme.name);
  return names;
}

ChainedStore make_chained_store(const std::string& url) {
  const detail::SchemeEntry entry = entry_of(url);
  std::shared_ptr<Store> store = entry.scheme.make(url);
  if (!store)
    throw std::logic_error("disttune: store scheme '" + entry.scheme.name + "' made no store");
  return ChainedStore{.store = std::move(store),
                      .source = entry.scheme.source,
                      .reach = entry.scheme.reach};
}

std::vector<std::unique_ptr<detail::ClaimBoard>> detail::claim_boards(
    const std::vector<std::string>& urls) {
  std::vector<std::unique_ptr<ClaimBoard>> boards;
  for (const std::string& url : urls) {
    const SchemeEntry entry = entry_of(url);
    if (entry.claim_board) boards.push_back(entry.claim_board(url));
  }
  return boards;
}

}  // namespace disttune
