// The environment variables disttune reads, each parsed and validated by one function.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "disttune/settings.hpp"
#include "settings/setting_number.hpp"

namespace disttune {
namespace {

constexpr const char* kCacheDir = "TRITON_DIST_AUTOTUNE_CACHE_DIR";
constexpr const char* kCacheKeep = "TRITON_DIST_AUTOTUNE_CACHE_KEEP";
constexpr const char* kAlwaysTune = "TRITON_DIST_AUTOTUNE_ALWAYS_TUNE";
constexpr const char* kVersionCheck = "TRITON_DIST_AUTOTUNE_VERSION_CHECK";
constexpr const char* kWarmStart = "TRITON_DIST_AUTOTUNE_WARM_START";
constexpr const char* kTableMismatch = "TRITON_DIST_AUTOTUNE_TABLE_MISMATCH";
constexpr const char* kTimeout = "TRITON_DIST_AUTOTUNE_TIMEOUT";
constexpr const char* kStrategy = "TRITON_DIST_AUTOTUNE_STRATEGY";
constexpr const char* kStores = "TRITON_DIST_AUTOTUNE_STORES";
// The Redis store's own variables: declared here with every other, read and checked by
// src/store/redis/ (setting_text) with the chain.
constexpr const char* kRedisUrl = "TRITON_DIST_AUTOTUNE_REDIS_URL";
constexpr const char* kRedisPrefix = "TRITON_DIST_AUTOTUNE_REDIS_PREFIX";
constexpr const char* kRedisTimeout = "TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT";
constexpr const char* kTritonDropin = "TRITON_DIST_AUTOTUNE_TRITON_DROPIN";
constexpr const char* kSearchFrom = "TRITON_DIST_AUTOTUNE_SEARCH_FROM";
constexpr const char* kSearchEffort = "TRITON_DIST_AUTOTUNE_SEARCH_EFFORT";
constexpr const char* kTimeline = "TRITON_DIST_AUTOTUNE_TIMELINE";
constexpr const char* kCompileThreads = "TRITON_DIST_AUTOTUNE_COMPILE_THREADS";

constexpr const char* kSwitch = "1/0, true/false, yes/no, on/off";
/// The search strategy's effort levels (search_strategy.cpp's kEfforts).
constexpr const char* kSearchEfforts = "quick, default or thorough";
constexpr detail::NumberRule kKeepRule{0.0, static_cast<double>(kMostKeptPerKey), true,
                                       "a whole number from 0 to 10000"};
// Seconds; inf and none are words read before the number, and the range is the deadline
// rule's (timeout_from_seconds, shared with the tuners' options).
constexpr detail::NumberRule kTimeoutRule{std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max(),
                                          false, "seconds >= 0.001, or inf/none for no deadline"};
constexpr detail::NumberRule kCompileThreadsRule{1.0, static_cast<double>(kMostCompileThreads), true,
                                                 "a whole number of threads from 1 to 256"};
constexpr detail::NumberRule kSearchFromRule{2.0, static_cast<double>(kMostSearchFrom), true,
                                             "a whole number of configs from 2 to 1000000"};

constexpr std::array kSettings{
    EnvironmentSetting{kCacheDir, "a directory", kDefaultCacheRoot},
    EnvironmentSetting{kCacheKeep, kKeepRule.accepts, "3"},
    EnvironmentSetting{kAlwaysTune, kSwitch, "off"},
    EnvironmentSetting{kVersionCheck, kSwitch, "off"},
    EnvironmentSetting{kTableMismatch, "warn or retune", "warn"},
    EnvironmentSetting{kTimeout, kTimeoutRule.accepts, "600"},
    EnvironmentSetting{kStrategy, "a registered strategy name (exhaustive, adaptive, converge, ...)",
                       "converge in C++, exhaustive from Python"},
    EnvironmentSetting{kStores, "store URLs, first read first, separated by commas (file:///path or a path, redis://...)",
                       "the cache directory, then the Redis URL when set"},
    EnvironmentSetting{kRedisUrl, "redis://[[user]:password@]host[:port][/db]", "no Redis"},
    EnvironmentSetting{kRedisPrefix, "any text", "disttune:"},
    EnvironmentSetting{kRedisTimeout, "seconds from 0.001 to 86400", "1"},
    EnvironmentSetting{kTritonDropin, kSwitch, "off"},
    EnvironmentSetting{kWarmStart, kSwitch, "on"},
    EnvironmentSetting{kSearchFrom, kSearchFromRule.accepts, "80"},
    EnvironmentSetting{kSearchEffort, kSearchEfforts, "default"},
    EnvironmentSetting{kTimeline, "a file (JSON lines appended)", "none"},
    EnvironmentSetting{kCompileThreads, kCompileThreadsRule.accepts, "the CPU cores, at most 32"},
};

/// The variable's text; nullopt when unset or empty.
std::optional<std::string> read(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  return std::string(text);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return text;
}

bool read_switch(const char* name, bool when_unset = false) {
  const std::optional<std::string> text = read(name);
  if (!text) return when_unset;
  const std::string value = lower(*text);
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value == "0" || value == "false" || value == "no" || value == "off") return false;
  throw InvalidSetting(std::string("disttune: ") + name +
                       " must be 1/0, true/false, yes/no or on/off, got '" + *text + "'");
}

}  // namespace

