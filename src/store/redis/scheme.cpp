// The Redis store's schemes: redis:// and rediss:// URLs name a Redis store and its claim board.
#include "disttune/redis_store.hpp"
#include "store/key_claims.hpp"
#include "store/store_schemes.hpp"

namespace disttune::detail {

std::vector<SchemeEntry> redis_schemes() {
  const auto make = [](const std::string& url) {
    return make_redis_store(redis_options_from_url(url));
  };
  const auto claim_board = [](const std::string& url) {
    return redis_claim_board(redis_options_from_url(url));
  };
  std::vector<SchemeEntry> schemes;
  for (const char* name : {"redis", "rediss"}) {
    schemes.push_back(SchemeEntry{
        .scheme =
            StoreScheme{.name = name, .source = "redis", .reach = StoreReach::job, .make = make},
        .claim_board = claim_board,
    });
  }
  return schemes;
}

}  // namespace disttune::detail
