// Tests of the environment settings (settings.hpp): each variable's accepted values and errors.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/context.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/redis_store.hpp"
#include "disttune/settings.hpp"
#include "disttune/store_chain.hpp"
#include "disttune/strategy.hpp"

namespace disttune {
namespace {

using namespace std::chrono_literals;

/// Unsets every variable disttune reads before a test and restores them after it.
class EnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const EnvironmentSetting& setting : environment_settings()) {
      const std::string name(setting.name);
      if (const char* value = std::getenv(name.c_str())) saved_.emplace_back(name, value);
      ::unsetenv(name.c_str());
    }
  }
  void TearDown() override {
    for (const EnvironmentSetting& setting : environment_settings()) {
      ::unsetenv(std::string(setting.name).c_str());
    }
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  static void set(const char* name, const char* value) { ::setenv(name, value, 1); }

  /// What every tuner checks: this layer's variables, and the chain's and its stores' own.
  static void check_every_setting() {
    check_environment();
    check_store_environment();
  }

  /// The message of the InvalidSetting that `read` throws; fails the test if it throws none.
  template <class Read>
  static std::string refusal(Read read) {
    try {
      (void)read();
    } catch (const InvalidSetting& error) {
      return error.what();
    }
    ADD_FAILURE() << "no InvalidSetting";
    return "";
  }

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST_F(EnvironmentTest, ListsEveryVariableDisttuneReads) {
  std::vector<std::string> names;
  for (const EnvironmentSetting& setting : environment_settings()) {
    names.emplace_back(setting.name);
    EXPECT_FALSE(setting.accepts.empty());
    EXPECT_FALSE(setting.when_unset.empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "TRITON_DIST_AUTOTUNE_CACHE_DIR", "TRITON_DIST_AUTOTUNE_CACHE_KEEP",
                       "TRITON_DIST_AUTOTUNE_ALWAYS_TUNE",
                       "TRITON_DIST_AUTOTUNE_VERSION_CHECK", "TRITON_DIST_AUTOTUNE_TABLE_MISMATCH",
                       "TRITON_DIST_AUTOTUNE_TIMEOUT", "TRITON_DIST_AUTOTUNE_STRATEGY",
                       "TRITON_DIST_AUTOTUNE_STORES",
                       "TRITON_DIST_AUTOTUNE_REDIS_URL", "TRITON_DIST_AUTOTUNE_REDIS_PREFIX",
                       "TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT", "TRITON_DIST_AUTOTUNE_TRITON_DROPIN",
                       "TRITON_DIST_AUTOTUNE_WARM_START", "TRITON_DIST_AUTOTUNE_SEARCH_FROM",
                       "TRITON_DIST_AUTOTUNE_SEARCH_EFFORT", "TRITON_DIST_AUTOTUNE_TIMELINE",
                       "TRITON_DIST_AUTOTUNE_COMPILE_THREADS"}));
}

TEST_F(EnvironmentTest, UnsetAndEmptyMeanTheDefault) {
  EXPECT_EQ(cache_dir_setting(), std::nullopt);
  EXPECT_FALSE(always_tune_setting());
  EXPECT_FALSE(version_check_setting());
  EXPECT_FALSE(triton_dropin_setting());
  EXPECT_TRUE(warm_start_setting());  // the one switch that is on unless turned off
  EXPECT_EQ(search_from_setting(), kDefaultSearchFrom);
  for (const EnvironmentSetting& setting : environment_settings()) {
    if (setting.name == "TRITON_DIST_AUTOTUNE_SEARCH_FROM") {
      EXPECT_EQ(setting.when_unset, std::to_string(kDefaultSearchFrom));  // the table says the default
    }
  }
  EXPECT_EQ(timeline_setting(), std::nullopt);
  EXPECT_EQ(compile_threads_setting(),
            std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, kDefaultMostCompileThreads));
  EXPECT_EQ(collective_timeout_setting(), kDefaultCollectiveTimeout);
  EXPECT_EQ(strategy_setting(), std::nullopt);
  for (const EnvironmentSetting& setting : environment_settings()) {
    set(std::string(setting.name).c_str(), "");
  }
  EXPECT_EQ(cache_dir_setting(), std::nullopt);
  EXPECT_FALSE(always_tune_setting());
  EXPECT_EQ(collective_timeout_setting(), kDefaultCollectiveTimeout);
  EXPECT_EQ(strategy_setting(), std::nullopt);
}

