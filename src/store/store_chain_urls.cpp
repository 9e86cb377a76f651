// Which URLs make a tuner's chain: the option, the older settings (cache directory and Redis
// URL) or TRITON_DIST_AUTOTUNE_STORES; and the environment's chain checked alike for every tuner.
#include <filesystem>
#include <stdexcept>

#include "disttune/error.hpp"
#include "disttune/redis_store.hpp"
#include "disttune/settings.hpp"
#include "disttune/store_chain.hpp"

namespace disttune {
namespace {

constexpr const char* kStoresVariable = "TRITON_DIST_AUTOTUNE_STORES";
constexpr const char* kRedisVariable = "TRITON_DIST_AUTOTUNE_REDIS_URL";

/// InvalidSetting when both variables name a chain.
void refuse_two_chains() {
  if (stores_setting() && redis_url_setting()) {
    throw InvalidSetting(std::string("disttune: ") + kStoresVariable + " and " + kRedisVariable +
                         " are both set; give the chain one way (a redis:// entry of " +
                         kStoresVariable + ")");
  }
}

/// `run()`, its std::invalid_argument said again as an InvalidSetting of `variable`.
template <typename Run>
void as_setting(const char* variable, Run run) {
  try {
    run();
  } catch (const std::invalid_argument& error) {
    throw InvalidSetting(std::string("disttune: ") + variable + ": " + error.what());
  }
}

}  // namespace

std::vector<std::string> split_store_urls(const std::string& text) {
  std::vector<std::string> urls;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string entry =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t first = entry.find_first_not_of(" \t");
    if (first == std::string::npos) {
      throw InvalidSetting(std::string("disttune: ") + kStoresVariable + ": entry " +
                           std::to_string(urls.size() + 1) +
                           " is empty (URLs are separated by single commas)");
    }
    urls.push_back(entry.substr(first, entry.find_last_not_of(" \t") + 1 - first));
    if (comma == std::string::npos) return urls;
    start = comma + 1;
  }
}

std::vector<std::string> store_chain_urls(const std::optional<std::vector<std::string>>& stores,
                                          const std::optional<std::filesystem::path>& cache_root,
                                          const std::optional<std::string>& shared_store) {
  if (stores) {
    if (cache_root || shared_store) {
      throw InvalidSetting(
          "disttune: the stores are given twice, as URLs (stores) and by the older options "
          "(cache_root or cache_dir, shared_store or redis_url); give the chain one way");
    }
    return *stores;
  }
  if (!cache_root && !shared_store) {
    refuse_two_chains();
    if (const std::optional<std::string> chain = stores_setting()) return split_store_urls(*chain);
  }
  // The older settings: the directory, then Redis.
  std::vector<std::string> urls{
      std::filesystem::absolute(cache_root.value_or(default_cache_root())).string()};
  const std::string shared = shared_store ? *shared_store : redis_url_setting().value_or("");
  if (!shared.empty()) {
    (void)redis_options_from_url(shared);  // a URL of another scheme is no Redis URL
    urls.push_back(shared);
  }
  return urls;
}

void check_store_environment() {
  (void)redis_options_from_environment();  // the Redis store's own variables
  refuse_two_chains();
  if (const std::optional<std::string> url = redis_url_setting()) {
    as_setting(kRedisVariable, [&] { (void)redis_options_from_url(*url); });
  }
  if (const std::optional<std::string> chain = stores_setting()) {
    for (const std::string& url : split_store_urls(*chain)) {
      as_setting(kStoresVariable, [&] { (void)make_chained_store(url); });
    }
  }
}

}  // namespace disttune
