// The chain of stores through FunctionTuner, with a real redis-server: the local directory,
// then Redis, then tuning; a tuned result goes to both; a hit further down is copied up; a
// Redis fault only warns; a scheme registered by a test is one more store of the chain.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "disttune/function_tuner.hpp"
#include "disttune/store_chain.hpp"
#include "redis_server.hpp"
#include "said_timer.hpp"
#include "store_test_support.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::RedisServer;
using testing::TempDir;

using Urls = std::vector<std::string>;

const std::vector<std::string> kCandidates = {R"({"block":1})", R"({"block":2})",
                                              R"({"block":3})"};

// One "node": a tuner on its own cache root, sharing `redis_url`, counting candidate runs.
// Candidate i takes 1 + 0.1 i ms by a said clock, so choices and counts never depend on load.
struct Node {
  Node(const fs::path& root, const std::string& redis_url)
      : Node(std::vector<std::string>{root.string(), redis_url + "?prefix=chain:"}) {}
  explicit Node(std::vector<std::string> stores)
      : timer(std::make_shared<testing::SaidTimer>()), tuner({"scale", "v1"}, options(std::move(stores), timer)) {}

  static TunerOptions options(std::vector<std::string> stores, std::shared_ptr<testing::SaidTimer> timer) {
    TunerOptions options;
    options.timer = std::move(timer);
    options.measurement.strategy = "exhaustive";  // the run counts below are its
    options.measurement.warmup_runs = 0;
    options.measurement.timed_runs = 1;
    options.stores = std::move(stores);
    return options;
  }

  TuningReport resolve(const std::string& key = R"({"n":1})",
                       std::vector<std::string> candidates = kCandidates) {
    TuningRequest request;
    request.key = key;
    request.candidates = std::move(candidates);
    request.run = [this](std::size_t i) {
      ++runs;
      timer->said_ms = 1.0 + 0.1 * static_cast<double>(i);
    };
    return tuner.resolve(request);
  }

  std::shared_ptr<testing::SaidTimer> timer;
  FunctionTuner tuner;
  int runs = 0;
};

std::size_t redis_keys(const RedisServer& server) {
  return server.command({"KEYS", "chain:scale/*"})->elements;
}

TEST(StoreChain, ASecondNodeTakesTheTuningFromRedisAndKeepsACopy) {
  RedisServer server;
  TempDir a, b;
  Node first(a.path(), server.url());
  const TuningReport tuned = first.resolve();
  EXPECT_EQ(tuned.source, TuningReport::Source::tuned);
  EXPECT_EQ(first.runs, 3);
  ASSERT_TRUE(tuned.record_path);
  EXPECT_TRUE(fs::exists(*tuned.record_path));
  EXPECT_EQ(redis_keys(server), 1u);  // written to both levels

  Node second(b.path(), server.url());
  const TuningReport shared = second.resolve();
  EXPECT_EQ(source_name(shared), "redis");
  EXPECT_EQ(second.runs, 0);
  EXPECT_EQ(shared.best, tuned.best);
  ASSERT_TRUE(shared.record_path);  // the copy in the second node's directory
  EXPECT_TRUE(fs::exists(*shared.record_path));
  EXPECT_EQ(shared.record_path->filename(), tuned.record_path->filename());

  server.stop();  // the local copy answers without Redis, and without a warning
  Node third(b.path(), server.url());
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(source_name(third.resolve()), "disk");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(third.runs, 0);
}

TEST(StoreChain, ARedisRecordOutsideTheCurrentSpaceIsAMiss) {
  RedisServer server;
  TempDir a, b;
  Node first(a.path(), server.url());
  const TuningReport tuned = first.resolve();
  std::vector<std::string> without_best = kCandidates;
  without_best.erase(without_best.begin() + static_cast<long>(tuned.best));
  Node second(b.path(), server.url());
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(second.resolve(R"({"n":1})", without_best).source, TuningReport::Source::tuned);
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("not a candidate"), std::string::npos) << warnings;
  EXPECT_EQ(second.runs, 2);
}

