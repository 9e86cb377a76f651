// The Redis store in a build without hiredis: asking for it is a clear error.
#include <stdexcept>

#include "disttune/redis_store.hpp"
#include "store/key_claims.hpp"

namespace disttune {

bool redis_store_available() { return false; }

std::shared_ptr<Store> make_redis_store(const RedisOptions& /*options*/) {
  throw std::runtime_error(
      "disttune: a Redis store is asked for (a redis:// store URL, TRITON_DIST_AUTOTUNE_REDIS_URL "
      "or the redis_url option), but this build has no Redis store: hiredis was not found when "
      "it was built (Debian: libhiredis-dev)");
}

std::unique_ptr<detail::ClaimBoard> detail::redis_claim_board(const RedisOptions& options) {
  (void)make_redis_store(options);  // throws: no Redis in this build
  return nullptr;
}

}  // namespace disttune
