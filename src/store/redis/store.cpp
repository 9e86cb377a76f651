// RedisStore: a Lua read with a size limit, a Lua compare-and-set write, one warning on a fault.
#include "store/redis/store.hpp"

#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "report/warning.hpp"
#include "store/record_identity.hpp"
#include "util/utc_time.hpp"

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

// GET of every key (KEYS) within one size limit for all of them, ARGV[1]: per key its
// value, or nil when it is absent, empty or of another type, or when it would take the
// reply past the limit (a warm start then goes without it).
constexpr const char* kReadEachScript = R"lua(
local values, total, limit = {}, 0, tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  local size = redis.pcall('STRLEN', key)
  if type(size) == 'number' and size > 0 and total + size <= limit then
    values[i] = redis.call('GET', key)
    total = total + size
  else
    values[i] = false
  end
end
return values
)lua";

// The version of a key's value, defined in both scripts below: 'absent', 'another type',
// 'oversized' (longer than ARGV[1]: never kept, so never read or hashed) or the SHA-1 of
// the value, which is then returned too.
constexpr const char* kVersionFunction = R"lua(
local function version(key)
  local size = redis.pcall('STRLEN', key)
  if type(size) ~= 'number' then return 'another type', nil end
  if size > tonumber(ARGV[1]) then return 'oversized', nil end
  local value = redis.call('GET', key)
  if value == false then return 'absent', nil end
  return redis.sha1hex(value), value
end
)lua";

// What a writer decides on: {version} or {version, value}.
constexpr const char* kSnapshotScript = R"lua(
local held, value = version(KEYS[1])
if value ~= nil then return {held, value} end
return {held}
)lua";

// Compare-and-set: SET ARGV[2] if the value still has version ARGV[3]; 1 if written, 0 if
// another writer came first.
constexpr const char* kSwapScript = R"lua(
if version(KEYS[1]) ~= ARGV[3] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
)lua";

const std::string kSnapshot = std::string(kVersionFunction) + kSnapshotScript;
const std::string kSwap = std::string(kVersionFunction) + kSwapScript;

// A writer that keeps losing the compare-and-set to other writers gives up after this many
// tries (each is two short commands).
constexpr int kWriteAttempts = 64;

// The most a reply may hold: a value of the reader's size limit plus the protocol around it
// (kReadEachScript keeps a page's values within that limit together; each adds under 32
// bytes of protocol). 64 elements per array: a SCAN page, and the values of one (records_of
// asks for 8 keys; Redis may return a few more).
constexpr RedisReplyBounds kReplyBounds{64, kMaxRecordBytes + 4096};

std::string reply_error(const redisReply& reply) { return std::string(reply.str, reply.len); }

/// `text` as a literal in a SCAN MATCH pattern.
std::string glob_literal(const std::string& text) {
  std::string pattern;
  for (const char ch : text) {
    if (ch == '*' || ch == '?' || ch == '[' || ch == ']' || ch == '\\') pattern += '\\';
    pattern += ch;
  }
  return pattern;
}

/// Keys a SCAN reply names (its second element), and its next cursor; nullopt if malformed.
std::optional<std::pair<std::string, std::vector<std::string>>> scan_page(const redisReply& reply) {
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements != 2) return std::nullopt;
  const redisReply& cursor = *reply.element[0];
  const redisReply& keys = *reply.element[1];
  if (cursor.type != REDIS_REPLY_STRING || keys.type != REDIS_REPLY_ARRAY) return std::nullopt;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < keys.elements; ++i) {
    if (keys.element[i]->type == REDIS_REPLY_STRING) names.emplace_back(keys.element[i]->str, keys.element[i]->len);
  }
  return std::make_pair(std::string(cursor.str, cursor.len), std::move(names));
}

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
      connection_ = std::make_unique<RedisConnection>(endpoint_, options_.timeout, kReplyBounds);
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

RedisReply RedisStore::call(std::span<const std::string_view> arguments) const {
  RedisConnection* redis = connection();
  if (!redis) return nullptr;
  RedisReply reply;
  try {
    reply = redis->command(arguments);
  } catch (const RedisFault& fault) {
    give_up(fault.what());
    return nullptr;
  }
  // A server that wants a password refuses every command so: one fault, not one warning
  // per lookup and write.
  if (reply->type == REDIS_REPLY_ERROR && reply_error(*reply).rfind("NOAUTH", 0) == 0) {
    give_up("it asks for a password (" + reply_error(*reply) + ")");
    return nullptr;
  }
  return reply;
}

