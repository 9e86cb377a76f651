// RedisStore: records as values of Redis keys, behind one connection made on first use.
#pragma once

#include <chrono>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "disttune/redis_store.hpp"
#include "disttune/store.hpp"
#include "store/redis_connection.hpp"
#include "store/redis_url.hpp"

namespace disttune::detail {

/// The Store on one Redis server (see redis_store.hpp for the contract). After the first
/// fault of the server (unreachable, timeout, broken connection, login refused) it warns
/// once and answers every later call as a miss or a skipped write, without contacting it.
class RedisStore final : public Store {
 public:
  explicit RedisStore(const RedisOptions& options);

  std::optional<Record> load(const RecordId& id) const override;
  /// Compare-and-set: writes unless Redis holds a valid record of the same identity created
  /// later, but not more than kFutureTolerance after this node's clock (such a record is
  /// replaced, with one warning). Any other value (corrupt, another identity, another type,
  /// oversized) is replaced whatever its date.
  bool write(const Record& record) const override;
  /// How far in the future a stored record's created_utc may be and still count.
  static constexpr std::chrono::minutes kFutureTolerance{10};
  std::string where(const RecordId& id) const override;

  /// The key of `id`: <prefix><function name>/<file id>.
  std::string key(const RecordId& id) const;
  /// Whether a fault has made this store give up on the server.
  bool gave_up() const;

 private:
  // The connection, made if needed; nullptr once the store has given up. Call locked.
  RedisConnection* connection() const;
  // Warns once, closes the connection and answers misses from now on. Call locked.
  void give_up(const std::string& why) const;
  // One command; nullptr after a fault (the store gave up). Call locked.
  RedisReply call(std::initializer_list<std::string_view> arguments) const;
  // Whether the stored value `held` is a record that `record` must not replace.
  bool keeps(std::string_view held, const Record& record) const;

  RedisOptions options_;
  RedisEndpoint endpoint_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<RedisConnection> connection_;
  mutable bool gave_up_ = false;
};

}  // namespace disttune::detail
