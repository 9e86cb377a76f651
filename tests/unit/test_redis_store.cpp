// RedisStore against a real redis-server: round trip, untrusted values, compare-and-set,
// records from the future, racing writers, and a server that is unreachable, killed or too
// slow; against a scripted fake peer: replies that trickle or announce too much.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "disttune/redis_store.hpp"
#include "redis_server.hpp"
#include "scripted_redis_peer.hpp"
#include "store/redis/store.hpp"
#include "store/redis/url.hpp"
#include "store_test_support.hpp"
#include "util/utc_time.hpp"

namespace disttune {
namespace {

using detail::RedisStore;
using testing::RedisServer;
using testing::sample_record;
using testing::ScopedEnv;
using testing::ScriptedRedisPeer;

RedisOptions options_for(const std::string& url) {
  RedisOptions options;
  options.url = url;
  options.prefix = "test:";
  return options;
}

std::string value_of(const RedisServer& server, const std::string& key) {
  const detail::RedisReply reply = server.command({"GET", key});
  return reply->type == REDIS_REPLY_STRING ? std::string(reply->str, reply->len) : "";
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

/// What a lookup, a write and a lookup of a store that cannot use its server print: each
/// is a miss or a skipped write.
std::string warnings_of_a_failed_session(const RedisStore& store, const Record& record) {
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store.load(record.id));
  EXPECT_FALSE(store.write(record));
  EXPECT_FALSE(store.load(record.id));
  return ::testing::internal::GetCapturedStderr();
}

TEST(RedisUrl, ParsesEveryPart) {
  const auto full = detail::parse_redis_url("redis://alice:s%40cret@cache.example:6380/3");
  EXPECT_EQ(full.host, "cache.example");
  EXPECT_EQ(full.port, 6380);
  EXPECT_EQ(full.database, 3);
  EXPECT_EQ(full.user, "alice");
  EXPECT_EQ(full.password, "s@cret");
  EXPECT_EQ(full.display(), "redis://cache.example:6380/3");

  const auto plain = detail::parse_redis_url("redis://10.0.0.7");
  EXPECT_EQ(plain.port, 6379);
  EXPECT_EQ(plain.database, 0);
  EXPECT_TRUE(plain.password.empty());
  EXPECT_EQ(detail::parse_redis_url("redis://:pw@h/").password, "pw");
  EXPECT_EQ(detail::parse_redis_url("redis://[::1]:7000").host, "::1");
  EXPECT_TRUE(detail::parse_redis_url("rediss://h:1").tls);
}

TEST(RedisUrl, RefusesWhatIsNotOneWithoutShowingThePassword) {
  for (const char* url : {"http://h", "redis://", "redis://h:0", "redis://h:99999", "redis://h:x",
                          "redis://h/db", "redis://h:", "redis://[::1", "redis://u:p%zz@h"}) {
    try {
      detail::parse_redis_url(url);
      ADD_FAILURE() << url << " was accepted";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("Redis URL"), std::string::npos) << error.what();
    }
  }
  try {
    detail::parse_redis_url("redis://user:topsecret@h:notaport");
    ADD_FAILURE();
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()).find("topsecret"), std::string::npos) << error.what();
  }
}

TEST(RedisUrl, TlsIsAClearErrorWithThisHiredis) {
  try {
    make_redis_store(options_for("rediss://127.0.0.1:6379"));
    ADD_FAILURE();
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("hiredis_ssl"), std::string::npos) << error.what();
  }
}

