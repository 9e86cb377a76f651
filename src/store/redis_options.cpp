// Redis options from the environment: TRITON_DIST_AUTOTUNE_REDIS_URL, _PREFIX and _TIMEOUT.
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "disttune/redis_store.hpp"

namespace disttune {

RedisOptions redis_options_from_environment() {
  RedisOptions options;
  if (const char* url = std::getenv("TRITON_DIST_AUTOTUNE_REDIS_URL")) options.url = url;
  if (const char* prefix = std::getenv("TRITON_DIST_AUTOTUNE_REDIS_PREFIX")) options.prefix = prefix;
  const char* timeout = std::getenv("TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT");
  if (timeout != nullptr && *timeout != '\0') {
    char* end = nullptr;
    const double seconds = std::strtod(timeout, &end);
    // At least 1 ms and at most a day: a Redis call longer than that is a fault.
    if (end == timeout || *end != '\0' || !std::isfinite(seconds) || seconds < 0.001 ||
        seconds > 86400.0) {
      throw std::invalid_argument(
          std::string("disttune: TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT must be a number of seconds "
                      "from 0.001 to 86400, got '") + timeout + "'");
    }
    options.timeout = std::chrono::milliseconds(std::llround(seconds * 1000.0));
  }
  return options;
}

}  // namespace disttune
