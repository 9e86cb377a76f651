// RedisStore: a Lua read with a size limit, a Lua compare-and-set write, one warning on a fault.
#include "store/redis_store.hpp"

#include <map>
#include <stdexcept>
#include <tuple>

#include "report/warning.hpp"

namespace disttune {
namespace detail {
namespace {

// GET within a size limit: nil (absent), the value, or its length when it exceeds ARGV[1]
// (so an oversized value never crosses the network). A key of another type is an error.
constexpr const char* kReadScript = R"lua(
local size = redis.pcall('STRLEN', KEYS[1])
if type(size) == 'table' then return size end
if size > tonumber(ARGV[1]) then return size end
return redis.call('GET', KEYS[1])
)lua";

// SET unless the value there is a record created later than ARGV[2] (UTC times in the
// fixed ISO form compare as text). A value that is not such a record is replaced.
constexpr const char* kWriteScript = R"lua(
local old = redis.pcall('GET', KEYS[1])
if type(old) == 'string' then
  local ok, record = pcall(cjson.decode, old)
  if ok and type(record) == 'table' then
    local created = record['created_utc']
    if type(created) == 'string'
        and string.match(created, '^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$')
        and created > ARGV[2] then
      return 0
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
)lua";

std::string reply_error(const redisReply& reply) { return std::string(reply.str, reply.len); }

}  // namespace

RedisStore::RedisStore(const RedisOptions& options)
    : options_(options), endpoint_(parse_redis_url(options.url)) {
  if (endpoint_.tls) {
    throw std::invalid_argument(
        "disttune: " + endpoint_.display() + ": TLS (rediss://) needs hiredis >= 1.0 with "
        "hiredis_ssl, and this build has hiredis " + std::to_string(HIREDIS_MAJOR) + "." +
        std::to_string(HIREDIS_MINOR) + "; use redis:// (e.g. through a TLS tunnel)");
  }
  if (options_.timeout <= std::chrono::milliseconds(0)) {
    throw std::invalid_argument("disttune: the Redis timeout must be positive");
  }
}

std::string RedisStore::key(const RecordId& id) const {
  return options_.prefix + id.function_name + "/" + id.file_id();
}

std::string RedisStore::where(const RecordId& id) const {
  return endpoint_.display() + " key " + key(id);
}

bool RedisStore::gave_up() const {
  std::lock_guard lock(mutex_);
  return gave_up_;
}

RedisConnection* RedisStore::connection() const {
  if (gave_up_) return nullptr;
  if (!connection_) {
    try {
      connection_ = std::make_unique<RedisConnection>(endpoint_, options_.timeout);
    } catch (const RedisFault& fault) {
      give_up(fault.what());
      return nullptr;
    }
  }
  return connection_.get();
}

void RedisStore::give_up(const std::string& why) const {
  gave_up_ = true;
  connection_.reset();
  warn("Redis store " + endpoint_.display() + ": " + why +
       "; using the local store alone from now on");
}

std::optional<Record> RedisStore::load(const RecordId& id) const {
  const std::string name = key(id);
  RedisReply reply;
  {
    std::lock_guard lock(mutex_);
    RedisConnection* redis = connection();
    if (!redis) return std::nullopt;
    try {
      reply = redis->command({"EVAL", kReadScript, "1", name, std::to_string(kMaxRecordBytes)});
    } catch (const RedisFault& fault) {
      give_up(fault.what());
      return std::nullopt;
    }
  }
  const auto bad = [&](const std::string& why) {
    // Once per value and reason: a value that stays bad does not warn on every lookup.
    warn_once("bad redis value " + endpoint_.display() + " " + name + " " + why,
              "ignoring Redis value " + where(id) + ": " + why + "; it is a miss");
    return std::nullopt;
  };
  switch (reply->type) {
    case REDIS_REPLY_NIL:
      return std::nullopt;
    case REDIS_REPLY_INTEGER:
      return bad("it is larger than " + std::to_string(kMaxRecordBytes) + " bytes (" +
                 std::to_string(reply->integer) + ")");
    case REDIS_REPLY_ERROR:
      return bad("Redis refused to read it: " + reply_error(*reply));
    case REDIS_REPLY_STRING:
      break;
    default:
      return bad("unexpected reply type " + std::to_string(reply->type));
  }
  // The disk store's reader: size and depth limits, schema, types; never throws.
  RecordRead read = parse_record(std::string_view(reply->str, reply->len));
  if (!read.record) return bad(read.error);
  if (const std::string field = read.record->id.first_difference(id); !field.empty()) {
    return bad("its field '" + field + "' does not match the record asked for");
  }
  return std::move(read.record);
}

bool RedisStore::write(const Record& record) const {
  const std::string name = key(record.id);
  std::string text;
  try {
    text = record_to_json(record).dump();  // stamped by build_record
  } catch (const std::exception& error) {
    warn("not writing Redis value " + where(record.id) + ": " + error.what());
    return false;
  }
  if (text.size() > kMaxRecordBytes) {
    warn("not writing Redis value " + where(record.id) + ": the record is larger than " +
         std::to_string(kMaxRecordBytes) + " bytes, which no reader would accept");
    return false;
  }
  std::lock_guard lock(mutex_);
  RedisConnection* redis = connection();
  if (!redis) return false;
  RedisReply reply;
  try {
    reply = redis->command({"EVAL", kWriteScript, "1", name, text, record.created_utc});
  } catch (const RedisFault& fault) {
    give_up(fault.what());
    return false;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    warn("Redis refused to write " + where(record.id) + ": " + reply_error(*reply));
    return false;
  }
  return true;
}

}  // namespace detail

bool redis_store_available() { return true; }

std::shared_ptr<Store> make_redis_store(const RedisOptions& options) {
  // Tuned functions with the same options share one store while any of them holds it: one
  // connection, one warning when the server fails.
  static std::mutex mutex;
  static std::map<std::tuple<std::string, std::string, long long>, std::weak_ptr<Store>> stores;
  const auto name = std::make_tuple(options.url, options.prefix,
                                    static_cast<long long>(options.timeout.count()));
  std::lock_guard lock(mutex);
  if (std::shared_ptr<Store> store = stores[name].lock()) return store;
  auto store = std::make_shared<detail::RedisStore>(options);
  stores[name] = store;
  return store;
}

}  // namespace disttune