TEST(StoreChain, RedisGoingAwayLeavesTheLocalStoreAlone) {
  auto server = std::make_unique<RedisServer>();
  TempDir root;
  Node node(root.path(), server->url());
  EXPECT_EQ(node.resolve(R"({"n":1})").source, TuningReport::Source::tuned);
  server->stop();
  ::testing::internal::CaptureStderr();
  const TuningReport second = node.resolve(R"({"n":2})");  // a miss everywhere: tunes
  const TuningReport third = node.resolve(R"({"n":3})");
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(second.source, TuningReport::Source::tuned);
  EXPECT_EQ(third.source, TuningReport::Source::tuned);
  ASSERT_TRUE(third.record_path);
  EXPECT_TRUE(fs::exists(*third.record_path));
  EXPECT_EQ(warnings.find("disttune: "), warnings.rfind("disttune: ")) << "one warning: " << warnings;
  EXPECT_NE(warnings.find("Redis store"), std::string::npos) << warnings;
  EXPECT_EQ(source_name(node.resolve(R"({"n":3})")), "disk");
}

TEST(StoreChain, AGrownSpaceReadFromRedisMeasuresTheStoredBestAgainAndRefreshesBoth) {
  RedisServer server;
  TempDir a, b, c;
  Node first(a.path(), server.url());
  const std::vector<std::string> smaller(kCandidates.begin(), kCandidates.begin() + 2);
  ASSERT_EQ(first.resolve(R"({"n":1})", smaller).source, TuningReport::Source::tuned);

  // A new node with one candidate more: the Redis record is read (no local one), and only
  // its best and the added candidate are measured, in one round.
  Node second(b.path(), server.url());
  const TuningReport grown = second.resolve();
  EXPECT_EQ(grown.source, TuningReport::Source::tuned);
  EXPECT_EQ(second.runs, 2);
  ASSERT_EQ(grown.candidates.size(), 3u);
  ASSERT_TRUE(grown.record_path);
  const std::string local = testing::read_file(*grown.record_path);
  EXPECT_NE(local.find("\"refreshed\""), std::string::npos) << local;

  // The refreshed record went to Redis too: a third node takes it without tuning.
  Node third(c.path(), server.url());
  const TuningReport shared = third.resolve();
  EXPECT_EQ(source_name(shared), "redis");
  EXPECT_EQ(third.runs, 0);
  EXPECT_EQ(shared.best, grown.best);
}

TEST(StoreChain, TheOlderSettingsMakeTheSameChainAndAnEmptyUrlTurnsRedisOff) {
  RedisServer server;
  TempDir root;
  testing::ScopedEnv url("TRITON_DIST_AUTOTUNE_REDIS_URL", server.url());
  testing::ScopedEnv prefix("TRITON_DIST_AUTOTUNE_REDIS_PREFIX", "env:");
  TunerOptions options;
  options.cache_root = root.path();
  options.measurement.warmup_runs = 0;
  options.measurement.timed_runs = 1;
  FunctionTuner from_environment({"scale", "v1"}, options);
  TuningRequest request;
  request.key = "1";
  request.candidates = kCandidates;
  request.run = [](std::size_t) {};
  EXPECT_TRUE(from_environment.resolve(request).record_path);  // the directory first
  EXPECT_EQ(server.command({"KEYS", "env:scale/*"})->elements, 1u);  // then Redis

  options.shared_store = "";  // no Redis, whatever the environment says
  FunctionTuner without({"scale", "v1"}, options);
  request.key = "2";
  without.resolve(request);
  EXPECT_EQ(server.command({"KEYS", "env:scale/*"})->elements, 1u);
}

TEST(StoreChain, TheStoresVariableNamesTheChainInOrder) {
  RedisServer server;
  TempDir a, b;
  // A record only Redis holds, from another node.
  Node(a.path(), server.url()).resolve();
  testing::ScopedEnv stores("TRITON_DIST_AUTOTUNE_STORES", "file://" + b.path().string() + " , " + server.url() +
                                                              "?prefix=chain:");
  TunerOptions options;
  options.measurement.warmup_runs = 0;
  options.measurement.timed_runs = 1;
  FunctionTuner tuner({"scale", "v1"}, options);
  TuningRequest request;
  request.key = R"({"n":1})";
  request.candidates = kCandidates;
  request.run = [](std::size_t) { ADD_FAILURE() << "Redis holds the choice: nothing runs"; };
  const TuningReport report = tuner.resolve(request);
  EXPECT_EQ(source_name(report), "redis");
  ASSERT_TRUE(report.record_path);
  EXPECT_EQ(report.record_path->parent_path().parent_path(), b.path());  // copied into the directory
}