std::optional<Record> RedisStore::load(const RecordId& id) const {
  const std::string name = key(id);
  RedisReply reply;
  {
    std::lock_guard lock(mutex_);
    reply = call({"EVAL", kReadScript, "1", name, std::to_string(kMaxRecordBytes)});
    if (!reply) return std::nullopt;
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
  // The disk store's reader: size and depth limits, schema, types, identity; never throws.
  RecordRead read = read_record_of(std::string_view(reply->str, reply->len), id);
  if (!read.record) return bad(read.error);
  return std::move(read.record);
}

std::vector<Record> RedisStore::records_of(const RecordId& like, std::size_t most,
                                           const std::set<std::string>& known_file_ids) const {
  std::vector<Record> records;
  const std::string listing = options_.prefix + like.function_name + "/";
  const std::string pattern = glob_literal(listing) + "*";
  std::lock_guard lock(mutex_);
  std::string cursor = "0";
  do {
    // A small COUNT keeps each page's array within the reply bounds (kReplyBounds).
    const RedisReply page = call({"SCAN", cursor, "MATCH", pattern, "COUNT", "8"});
    const auto keys = page ? scan_page(*page) : std::nullopt;
    if (!keys) break;  // gave up (warned once), or a malformed page
    cursor = keys->first;
    std::vector<std::string> names;  // the page's keys the caller lacks, up to `most` in all
    for (const std::string& name : keys->second) {
      const bool known = name.size() > listing.size() && known_file_ids.contains(name.substr(listing.size()));
      if (!known && records.size() + names.size() < most) names.push_back(name);
    }
    if (names.empty()) continue;
    // One round trip for the page's values.
    const std::string count = std::to_string(names.size()), limit = std::to_string(kMaxRecordBytes);
    std::vector<std::string_view> command{"EVAL", kReadEachScript, count};
    command.insert(command.end(), names.begin(), names.end());
    command.push_back(limit);
    const RedisReply values = call(command);
    if (!values) break;  // gave up: warned once
    if (values->type != REDIS_REPLY_ARRAY || values->elements != names.size()) continue;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const redisReply& value = *values->element[i];
      if (value.type != REDIS_REPLY_STRING) continue;
      // Parsed again only when the value changed since the last listing.
      const auto read = parsed_.parse(listing, names[i], std::string(value.str, value.len));
      if (!read->record) continue;  // load() of that key warns about it
      if (of_function(*read->record, like) && key(read->record->id) == names[i]) records.push_back(*read->record);
    }
  } while (records.size() < most && cursor != "0");
  parsed_.end_listing(listing);
  return records;
}

bool RedisStore::keeps(std::string_view held, const Record& record) const {
  const RecordRead read = parse_record(held);
  if (!read.record || !read.record->id.first_difference(record.id).empty()) return false;
  const std::string& created = read.record->created_utc;
  if (created <= record.created_utc) return false;
  // Both stamps are "YYYY-MM-DDTHH:MM:SSZ": text order is time order.
  if (created > utc_iso_in(kFutureTolerance)) {
    warn_once("redis future " + endpoint_.display() + " " + key(record.id) + " " + created,
              "replacing Redis value " + where(record.id) + ": it is dated " + created +
                  ", more than " + std::to_string(kFutureTolerance.count()) +
                  " minutes after this node's clock");
    return false;
  }
  return true;
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
  const std::string limit = std::to_string(kMaxRecordBytes);
  std::lock_guard lock(mutex_);
  for (int attempt = 0; attempt < kWriteAttempts; ++attempt) {
    const RedisReply held = call({"EVAL", kSnapshot, "1", name, limit});
    if (!held) return false;
    if (held->type == REDIS_REPLY_ERROR) {
      warn("Redis refused to write " + where(record.id) + ": " + reply_error(*held));
      return false;
    }
    if (held->type != REDIS_REPLY_ARRAY || held->elements < 1 ||
        held->element[0]->type != REDIS_REPLY_STRING) {
      give_up("unexpected reply to the write's read (type " + std::to_string(held->type) + ")");
      return false;
    }
    const redisReply& version = *held->element[0];
    if (held->elements > 1 && held->element[1]->type == REDIS_REPLY_STRING &&
        keeps(std::string_view(held->element[1]->str, held->element[1]->len), record)) {
      return true;  // a newer record of the same identity is there
    }
    const RedisReply swapped =
        call({"EVAL", kSwap, "1", name, limit, text, std::string_view(version.str, version.len)});
    if (!swapped) return false;
    if (swapped->type == REDIS_REPLY_ERROR) {
      warn("Redis refused to write " + where(record.id) + ": " + reply_error(*swapped));
      return false;
    }
    if (swapped->type == REDIS_REPLY_INTEGER && swapped->integer == 1) return true;
  }
  warn("not writing Redis value " + where(record.id) + ": other writers changed it " +
       std::to_string(kWriteAttempts) + " times while this process tried");
  return false;
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
