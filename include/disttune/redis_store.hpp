// Redis store: tuning records shared across machines, read after the local directory store.
// In a chain of stores (store_chain.hpp) its URLs are redis://... and rediss://....
//
// Keys: <prefix><function name>/<record file id> (the same id as the disk record's name);
// the value is the record's JSON text, exactly as in the disk store (schema 1). A value read
// from Redis is untrusted and validated like a disk record (size limit, schema, identity);
// a bad value is a miss with one warning. A write is a compare-and-set on created_utc (a Lua
// script): a record never replaces a newer one. Every Redis call has a timeout; a Redis that
// is unreachable, slow or goes away gives one warning naming it, then the store answers
// misses and skips writes for the rest of the process: never a hang, never an exception.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "disttune/store.hpp"

namespace disttune {

/// The deadline of connecting and of each command when neither the URL nor
/// TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT sets one: 1 s.
inline constexpr std::chrono::milliseconds kDefaultRedisTimeout{1000};

/// Where and how to reach Redis.
struct RedisOptions {
  /// redis://[[user]:password@]host[:port][/db] (port 6379, db 0 by default); empty: no
  /// Redis. rediss:// (TLS) needs hiredis >= 1.0 with hiredis_ssl and is refused by builds
  /// on Debian 12's hiredis 0.14 with a clear error.
  std::string url;
  /// Prepended to every key; lets several caches share one database.
  std::string prefix = "disttune:";
  /// Deadline of connecting and of each command.
  std::chrono::milliseconds timeout = kDefaultRedisTimeout;
};

/// TRITON_DIST_AUTOTUNE_REDIS_URL: redis://[[user]:password@]host[:port][/db] of a Redis
/// store shared by every node and job, read after the cache directory (the older spelling of
/// a chain, store_chain.hpp); nullopt when unset or empty (no Redis). The URL is checked
/// where the chain is made.
std::optional<std::string> redis_url_setting();

/// The Redis store's variables (declared in settings.hpp's table, docs/settings.md):
/// TRITON_DIST_AUTOTUNE_REDIS_URL (empty or unset: no Redis), TRITON_DIST_AUTOTUNE_REDIS_PREFIX
/// (unset: "disttune:") and TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT (seconds from 0.001 to 86400;
/// unset: kDefaultRedisTimeout). Throws InvalidSetting (a std::invalid_argument) naming the
/// variable for a bad timeout.
RedisOptions redis_options_from_environment();

/// The options of a store URL of a chain (store_chain.hpp):
/// redis://[[user]:password@]host[:port][/db][?prefix=TEXT&timeout=SECONDS]; the prefix and
/// timeout not given come from the environment, as in redis_options_from_environment().
/// Throws std::invalid_argument saying what is wrong (never quoting the password).
RedisOptions redis_options_from_url(const std::string& url);

/// Whether this build has the Redis store (it is built when hiredis is found).
bool redis_store_available();

/// The store on the Redis server named by options.url, shared by every caller with the same
/// options while one holds it. Connects on first use. Throws std::invalid_argument for a URL
/// that is not one (the message never shows the password) or a timeout that is not
/// positive, std::runtime_error when this build has no Redis store.
std::shared_ptr<Store> make_redis_store(const RedisOptions& options);

}  // namespace disttune