TEST_F(EnvironmentTest, CacheDirIsMadeAbsolute) {
  set("TRITON_DIST_AUTOTUNE_CACHE_DIR", "relative/cache");
  EXPECT_EQ(cache_dir_setting(), std::filesystem::current_path() / "relative/cache");
  set("TRITON_DIST_AUTOTUNE_CACHE_DIR", "/tmp/somewhere");
  EXPECT_EQ(cache_dir_setting(), std::filesystem::path("/tmp/somewhere"));
}

TEST_F(EnvironmentTest, SwitchesAcceptFourSpellingsEachInAnyCase) {
  for (const char* on : {"1", "true", "YES", "On"}) {
    set("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", on);
    EXPECT_TRUE(always_tune_setting()) << on;
  }
  for (const char* off : {"0", "False", "no", "OFF"}) {
    set("TRITON_DIST_AUTOTUNE_VERSION_CHECK", off);
    EXPECT_FALSE(version_check_setting()) << off;
  }
  set("TRITON_DIST_AUTOTUNE_TRITON_DROPIN", "on");
  EXPECT_TRUE(triton_dropin_setting());
  set("TRITON_DIST_AUTOTUNE_TRITON_DROPIN", "0");
  EXPECT_FALSE(triton_dropin_setting());
  set("TRITON_DIST_AUTOTUNE_WARM_START", "off");
  EXPECT_FALSE(warm_start_setting());
  set("TRITON_DIST_AUTOTUNE_VERSION_CHECK", "sometimes");
  const std::string message = refusal([] { return version_check_setting(); });
  EXPECT_NE(message.find("TRITON_DIST_AUTOTUNE_VERSION_CHECK"), std::string::npos) << message;
  EXPECT_NE(message.find("'sometimes'"), std::string::npos) << message;
}

TEST_F(EnvironmentTest, TableMismatchIsWarnOrRetune) {
  EXPECT_EQ(table_mismatch_setting(), TableMismatch::warn);
  set("TRITON_DIST_AUTOTUNE_TABLE_MISMATCH", "ReTune");
  EXPECT_EQ(table_mismatch_setting(), TableMismatch::retune);
  set("TRITON_DIST_AUTOTUNE_TABLE_MISMATCH", "warn");
  EXPECT_EQ(table_mismatch_setting(), TableMismatch::warn);
  set("TRITON_DIST_AUTOTUNE_TABLE_MISMATCH", "ignore");
  const std::string message = refusal([] { return table_mismatch_setting(); });
  EXPECT_NE(message.find("must be warn or retune, got 'ignore'"), std::string::npos) << message;
}

TEST_F(EnvironmentTest, TimeoutIsSecondsOrNoDeadline) {
  set("TRITON_DIST_AUTOTUNE_TIMEOUT", "2.5");
  EXPECT_EQ(collective_timeout_setting(), 2500ms);
  set("TRITON_DIST_AUTOTUNE_TIMEOUT", "0.001");
  EXPECT_EQ(collective_timeout_setting(), 1ms);
  for (const char* none : {"inf", "INF", "none", "None", "1e10", "1e300"}) {
    set("TRITON_DIST_AUTOTUNE_TIMEOUT", none);
    const auto timeout = collective_timeout_setting();
    if (std::string(none) == "1e10") {
      EXPECT_EQ(timeout, std::chrono::milliseconds(10'000'000'000'000LL));
    } else {
      EXPECT_EQ(timeout, kNoDeadline) << none;
    }
  }
}

