// One hiredis connection with a deadline on connecting and on every command.
#pragma once

#include <hiredis/hiredis.h>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "store/redis_url.hpp"

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

/// A connected, authenticated session on one database. Move-only; closes itself.
class RedisConnection {
 public:
  /// Connects within `timeout`, sends AUTH (if the endpoint has a password) and SELECT.
  /// Throws RedisFault on any failure, saying what failed (never quoting the password).
  RedisConnection(const RedisEndpoint& endpoint, std::chrono::milliseconds timeout);

  /// Sends one command and returns its reply (which may be an error reply: the server's
  /// answer). Throws RedisFault if no reply came within the timeout or the connection broke.
  RedisReply command(std::initializer_list<std::string_view> arguments);

 private:
  struct ContextDeleter {
    void operator()(redisContext* context) const { redisFree(context); }
  };
  std::unique_ptr<redisContext, ContextDeleter> context_;
};

}  // namespace disttune::detail
