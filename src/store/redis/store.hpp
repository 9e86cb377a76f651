// RedisStore: records as values of Redis keys, behind one connection made on first use.
#pragma once

#include <chrono>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "disttune/redis_store.hpp"
#include "disttune/store.hpp"
#include "store/parsed_records.hpp"
#include "store/redis/connection.hpp"
#include "store/redis/url.hpp"

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
  /// The records under <prefix><function name>/ (SCAN, then each value read like load()'s,
  /// a bad one skipped); none after a fault.
  std::vector<Record> records_of(const RecordId& like, std::size_t most,
                                 const std::set<std::string>& known_file_ids) const override;

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
  RedisReply call(std::span<const std::string_view> arguments) const;
  RedisReply call(std::initializer_list<std::string_view> arguments) const {
    return call(std::span<const std::string_view>(arguments.begin(), arguments.size()));
  }
  // Whether the stored value `held` is a record that `record` must not replace.
  bool keeps(std::string_view held, const Record& record) const;

  RedisOptions options_;
  RedisEndpoint endpoint_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<RedisConnection> connection_;
  mutable bool gave_up_ = false;
  mutable ParsedRecords parsed_;  ///< records_of's last listing's parses, by Redis key
};

}  // namespace disttune::detail