TEST_F(EnvironmentTest, TimeoutUnderOneMillisecondOrNotANumberIsRefused) {
  for (const char* bad : {"1e-9", "0.0004", "0", "-5", "abc", "10s", "nan", "-inf", " 3",
                          "infinity", " "}) {
    set("TRITON_DIST_AUTOTUNE_TIMEOUT", bad);
    const std::string message = refusal([] { return collective_timeout_setting(); });
    EXPECT_NE(message.find("TRITON_DIST_AUTOTUNE_TIMEOUT"), std::string::npos) << bad;
    EXPECT_NE(message.find("0.001"), std::string::npos) << message;
    // Older callers caught std::invalid_argument; they still do.
    EXPECT_THROW((void)collective_timeout_setting(), std::invalid_argument);
  }
}

TEST_F(EnvironmentTest, SearchFromIsAWholeNumberOfConfigsFromTwo) {
  set("TRITON_DIST_AUTOTUNE_SEARCH_FROM", "128");
  EXPECT_EQ(search_from_setting(), 128u);
  for (const char* bad : {"1", "0", "-3", "64.5", "many", "1000001"}) {
    set("TRITON_DIST_AUTOTUNE_SEARCH_FROM", bad);
    EXPECT_EQ(refusal(search_from_setting),
              std::string("disttune: TRITON_DIST_AUTOTUNE_SEARCH_FROM must be a whole number of configs from 2 "
                          "to 1000000, got '") + bad + "'");
  }
}

TEST_F(EnvironmentTest, SearchEffortIsOneOfTheSearchsLevelsInAnyCase) {
  EXPECT_EQ(search_effort_setting(), std::nullopt);
  for (const auto& [text, level] : {std::pair{"quick", "quick"}, std::pair{"Default", "default"},
                                    std::pair{"THOROUGH", "thorough"}}) {
    set("TRITON_DIST_AUTOTUNE_SEARCH_EFFORT", text);
    EXPECT_EQ(search_effort_setting(), std::optional<std::string>(level));
  }
  for (const char* bad : {"most", "0.1", " quick"}) {
    set("TRITON_DIST_AUTOTUNE_SEARCH_EFFORT", bad);
    EXPECT_EQ(refusal(search_effort_setting),
              std::string("disttune: TRITON_DIST_AUTOTUNE_SEARCH_EFFORT must be quick, default or thorough, got '") +
                  bad + "'");
  }
}

TEST_F(EnvironmentTest, CompileThreadsIsAWholeNumberOfThreadsFromOne) {
  set("TRITON_DIST_AUTOTUNE_COMPILE_THREADS", "48");  // more than the cores is allowed
  EXPECT_EQ(compile_threads_setting(), 48u);
  for (const char* bad : {"0", "-2", "1.5", "all", "257"}) {
    set("TRITON_DIST_AUTOTUNE_COMPILE_THREADS", bad);
    EXPECT_EQ(refusal(compile_threads_setting),
              std::string("disttune: TRITON_DIST_AUTOTUNE_COMPILE_THREADS must be a whole number of threads from 1 "
                          "to 256, got '") + bad + "'");
  }
}

TEST_F(EnvironmentTest, TimelineIsAFileMadeAbsolute) {
  set("TRITON_DIST_AUTOTUNE_TIMELINE", "timeline.jsonl");
  EXPECT_EQ(timeline_setting(), std::filesystem::absolute("timeline.jsonl"));
}

TEST_F(EnvironmentTest, StrategyNamesAKnownStrategyOrIsRefusedNamingTheVariable) {
  set("TRITON_DIST_AUTOTUNE_STRATEGY", "adaptive");
  EXPECT_EQ(strategy_setting(), "adaptive");
  EXPECT_EQ(strategy_name(Measurement{}), "adaptive");
  Measurement explicit_choice;
  explicit_choice.strategy = "exhaustive";
  EXPECT_EQ(strategy_name(explicit_choice), "exhaustive");  // an explicit choice wins
  set("TRITON_DIST_AUTOTUNE_STRATEGY", "bogus");
  const std::string message = refusal([] { return strategy_name(Measurement{}); });
  EXPECT_NE(message.find("TRITON_DIST_AUTOTUNE_STRATEGY"), std::string::npos) << message;
  EXPECT_NE(message.find("'bogus'"), std::string::npos) << message;
  // A tuner that takes the variable refuses it when it is made, not at its first call; so
  // does one that names its own strategy (every setting is checked whatever the others).
  TunerOptions options;
  options.disk_cache = false;
  EXPECT_THROW(FunctionTuner({"f", "v1"}, options), InvalidSetting);
  options.measurement.strategy = "exhaustive";
  EXPECT_NE(refusal([&] { return FunctionTuner({"f", "v1"}, options); }).find("TRITON_DIST_AUTOTUNE_STRATEGY='bogus'"),
            std::string::npos);
}