TEST(RedisOptions, ComeFromTheEnvironment) {
  ScopedEnv url("TRITON_DIST_AUTOTUNE_REDIS_URL", "redis://h:1/2");
  ScopedEnv prefix("TRITON_DIST_AUTOTUNE_REDIS_PREFIX", "team-a:");
  ScopedEnv timeout("TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT", "0.25");
  const RedisOptions options = redis_options_from_environment();
  EXPECT_EQ(options.url, "redis://h:1/2");
  EXPECT_EQ(options.prefix, "team-a:");
  EXPECT_EQ(options.timeout, std::chrono::milliseconds(250));
  for (const char* bad : {"0", "-1", "soon", "inf", "1e9"}) {
    ScopedEnv bad_timeout("TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT", bad);
    EXPECT_THROW(redis_options_from_environment(), std::invalid_argument) << bad;
  }
}

TEST(RedisStore, WritesAndReadsARecordUnderItsKey) {
  RedisServer server;
  const RedisStore store(options_for(server.url()));
  const Record record = sample_record();
  EXPECT_EQ(store.key(record.id), "test:scale/" + record.id.file_id());
  EXPECT_FALSE(store.load(record.id));  // absent: a plain miss
  ASSERT_TRUE(store.write(record));
  const auto loaded = store.load(record.id);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(record_to_json(*loaded), record_to_json(record));
  EXPECT_EQ(Value::parse(value_of(server, store.key(record.id))), record_to_json(record));
}

TEST(RedisStore, LogsInAndSelectsItsDatabase) {
  RedisServer server({"--requirepass", "hunter2"});
  const Record record = sample_record();
  const RedisStore store(options_for(server.url(":hunter2@", 5)));
  ASSERT_TRUE(store.write(record));
  EXPECT_TRUE(store.load(record.id));
  const RedisStore other_database(options_for(server.url(":hunter2@", 6)));
  EXPECT_FALSE(other_database.load(record.id));

  ::testing::internal::CaptureStderr();
  const RedisStore wrong_password(options_for(server.url(":wrong@", 5)));
  EXPECT_FALSE(wrong_password.load(record.id));
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("Redis store"), std::string::npos) << warnings;
  EXPECT_EQ(warnings.find("wrong"), std::string::npos) << "the password leaked: " << warnings;
}

TEST(RedisStore, ACorruptValueIsAMissWithAWarning) {
  RedisServer server;
  const RedisStore store(options_for(server.url()));
  const Record record = sample_record();
  const std::string key = store.key(record.id);
  Value wrong_schema = record_to_json(record);
  wrong_schema["schema_version"] = 99;
  const Record other = sample_record("scale", R"({"n":2048})");
  const std::string nested = std::string(100000, '[') + std::string(100000, ']');
  std::string deep_config = record_to_json(record).dump();  // 100,000 levels in a config
  const std::string config = R"({"block":128,"ratio":0.25})";
  deep_config.replace(deep_config.find(config), config.size(), nested);
  const std::vector<std::string> values = {
      "not json {", "\xff\xfe binary", wrong_schema.dump(), record_to_json(other).dump(), nested,
      deep_config, "{\"schema\": 1e400}"};
  for (std::size_t i = 0; i < values.size(); ++i) {
    // A key of its own for each value: a value warns once per key and reason.
    RedisOptions options = options_for(server.url());
    options.prefix = "corrupt" + std::to_string(i) + ":";
    const RedisStore reader(options);
    server.command({"SET", reader.key(record.id), values[i]});
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(reader.load(record.id)) << values[i].substr(0, 60);
    const std::string warnings = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(warnings.find("ignoring Redis value"), std::string::npos) << warnings;
  }
  // A key of another type is a miss too, and the next write replaces it.
  server.command({"DEL", key});
  server.command({"HSET", key, "field", "value"});
  EXPECT_FALSE(store.load(record.id));
  ASSERT_TRUE(store.write(record));
  EXPECT_TRUE(store.load(record.id));
  EXPECT_FALSE(store.gave_up());
}

TEST(RedisStore, AValueOverTheSizeLimitIsNotFetched) {
  RedisServer server;
  const RedisStore store(options_for(server.url()));
  const Record record = sample_record();
  const std::string huge = record_to_json(record).dump() + std::string((64u << 20) + 1, ' ');
  server.command({"SET", store.key(record.id), huge});
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store.load(record.id));
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("larger than 67108864 bytes"), std::string::npos) << warnings;
}

