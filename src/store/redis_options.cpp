// Redis options from the environment, through the settings module (settings.hpp).
#include "disttune/redis_store.hpp"
#include "disttune/settings.hpp"

namespace disttune {

RedisOptions redis_options_from_environment() {
  RedisOptions options;
  if (std::optional<std::string> url = redis_url_setting()) options.url = std::move(*url);
  if (std::optional<std::string> prefix = redis_prefix_setting()) options.prefix = std::move(*prefix);
  options.timeout = redis_timeout_setting();
  return options;
}

}  // namespace disttune