TEST_F(EnvironmentTest, ABadRedisUrlIsRefusedWithoutARedisStoreToo) {
  set("TRITON_DIST_AUTOTUNE_REDIS_URL", "http://secret@host");
  TunerOptions options;
  options.disk_cache = false;  // no store reads the URL
  const std::string message = refusal([&] { return FunctionTuner({"f", "v1"}, options); });
  EXPECT_EQ(message.rfind("disttune: TRITON_DIST_AUTOTUNE_REDIS_URL: disttune: Redis URL: ", 0), 0u) << message;
  EXPECT_EQ(message.find("secret"), std::string::npos) << message;  // a password is not echoed
}

TEST_F(EnvironmentTest, EveryNumericSettingIsReadByOneParser) {
  // The same text is accepted or refused alike by every numeric variable: no spaces, no '+',
  // no hex, no nan/inf spelt as a number (the timeout's own words inf/none aside).
  for (const char* name : {"TRITON_DIST_AUTOTUNE_CACHE_KEEP", "TRITON_DIST_AUTOTUNE_TIMEOUT",
                           "TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT"}) {
    set(name, "5");
    EXPECT_NO_THROW(check_every_setting()) << name;
    for (const char* bad : {" 5", "5 ", "\t5", "+5", "0x10", "0X1p3", "5s", "nan", "1,5", "--5"}) {
      set(name, bad);
      const std::string message = refusal([] { check_every_setting(); });
      EXPECT_NE(message.find(std::string(name) + " must be "), std::string::npos) << message;
      EXPECT_NE(message.find(std::string(", got '") + bad + "'"), std::string::npos) << message;
    }
    ::unsetenv(name);
  }
  EXPECT_EQ(cache_keep_setting(), kDefaultKeptPerKey);
  set("TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT", "0.25");
  EXPECT_EQ(redis_options_from_environment().timeout, 250ms);
  set("TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT", "2.5e1");
  EXPECT_EQ(redis_options_from_environment().timeout, 25000ms);
  set("TRITON_DIST_AUTOTUNE_TIMEOUT", "2.5e1");
  EXPECT_EQ(collective_timeout_setting(), 25000ms);
  // A whole number is digits only.
  for (const char* bad : {"3.0", "1e3", "-1"}) {
    set("TRITON_DIST_AUTOTUNE_CACHE_KEEP", bad);
    EXPECT_EQ(refusal([] { return cache_keep_setting(); }),
              std::string("disttune: TRITON_DIST_AUTOTUNE_CACHE_KEEP must be a whole number from 0 to 10000, "
                          "got '") + bad + "'");
  }
  set("TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT", "0x10");
  EXPECT_EQ(refusal([] { return redis_options_from_environment(); }),
            "disttune: TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT must be seconds from 0.001 to 86400, got '0x10'");
  set("TRITON_DIST_AUTOTUNE_TIMEOUT", " 5");
  EXPECT_EQ(refusal([] { return collective_timeout_setting(); }),
            "disttune: TRITON_DIST_AUTOTUNE_TIMEOUT must be seconds >= 0.001, or inf/none for no deadline, "
            "got ' 5'");
}