// A warm start lists the records of the function's other keys at every new key: the keys
// the caller already has are not fetched, and a value changed since the last listing (whose
// parse the store reuses while a value is unchanged) is seen at once.
TEST(RedisStore, RecordsOfSkipsKnownKeysAndSeesEveryChange) {
  RedisServer server;
  const RedisStore store(options_for(server.url()));
  std::vector<Record> records;
  for (int n = 1; n <= 3; ++n) {
    records.push_back(sample_record("scale", "{\"n\":" + std::to_string(n) + "}"));
    records.back().ranks = 2;
    ASSERT_TRUE(store.write(records.back()));
  }
  const auto listed = [&](const std::set<std::string>& known) {
    std::map<std::string, int> ranks_by_key;
    for (const Record& record : store.records_of(records[0].id, 16, known)) {
      ranks_by_key[record.id.key] = record.ranks;
    }
    return ranks_by_key;
  };
  const std::map<std::string, int> all{{"{\"n\":1}", 2}, {"{\"n\":2}", 2}, {"{\"n\":3}", 2}};
  EXPECT_EQ(listed({}), all);
  EXPECT_EQ(listed({}), all);
  EXPECT_EQ(listed({records[0].id.file_id(), records[2].id.file_id()}),
            (std::map<std::string, int>{{"{\"n\":2}", 2}}));

  Record replaced = records[1];
  replaced.ranks = 4;
  replaced.created_utc = "2099-01-01T00:00:00Z";  // newer than the stored one, so written
  server.command({"SET", store.key(replaced.id), record_to_json(replaced).dump()});
  server.command({"DEL", store.key(records[2].id)});
  server.command({"SET", store.key(records[0].id), "{\"schema\": 1,"});
  server.command({"HSET", "test:scale/" + std::string(64, 'e'), "field", "value"});  // another type
  EXPECT_EQ(listed({}), (std::map<std::string, int>{{"{\"n\":2}", 4}}));
}

TEST(RedisStore, AnOlderRecordNeverReplacesANewerOne) {
  RedisServer server;
  const RedisStore store(options_for(server.url()));
  Record newer = sample_record();
  newer.created_utc = "2026-11-30T10:00:00Z";
  newer.best_index = 0;
  Record older = newer;
  older.created_utc = "2026-11-29T10:00:00Z";
  older.ranks = 7;
  ASSERT_TRUE(store.write(newer));
  ASSERT_TRUE(store.write(older));  // not an error: a newer one is there
  EXPECT_EQ(store.load(newer.id)->created_utc, newer.created_utc);
  Record newest = newer;
  newest.created_utc = "2026-12-01T00:00:00Z";
  ASSERT_TRUE(store.write(newest));
  EXPECT_EQ(store.load(newer.id)->created_utc, newest.created_utc);
}

TEST(RedisStore, AValueThatIsNotAValidRecordOfTheSameIdentityIsReplacedWhateverItsDate) {
  RedisServer server;
  const RedisStore store(options_for(server.url()));
  const Record record = sample_record();
  const std::string key = store.key(record.id);
  Record other = sample_record("scale", R"({"n":2048})");  // another key: another identity
  other.created_utc = "2099-01-01T00:00:00Z";
  Value wrong_schema = record_to_json(record);
  wrong_schema["schema_version"] = 99;
  wrong_schema["created_utc"] = "2099-01-01T00:00:00Z";
  Value no_candidates = record_to_json(record);
  no_candidates["candidates"] = Value::array();
  no_candidates["created_utc"] = "2099-01-01T00:00:00Z";
  for (const std::string& planted :
       {record_to_json(other).dump(), wrong_schema.dump(), no_candidates.dump(),
        std::string(R"({"created_utc":"2099-01-01T00:00:00Z"})")}) {
    server.command({"SET", key, planted});
    ASSERT_TRUE(store.write(record));
    const auto loaded = store.load(record.id);
    ASSERT_TRUE(loaded) << planted.substr(0, 80);
    EXPECT_EQ(loaded->created_utc, record.created_utc) << planted.substr(0, 80);
  }
}

