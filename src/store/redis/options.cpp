// Redis options from the Redis store's variables (TRITON_DIST_AUTOTUNE_REDIS_*) and from a
// store URL's query.
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "disttune/redis_store.hpp"
#include "disttune/settings.hpp"
#include "settings/setting_number.hpp"
#include "store/redis/url.hpp"
#include "store/store_url.hpp"

namespace disttune {
namespace {

constexpr std::string_view kUrlVariable = "TRITON_DIST_AUTOTUNE_REDIS_URL";
constexpr std::string_view kPrefixVariable = "TRITON_DIST_AUTOTUNE_REDIS_PREFIX";
constexpr std::string_view kTimeoutVariable = "TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT";

// A timeout, from the variable or a URL's query: at least 1 ms and at most a day (a Redis
// call longer than that is a fault).
constexpr detail::NumberRule kTimeoutRule{0.001, 86400.0, false, "seconds from 0.001 to 86400"};

/// `text` of `what` as a timeout under kTimeoutRule.
std::chrono::milliseconds timeout_of(std::string_view what, const std::string& text) {
  const double seconds = detail::setting_number(what, text, kTimeoutRule);
  return std::chrono::milliseconds(std::llround(seconds * 1000.0));
}

}  // namespace

std::optional<std::string> redis_url_setting() { return setting_text(kUrlVariable); }

RedisOptions redis_options_from_environment() {
  RedisOptions options;
  if (std::optional<std::string> url = redis_url_setting()) options.url = std::move(*url);
  if (std::optional<std::string> prefix = setting_text(kPrefixVariable)) {
    options.prefix = std::move(*prefix);
  }
  if (std::optional<std::string> timeout = setting_text(kTimeoutVariable)) {
    options.timeout = timeout_of(kTimeoutVariable, *timeout);
  }
  return options;
}

RedisOptions redis_options_from_url(const std::string& url) {
  detail::UrlQuery query = detail::split_url_query(url, "disttune: Redis URL");
  RedisOptions options = redis_options_from_environment();
  options.url = std::move(query.base);
  (void)detail::parse_redis_url(options.url);  // refused here, before the options are used
  for (auto& [name, value] : query.parameters) {
    if (name == "prefix") {
      options.prefix = std::move(value);
    } else if (name == "timeout") {
      options.timeout = timeout_of("the Redis URL's timeout", value);
    } else {
      throw std::invalid_argument("disttune: Redis URL: unknown query parameter '" + name +
                                  "' (known: prefix, timeout)");
    }
  }
  return options;
}

}  // namespace disttune
