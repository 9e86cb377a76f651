// Redis options from the environment (settings.hpp) and from a store URL's query.
#include <cmath>
#include <stdexcept>

#include "disttune/redis_store.hpp"
#include "disttune/settings.hpp"
#include "settings/setting_number.hpp"
#include "store/redis/url.hpp"
#include "store/store_url.hpp"

namespace disttune {
namespace {

// TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT's rule, for the URL's timeout.
constexpr detail::NumberRule kTimeoutRule{0.001, 86400.0, false, "seconds from 0.001 to 86400"};

}  // namespace

RedisOptions redis_options_from_environment() {
  RedisOptions options;
  if (std::optional<std::string> url = redis_url_setting()) options.url = std::move(*url);
  if (std::optional<std::string> prefix = redis_prefix_setting())
    options.prefix = std::move(*prefix);
  options.timeout = redis_timeout_setting();
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
      const double seconds = detail::setting_number("the Redis URL's timeout", value, kTimeoutRule);
      options.timeout = std::chrono::milliseconds(std::llround(seconds * 1000.0));
    } else {
      throw std::invalid_argument("disttune: Redis URL: unknown query parameter '" + name +
                                  "' (known: prefix, timeout)");
    }
  }
  return options;
}

}  // namespace disttune