TEST(RedisStore, ARecordFromTheFarFutureIsReplacedWithOneWarning) {
  RedisServer server;
  const RedisStore store(options_for(server.url()));
  Record record = sample_record();
  record.created_utc = detail::utc_iso_now();
  Record ahead = record;  // within the tolerance: a newer record, kept
  ahead.created_utc = detail::utc_iso_in(std::chrono::minutes(5));
  ahead.ranks = 3;
  ASSERT_TRUE(store.write(ahead));
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(store.write(record));
  EXPECT_EQ(store.load(record.id)->created_utc, ahead.created_utc);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");

  Record future = record;  // a clock far ahead, or a junk date: replaced
  future.created_utc = "2099-01-01T00:00:00Z";
  server.command({"SET", store.key(record.id), record_to_json(future).dump()});
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(store.write(record));
  ASSERT_TRUE(store.write(record));
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(warnings, "disttune: "), 1u) << warnings;
  EXPECT_NE(warnings.find("dated 2099-01-01T00:00:00Z, more than 10 minutes after this node's clock"),
            std::string::npos) << warnings;
  EXPECT_EQ(store.load(record.id)->created_utc, record.created_utc);
}

TEST(RedisStore, APasswordProtectedServerWithoutAPasswordWarnsOnce) {
  RedisServer server({"--requirepass", "hunter2"});
  const RedisStore store(options_for(server.url()));
  const std::string warnings = warnings_of_a_failed_session(store, sample_record());
  EXPECT_EQ(count(warnings, "disttune: "), 1u) << warnings;
  EXPECT_NE(warnings.find("asks for a password"), std::string::npos) << warnings;
  EXPECT_TRUE(store.gave_up());
}

TEST(RedisStore, AnOversizedValueWarnsOnceAndIsReplaced) {
  RedisServer server;
  const RedisStore store(options_for(server.url()));
  const Record record = sample_record();
  server.command({"SET", store.key(record.id), std::string(65u << 20, '{')});
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store.load(record.id));
  EXPECT_TRUE(store.write(record));
  EXPECT_TRUE(store.load(record.id));
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(warnings, "disttune: "), 1u) << warnings;
  EXPECT_NE(warnings.find("larger than 67108864 bytes"), std::string::npos) << warnings;
}

// The deadline covers a whole command: a peer that sends a well-formed reply one byte every
// 0.3 s is cut after the timeout, long before it is done.
TEST(RedisStore, APeerThatTricklesItsReplyIsCutAtTheDeadline) {
  ScriptedRedisPeer peer("$100\r\n" + std::string(100, 'x') + "\r\n", 1, std::chrono::milliseconds(300));
  RedisOptions options = options_for(peer.url());
  options.timeout = std::chrono::seconds(1);
  const RedisStore store(options);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store.load(sample_record().id));
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("timed out after 1 s waiting for the whole reply"), std::string::npos)
      << warnings;
  EXPECT_TRUE(store.gave_up());
  EXPECT_FALSE(store.write(sample_record()));  // given up: the peer is not asked again
  EXPECT_LT(peer.sent(), peer.size());
}