TEST(StoreChain, AHitFurtherDownIsCopiedIntoEveryStoreAboveIt) {
  RedisServer server;
  TempDir seed, first, second;
  const std::string redis = server.url() + "?prefix=chain:";
  Node(Urls{seed.path().string(), redis}).resolve();  // Redis holds the record
  Node node(Urls{first.path().string(), second.path().string(), redis});
  const TuningReport report = node.resolve();
  EXPECT_EQ(source_name(report), "redis");
  EXPECT_EQ(node.runs, 0);
  ASSERT_TRUE(report.record_path);
  EXPECT_EQ(report.record_path->parent_path().parent_path(), first.path());  // the first store's copy
  const std::string name = report.record_path->filename().string();
  EXPECT_TRUE(fs::exists(second.path() / "scale" / name));  // and the second's

  // The second directory alone answers the next node: the first is read, then the second.
  TempDir third;
  Node next(Urls{third.path().string(), second.path().string()});
  EXPECT_EQ(source_name(next.resolve()), "disk");
  EXPECT_EQ(next.runs, 0);
  EXPECT_TRUE(fs::exists(third.path() / "scale" / name));
}

TEST(StoreChain, ARegisteredSchemeIsOneMoreStoreOfTheChain) {
  // A new kind of store is one registration: "mirror://<path>" is a directory store whose
  // records a report says came from the mirror.
  static const bool registered = [] {
    register_store_scheme(StoreScheme{
        .name = "mirror",
        .source = "mirror",
        .reach = StoreReach::node,
        .make = [](const std::string& url) -> std::shared_ptr<Store> {
          return std::make_shared<DiskStore>(url.substr(std::string("mirror://").size()));
        }});
    return true;
  }();
  ASSERT_TRUE(registered);
  const std::vector<std::string> schemes = registered_store_schemes();
  EXPECT_EQ(schemes, (std::vector<std::string>{"file", "redis", "rediss", "mirror"}));

  RedisServer server;
  TempDir local, mirror, other;
  const std::string mirror_url = "mirror://" + mirror.path().string();
  Node writer(Urls{mirror_url});
  EXPECT_EQ(source_name(writer.resolve()), "tuned");
  EXPECT_EQ(writer.runs, 3);

  Node reader(Urls{local.path().string(), mirror_url, server.url() + "?prefix=chain:"});
  const TuningReport report = reader.resolve();
  EXPECT_EQ(source_name(report), "mirror");
  EXPECT_EQ(reader.runs, 0);
  ASSERT_TRUE(report.record_path);  // copied up into the directory before the mirror
  EXPECT_EQ(report.record_path->parent_path().parent_path(), local.path());
  EXPECT_EQ(redis_keys(server), 0u);  // nothing is copied down

  EXPECT_THROW(register_store_scheme(StoreScheme{.name = "mirror", .source = "again", .reach = StoreReach::node,
                                                 .make = [](const std::string&) { return nullptr; }}),
               std::invalid_argument);
}

TEST(StoreChain, ANewNodeWarmStartsFromTheRecordsOfOtherKeysInRedis) {
  RedisServer server;
  TempDir a, b;
  std::vector<std::string> space;
  for (int i = 0; i < 20; ++i) space.push_back("{\"block\":" + std::to_string(i) + "}");
  Node first(a.path(), server.url());
  first.resolve(R"({"n":64})", space);
  server.command({"SET", "chain:scale/not-a-record", "{"});  // listed, read, skipped
  Node second(b.path(), server.url());  // an empty directory: only Redis knows the key
  const TuningReport warm = second.resolve(R"({"n":128})", space);
  EXPECT_EQ(warm.source, TuningReport::Source::tuned);
  EXPECT_EQ(warm.warm_start_from, std::vector<std::string>{R"({"n":64})"});
  std::size_t measured = 0;
  for (const CandidateResult& result : warm.candidates) measured += result.measured ? 1 : 0;
  EXPECT_LT(measured, space.size());  // started from the prior: part of the space is never run
  EXPECT_EQ(redis_keys(server), 3u);
}

TEST(StoreChain, ACancelledTuningIsStoredNowhere) {
  RedisServer server;
  TempDir root;
  Node node(root.path(), server.url());
  TuningRequest request;
  request.key = "1";
  request.candidates = kCandidates;
  request.run = [](std::size_t) {};
  request.cancelled = [] { return true; };
  const TuningReport report = node.tuner.resolve(request);
  EXPECT_FALSE(report.record_path);
  EXPECT_EQ(redis_keys(server), 0u);
  for (const auto& entry : fs::directory_iterator(root.path() / "scale")) {
    EXPECT_NE(entry.path().extension(), ".json") << entry.path();  // only the tuning's log
  }
}

}  // namespace
}  // namespace disttune
