// Store URLs and their registry: schemes, file:// and plain paths, Redis URLs' query, the
// chain a tuner's options and the environment name, and what is refused (with the reason).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "disttune/error.hpp"
#include "disttune/redis_store.hpp"
#include "disttune/store_chain.hpp"
#include "store_test_support.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::ScopedEnv;
using Urls = std::vector<std::string>;

/// The message of what `run` throws as E; empty if it throws nothing.
template <typename E, typename Run>
std::string refusal(Run run) {
  try {
    run();
  } catch (const E& error) {
    return error.what();
  }
  return "";
}

/// Success when `run` throws an E whose message holds `part`; else what it said instead.
template <typename E, typename Run>
::testing::AssertionResult refused_with(Run run, const std::string& part) {
  const std::string message = refusal<E>(run);
  if (message.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "refused with '" << message << "', not '" << part << "'";
}

/// No chain in the environment, whatever the test process was given.
struct QuietEnvironment {
  ScopedEnv stores{"TRITON_DIST_AUTOTUNE_STORES", std::nullopt};
  ScopedEnv redis{"TRITON_DIST_AUTOTUNE_REDIS_URL", std::nullopt};
  ScopedEnv cache{"TRITON_DIST_AUTOTUNE_CACHE_DIR", "/tmp/disttune-env-cache"};
};

fs::path root_of(const ChainedStore& chained) {
  const auto directory = std::dynamic_pointer_cast<const DiskStore>(chained.store);
  return directory ? directory->root() : fs::path();
}

TEST(StoreUrl, AnUnknownSchemeIsRefusedNamingItAndTheRegisteredOnes) {
  const std::string message =
      refusal<InvalidSetting>([] { make_chained_store("ftp://host/records"); });
  EXPECT_NE(message.find("scheme 'ftp' is not registered"), std::string::npos) << message;
  EXPECT_NE(message.find("(registered: file, redis, rediss"), std::string::npos) << message;
  // A scheme is case-insensitive; a password after an unknown scheme is never echoed.
  const std::string secret =
      refusal<InvalidSetting>([] { make_chained_store("S3://user:topsecret@bucket"); });
  EXPECT_NE(secret.find("scheme 's3'"), std::string::npos) << secret;
  EXPECT_EQ(secret.find("topsecret"), std::string::npos) << secret;
}

TEST(StoreUrl, APlainPathOrAFileUrlNamesTheDirectoryStore) {
  const ChainedStore plain = make_chained_store("/tmp/records");
  EXPECT_EQ(root_of(plain), "/tmp/records");
  EXPECT_EQ(plain.source, "disk");
  EXPECT_EQ(plain.reach, StoreReach::node);
  EXPECT_EQ(root_of(make_chained_store("file:///tmp/a%2Cb")), "/tmp/a,b");
  EXPECT_EQ(root_of(make_chained_store("FILE://localhost/tmp/c")), "/tmp/c");
  EXPECT_EQ(root_of(make_chained_store("relative/dir")), fs::absolute("relative/dir"));
  EXPECT_EQ(root_of(make_chained_store("/tmp/not-a-scheme:/x")), "/tmp/not-a-scheme:/x");
  EXPECT_TRUE(refused_with<std::invalid_argument>([] { make_chained_store("file://server/share"); },
                                                  "names a host"));
  EXPECT_TRUE(refused_with<std::invalid_argument>([] { make_chained_store("file:///tmp/%zz"); },
                                                  "bad %-escape"));
}

TEST(StoreUrl, ARedisUrlCarriesItsPrefixAndTimeout) {
  ScopedEnv prefix("TRITON_DIST_AUTOTUNE_REDIS_PREFIX", "from-env:");
  ScopedEnv timeout("TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT", std::nullopt);
  const RedisOptions given = redis_options_from_url("redis://h:1/2?prefix=team%20a:&timeout=0.25");
  EXPECT_EQ(given.url, "redis://h:1/2");
  EXPECT_EQ(given.prefix, "team a:");
  EXPECT_EQ(given.timeout, std::chrono::milliseconds(250));
  const RedisOptions plain = redis_options_from_url("redis://h");
  EXPECT_EQ(plain.prefix, "from-env:");  // what the URL does not say comes from the environment
  EXPECT_EQ(plain.timeout, kDefaultRedisTimeout);
  EXPECT_TRUE(refused_with<std::invalid_argument>(
      [] { redis_options_from_url("redis://h?ttl=3"); },
      "unknown query parameter 'ttl' (known: prefix, timeout)"));
  EXPECT_TRUE(refused_with<std::invalid_argument>(
      [] { redis_options_from_url("redis://h?timeout=0"); },
      "the Redis URL's timeout must be seconds from 0.001 to 86400, got '0'"));
  EXPECT_TRUE(refused_with<std::invalid_argument>(
      [] { redis_options_from_url("redis://h?prefix"); }, "name=value"));
  if (redis_store_available()) {
    const ChainedStore redis = make_chained_store("redis://127.0.0.1:1/0?prefix=x:");
    EXPECT_EQ(redis.source, "redis");
    EXPECT_EQ(redis.reach, StoreReach::job);
  }
}

TEST(StoreUrl, TheVariableIsSplitAtCommas) {
  EXPECT_EQ(split_store_urls("file:///a, redis://h:6379/0 ,/b"),
            (Urls{"file:///a", "redis://h:6379/0", "/b"}));
  EXPECT_TRUE(refused_with<InvalidSetting>([] { split_store_urls("/a,,/b"); }, "entry 2 is empty"));
  EXPECT_TRUE(refused_with<InvalidSetting>([] { split_store_urls("/a, "); }, "entry 2 is empty"));
}

TEST(StoreChainUrls, TheOptionTheOlderSettingsOrTheVariable) {
  QuietEnvironment quiet;
  // By default: the cache directory alone (no Redis URL is set).
  EXPECT_EQ(store_chain_urls(std::nullopt, std::nullopt, std::nullopt),
            Urls{"/tmp/disttune-env-cache"});
  EXPECT_EQ(store_chain_urls(Urls{"/x", "redis://h"}, std::nullopt, std::nullopt),
            (Urls{"/x", "redis://h"}));
  EXPECT_EQ(store_chain_urls(Urls{}, std::nullopt, std::nullopt), Urls{});
  EXPECT_EQ(store_chain_urls(std::nullopt, fs::path("/root"), std::string("redis://h/1")),
            (Urls{"/root", "redis://h/1"}));
  {
    ScopedEnv redis("TRITON_DIST_AUTOTUNE_REDIS_URL", "redis://env-host");
    EXPECT_EQ(store_chain_urls(std::nullopt, std::nullopt, std::nullopt),
              (Urls{"/tmp/disttune-env-cache", "redis://env-host"}));
    EXPECT_EQ(store_chain_urls(std::nullopt, std::nullopt, std::string()),
              Urls{"/tmp/disttune-env-cache"});
  }
  ScopedEnv stores("TRITON_DIST_AUTOTUNE_STORES", "/chain-a,redis://chain-b");
  EXPECT_EQ(store_chain_urls(std::nullopt, std::nullopt, std::nullopt),
            (Urls{"/chain-a", "redis://chain-b"}));
  // An option given in the older spelling takes the older settings, not the variable.
  EXPECT_EQ(store_chain_urls(std::nullopt, fs::path("/root"), std::nullopt), Urls{"/root"});
}

TEST(StoreChainUrls, TwoSpellingsOfOneChainAreRefused) {
  QuietEnvironment quiet;
  EXPECT_TRUE(refused_with<InvalidSetting>(
      [] { store_chain_urls(Urls{"/x"}, fs::path("/root"), std::nullopt); },
      "give the chain one way"));
  EXPECT_TRUE(refused_with<std::invalid_argument>(
      [] { store_chain_urls(std::nullopt, std::nullopt, std::string("http://h")); }, "Redis URL"));
  ScopedEnv stores("TRITON_DIST_AUTOTUNE_STORES", "/chain-a");
  ScopedEnv redis("TRITON_DIST_AUTOTUNE_REDIS_URL", "redis://env-host");
  const std::string both = refusal<InvalidSetting>([] { check_store_environment(); });
  EXPECT_NE(
      both.find("TRITON_DIST_AUTOTUNE_STORES and TRITON_DIST_AUTOTUNE_REDIS_URL are both set"),
      std::string::npos)
      << both;
  EXPECT_EQ(
      refusal<InvalidSetting>([] { store_chain_urls(std::nullopt, std::nullopt, std::nullopt); }),
      both);
}

TEST(StoreChainUrls, TheEnvironmentsChainIsCheckedWithoutAStore) {
  QuietEnvironment quiet;
  EXPECT_NO_THROW(check_store_environment());
  ScopedEnv stores("TRITON_DIST_AUTOTUNE_STORES", "/a,gopher://h");
  const std::string message = refusal<InvalidSetting>([] { check_store_environment(); });
  EXPECT_EQ(message.rfind("disttune: TRITON_DIST_AUTOTUNE_STORES: ", 0), 0u) << message;
  EXPECT_NE(message.find("scheme 'gopher' is not registered"), std::string::npos) << message;
}

TEST(StoreRegistry, RefusesASchemeItCannotUse) {
  const auto make = [](const std::string&) -> std::shared_ptr<Store> { return nullptr; };
  const struct {
    StoreScheme scheme;
    std::string reason;
  } refused[] = {
      {{.name = "Bad_Name", .source = "x", .reach = StoreReach::job, .make = make},
       "is no URL scheme"},
      {{.name = "nosource", .source = "", .reach = StoreReach::job, .make = make}, "has no source"},
      {{.name = "nomake", .source = "x", .reach = StoreReach::job, .make = nullptr},
       "has no factory"},
      {{.name = "file", .source = "x", .reach = StoreReach::node, .make = make},
       "already registered"},
  };
  for (const auto& [scheme, reason] : refused) {
    const std::string message =
        refusal<std::invalid_argument>([&] { register_store_scheme(scheme); });
    EXPECT_NE(message.find(reason), std::string::npos) << scheme.name << ": " << message;
  }
  EXPECT_EQ(registered_store_schemes(), (Urls{"file", "redis", "rediss"}));
}

}  // namespace
}  // namespace disttune
