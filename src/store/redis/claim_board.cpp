// redis_claim_board: claims as Redis keys whose time to live is the lease, claimed, renewed
// and released by Lua scripts that compare the holder first.
#include <optional>

#include "disttune/config.hpp"
#include "report/warning.hpp"
#include "store/key_claims.hpp"
#include "store/redis/connection.hpp"

namespace disttune::detail {
namespace {

// KEYS[1] the claim, ARGV[1] the holder, ARGV[2] the lease in ms: 1 when the holder holds it.
constexpr const char* kClaimScript = R"(
local held = redis.call('GET', KEYS[1])
if held == false or held == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0)";

// KEYS[1] the claim, ARGV[1] the holder: deleted if it is the holder's.
constexpr const char* kReleaseScript = R"(
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0)";

class RedisClaimBoard : public ClaimBoard {
 public:
  explicit RedisClaimBoard(const RedisOptions& options)
      : endpoint_(parse_redis_url(options.url)),
        prefix_(options.prefix),
        timeout_(options.timeout) {}

  bool claim(const std::string& name, const std::string& holder,
             std::chrono::milliseconds lease) override {
    const std::optional<long long> granted =
        call({"EVAL", kClaimScript, "1", key(name), holder, std::to_string(lease.count())});
    return !granted || *granted == 1;  // a Redis that failed grants: the sweep goes on alone
  }

  void release(const std::string& name, const std::string& holder) override {
    (void)call({"EVAL", kReleaseScript, "1", key(name), holder});
  }

 private:
  std::string key(const std::string& name) const { return prefix_ + "claim:" + sha256_hex(name); }

  // The script's integer reply; nullopt once Redis failed (one warning).
  std::optional<long long> call(std::initializer_list<std::string_view> arguments) {
    if (failed_) return std::nullopt;
    try {
      if (!connection_) connection_.emplace(endpoint_, timeout_);
      const RedisReply reply = connection_->command(arguments);
      if (reply->type == REDIS_REPLY_INTEGER) return reply->integer;
      give_up("it answered a claim with " +
              std::string(reply->type == REDIS_REPLY_ERROR ? reply->str : "no integer"));
    } catch (const RedisFault& fault) {
      give_up(fault.what());
    }
    return std::nullopt;
  }

  void give_up(const std::string& why) {
    failed_ = true;
    connection_.reset();
    warn("Redis " + endpoint_.display() + ": " + why +
         "; sweeps claim keys on the local store alone from now on");
  }

  RedisEndpoint endpoint_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
  std::optional<RedisConnection> connection_;
  bool failed_ = false;
};

}  // namespace

std::unique_ptr<ClaimBoard> redis_claim_board(const RedisOptions& options) {
  return std::make_unique<RedisClaimBoard>(options);
}

}  // namespace disttune::detail