TEST_F(EnvironmentTest, CheckingTheEnvironmentRefusesEveryBadValueWhateverTheOthers) {
  EXPECT_NO_THROW(check_every_setting());
  for (const char* name : {"TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "TRITON_DIST_AUTOTUNE_VERSION_CHECK",
                           "TRITON_DIST_AUTOTUNE_TRITON_DROPIN", "TRITON_DIST_AUTOTUNE_WARM_START",
                           "TRITON_DIST_AUTOTUNE_TABLE_MISMATCH", "TRITON_DIST_AUTOTUNE_CACHE_KEEP",
                           "TRITON_DIST_AUTOTUNE_TIMEOUT", "TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT",
                           "TRITON_DIST_AUTOTUNE_SEARCH_EFFORT"}) {
    set(name, "abc");
    const std::string message = refusal([] { check_every_setting(); });
    EXPECT_NE(message.find(std::string("disttune: ") + name + " must be "), std::string::npos) << message;
    EXPECT_NE(message.find("got 'abc'"), std::string::npos) << message;
    ::unsetenv(name);
  }
  // The values only their own readers check: any text is a directory, a prefix or a name here.
  set("TRITON_DIST_AUTOTUNE_CACHE_DIR", "abc");
  set("TRITON_DIST_AUTOTUNE_REDIS_PREFIX", "abc");
  EXPECT_NO_THROW(check_every_setting());
}

TEST_F(EnvironmentTest, EveryTunerRefusesTheRedisStoresVariablesThoughItUsesNoStore) {
  set("TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT", "abc");
  EXPECT_NO_THROW(check_environment());  // a store's variable: read by its folder of src/store/
  const std::string expected =
      "disttune: TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT must be seconds from 0.001 to 86400, got 'abc'";
  EXPECT_EQ(refusal([] { return ContextualAutotuner("outer"); }), expected);
  TunerOptions options;
  options.disk_cache = false;
  EXPECT_EQ(refusal([&] { return FunctionTuner({"f", "v1"}, options); }), expected);
}

TEST_F(EnvironmentTest, ASettingsTextIsReadOnlyForADeclaredVariable) {
  EXPECT_EQ(setting_text("TRITON_DIST_AUTOTUNE_REDIS_PREFIX"), std::nullopt);
  set("TRITON_DIST_AUTOTUNE_REDIS_PREFIX", "team:");
  EXPECT_EQ(setting_text("TRITON_DIST_AUTOTUNE_REDIS_PREFIX"), "team:");
  EXPECT_EQ(redis_options_from_environment().prefix, "team:");
  EXPECT_THROW((void)setting_text("TRITON_DIST_AUTOTUNE_REDIS_PREFIXES"), std::logic_error);
}

TEST_F(EnvironmentTest, AVariableThatIsNoSettingIsNamedWithTheClosestSetting) {
  EXPECT_TRUE(unknown_settings().empty());
  set("TRITON_DIST_AUTOTUNE_WARMUP", "abc");
  set("TRITON_DIST_AUTOTUNE_TIMOUT", "5");
  set("TRITON_DIST_AUTOTUNE_CACHE_DIRECTORY", "/tmp");
  set("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "1");  // known: not listed
  std::vector<std::pair<std::string, std::string>> named;
  for (const UnknownSetting& unknown : unknown_settings()) named.emplace_back(unknown.name, unknown.closest);
  std::sort(named.begin(), named.end());
  EXPECT_EQ(named, (std::vector<std::pair<std::string, std::string>>{
                       {"TRITON_DIST_AUTOTUNE_CACHE_DIRECTORY", "TRITON_DIST_AUTOTUNE_CACHE_DIR"},
                       {"TRITON_DIST_AUTOTUNE_TIMOUT", "TRITON_DIST_AUTOTUNE_TIMEOUT"},
                       {"TRITON_DIST_AUTOTUNE_WARMUP", "TRITON_DIST_AUTOTUNE_WARM_START"}}));
  for (const char* name : {"TRITON_DIST_AUTOTUNE_WARMUP", "TRITON_DIST_AUTOTUNE_TIMOUT",
                           "TRITON_DIST_AUTOTUNE_CACHE_DIRECTORY"}) {
    ::unsetenv(name);
  }
}

}  // namespace
}  // namespace disttune
