// One hiredis connection with a deadline on connecting and on every command as a whole.
#pragma once

#include <hiredis/hiredis.h>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <string_view>

#include "store/redis/reply_limits.hpp"
#include "store/redis/url.hpp"

namespace disttune::detail {

/// The connection failed, timed out or broke; it cannot be used again.
class RedisFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RedisReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using RedisReply = std::unique_ptr<redisReply, RedisReplyDeleter>;

/// What one command's reply may hold: at most `max_elements` per array and `max_bytes` in all.
struct RedisReplyBounds {
  std::size_t max_elements = 16;
  std::size_t max_bytes = std::size_t{65} << 20;
};

/// A connected, authenticated session on one database. Move-only; closes itself.
class RedisConnection {
 public:
  /// Connects within `timeout`, sends AUTH (if the endpoint has a password) and SELECT, each
  /// within `timeout`. Throws RedisFault on any failure, saying what failed (never quoting
  /// the password).
  RedisConnection(const RedisEndpoint& endpoint, std::chrono::milliseconds timeout,
                  RedisReplyBounds bounds = {});

  /// Sends one command and returns its whole reply (which may be an error reply: the
  /// server's answer) within one timeout from the call, however the server paces its bytes.
  /// Throws RedisFault if the whole reply did not come in time, the reply exceeds the
  /// bounds (refused as soon as it announces that) or the connection broke.
  RedisReply command(std::span<const std::string_view> arguments);
  RedisReply command(std::initializer_list<std::string_view> arguments) {
    return command(std::span<const std::string_view>(arguments.begin(), arguments.size()));
  }

 private:
  using Clock = std::chrono::steady_clock;
  // Waits until the socket is ready for `events` (poll) before `deadline`, or throws.
  void wait(short events, Clock::time_point deadline, const char* doing) const;

  struct ContextDeleter {
    void operator()(redisContext* context) const { redisFree(context); }
  };
  std::unique_ptr<redisContext, ContextDeleter> context_;
  std::chrono::milliseconds timeout_;
  RedisReplyLimits limits_;
};

}  // namespace disttune::detail