std::span<const EnvironmentSetting> environment_settings() { return kSettings; }

std::optional<std::string> setting_text(std::string_view name) {
  const bool declared = std::any_of(kSettings.begin(), kSettings.end(),
                                     [&](const EnvironmentSetting& setting) { return setting.name == name; });
  if (!declared) throw std::logic_error("disttune: " + std::string(name) + " is no declared setting");
  return read(std::string(name).c_str());
}

std::optional<std::filesystem::path> cache_dir_setting() {
  const std::optional<std::string> text = read(kCacheDir);
  if (!text) return std::nullopt;
  return std::filesystem::absolute(*text);
}

std::filesystem::path cache_root_setting() {
  if (std::optional<std::filesystem::path> root = cache_dir_setting()) return *root;
  const std::filesystem::path under_home(kDefaultCacheRoot.substr(2));  // past "~/"
  if (const std::optional<std::string> home = read("HOME")) {
    return std::filesystem::path(*home) / under_home;
  }
  if (const passwd* user = getpwuid(geteuid()); user != nullptr && user->pw_dir != nullptr) {
    return std::filesystem::path(user->pw_dir) / under_home;
  }
  throw std::runtime_error(std::string("disttune: no cache root: set ") + kCacheDir + " or HOME");
}

std::size_t cache_keep_setting() {
  const std::optional<std::string> text = read(kCacheKeep);
  if (!text) return kDefaultKeptPerKey;
  return static_cast<std::size_t>(detail::setting_number(kCacheKeep, *text, kKeepRule));
}

bool always_tune_setting() { return read_switch(kAlwaysTune); }

bool version_check_setting() { return read_switch(kVersionCheck); }

TableMismatch table_mismatch_setting() {
  const std::optional<std::string> text = read(kTableMismatch);
  if (!text) return TableMismatch::warn;
  const std::string value = lower(*text);
  if (value == "warn") return TableMismatch::warn;
  if (value == "retune") return TableMismatch::retune;
  throw InvalidSetting(std::string("disttune: ") + kTableMismatch + " must be warn or retune, got '" +
                       *text + "'");
}

bool triton_dropin_setting() { return read_switch(kTritonDropin); }

bool warm_start_setting() { return read_switch(kWarmStart, true); }

std::size_t search_from_setting() {
  const std::optional<std::string> text = read(kSearchFrom);
  if (!text) return kDefaultSearchFrom;
  return static_cast<std::size_t>(detail::setting_number(kSearchFrom, *text, kSearchFromRule));
}

std::optional<std::string> search_effort_setting() {
  const std::optional<std::string> text = read(kSearchEffort);
  if (!text) return std::nullopt;
  const std::string value = lower(*text);
  if (value == "quick" || value == "default" || value == "thorough") return value;
  throw InvalidSetting(std::string("disttune: ") + kSearchEffort + " must be " + kSearchEfforts + ", got '" + *text +
                       "'");
}

std::optional<std::filesystem::path> timeline_setting() {
  const std::optional<std::string> text = read(kTimeline);
  if (!text) return std::nullopt;
  return std::filesystem::absolute(*text);
}

std::size_t compile_threads_setting() {
  const std::optional<std::string> text = read(kCompileThreads);
  if (!text) return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, kDefaultMostCompileThreads);
  return static_cast<std::size_t>(detail::setting_number(kCompileThreads, *text, kCompileThreadsRule));
}

std::chrono::milliseconds collective_timeout_setting() {
  const std::optional<std::string> text = read(kTimeout);
  if (!text) return kDefaultCollectiveTimeout;
  const std::string value = lower(*text);
  if (value == "none" || value == "inf") return kNoDeadline;
  const double seconds = detail::setting_number(kTimeout, *text, kTimeoutRule);
  return timeout_from_seconds(seconds, std::string(kTimeout) + "='" + *text + "'");
}

std::optional<std::string> strategy_setting() { return read(kStrategy); }

std::optional<std::string> stores_setting() { return read(kStores); }

}  // namespace disttune