// A reply that announces more than a command may receive is refused when announced, not
// after a time-out (the timeout here is far longer than the test).
TEST(RedisStore, AReplyAnnouncingTooMuchIsRefusedAtOnce) {
  const std::vector<std::pair<std::string, std::string>> replies = {
      {"*2147483648\r\n", "the reply announces an array of 2147483648 elements"},
      {"$1099511627776\r\n", "the reply announces a string of 1099511627776 bytes"},
      {"+" + std::string(100000, 'o'), "a reply line is longer than 65536 bytes"}};
  for (const auto& [reply, problem] : replies) {
    ScriptedRedisPeer peer(reply, reply.size(), std::chrono::milliseconds(0));
    RedisOptions options = options_for(peer.url());
    options.timeout = std::chrono::seconds(600);
    const RedisStore store(options);
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(store.load(sample_record().id));
    const std::string warnings = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(warnings.find("refused the reply: " + problem), std::string::npos) << warnings;
  }
}

TEST(RedisStore, RacingWritersLeaveTheNewestRecord) {
  RedisServer server;
  const Record base = sample_record();
  constexpr int kWriters = 8;
  constexpr int kWritesEach = 40;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      const RedisStore store(options_for(server.url()));  // a connection of its own
      std::vector<int> minutes(kWritesEach);
      for (int i = 0; i < kWritesEach; ++i) minutes[i] = i;
      std::shuffle(minutes.begin(), minutes.end(), std::mt19937(static_cast<unsigned>(w)));
      for (const int minute : minutes) {
        Record record = base;
        char stamp[32];
        std::snprintf(stamp, sizeof stamp, "2026-11-30T%02d:%02d:00Z", w, minute);
        record.created_utc = stamp;
        EXPECT_TRUE(store.write(record));
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  const RedisStore reader(options_for(server.url()));
  const auto loaded = reader.load(base.id);
  ASSERT_TRUE(loaded);
  char newest[32];
  std::snprintf(newest, sizeof newest, "2026-11-30T%02d:%02d:00Z", kWriters - 1, kWritesEach - 1);
  EXPECT_EQ(loaded->created_utc, newest);
}

TEST(RedisStore, AnUnreachableServerWarnsOnceAndIsThenLeftAlone) {
  const int port = testing::free_port();  // nothing listens there
  const RedisStore store(options_for("redis://127.0.0.1:" + std::to_string(port)));
  const std::string warnings = warnings_of_a_failed_session(store, sample_record());
  EXPECT_EQ(count(warnings, "disttune: "), 1u) << warnings;
  EXPECT_NE(warnings.find("Redis store redis://127.0.0.1:" + std::to_string(port)),
            std::string::npos) << warnings;
  EXPECT_TRUE(store.gave_up());
}

TEST(RedisStore, AServerKilledMidRunIsAMissNotAnError) {
  auto server = std::make_unique<RedisServer>();
  const RedisStore store(options_for(server->url()));
  const Record record = sample_record();
  ASSERT_TRUE(store.write(record));
  ASSERT_TRUE(store.load(record.id));
  server->stop();
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store.load(record.id));
  EXPECT_FALSE(store.write(record));
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(warnings, "disttune: "), 1u) << warnings;
  EXPECT_NE(warnings.find("Redis store"), std::string::npos) << warnings;
}

TEST(RedisStore, ASlowServerTimesOut) {
  RedisServer server;
  RedisOptions options = options_for(server.url());
  options.timeout = std::chrono::milliseconds(200);
  const RedisStore store(options);
  const Record record = sample_record();
  ASSERT_TRUE(store.write(record));
  server.pause();
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store.load(record.id));  // returns after the timeout instead of hanging
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  server.resume();
  EXPECT_NE(warnings.find("Redis store"), std::string::npos) << warnings;
  EXPECT_TRUE(store.gave_up());
}

TEST(RedisStore, StoresWithTheSameOptionsAreShared) {
  const RedisOptions options = options_for("redis://127.0.0.1:1");
  const auto a = make_redis_store(options);
  const auto b = make_redis_store(options);
  EXPECT_EQ(a.get(), b.get());
  RedisOptions other = options;
  other.prefix = "other:";
  EXPECT_NE(make_redis_store(other).get(), a.get());
}

}  // namespace
}  // namespace disttune
