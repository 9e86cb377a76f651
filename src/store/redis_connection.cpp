// RedisConnection: hiredis's blocking API with a socket timeout, AUTH and SELECT.
#include "store/redis_connection.hpp"

#include <sys/time.h>

#include <string>
#include <vector>

namespace disttune::detail {
namespace {

timeval to_timeval(std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  return tv;
}

// The reply's error text, or empty when it is not an error reply.
std::string error_of(const redisReply& reply) {
  return reply.type == REDIS_REPLY_ERROR ? std::string(reply.str, reply.len) : std::string();
}

}  // namespace

RedisConnection::RedisConnection(const RedisEndpoint& endpoint, std::chrono::milliseconds timeout) {
  context_.reset(redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, to_timeval(timeout)));
  if (!context_) throw RedisFault("cannot connect: out of memory");
  if (context_->err != 0) throw RedisFault(std::string("cannot connect: ") + context_->errstr);
  if (redisSetTimeout(context_.get(), to_timeval(timeout)) != REDIS_OK) {
    throw RedisFault(std::string("cannot set the timeout: ") + context_->errstr);
  }
  if (!endpoint.password.empty()) {
    const RedisReply reply = endpoint.user.empty()
                                 ? command({"AUTH", endpoint.password})
                                 : command({"AUTH", endpoint.user, endpoint.password});
    if (const std::string error = error_of(*reply); !error.empty()) {
      throw RedisFault("login refused: " + error);
    }
  }
  if (endpoint.database != 0) {
    const std::string database = std::to_string(endpoint.database);
    const RedisReply reply = command({"SELECT", database});
    if (const std::string error = error_of(*reply); !error.empty()) {
      throw RedisFault("cannot select database " + database + ": " + error);
    }
  }
}

RedisReply RedisConnection::command(std::initializer_list<std::string_view> arguments) {
  std::vector<const char*> texts;
  std::vector<std::size_t> sizes;
  for (const std::string_view argument : arguments) {
    texts.push_back(argument.data());
    sizes.push_back(argument.size());
  }
  RedisReply reply(static_cast<redisReply*>(redisCommandArgv(
      context_.get(), static_cast<int>(texts.size()), texts.data(), sizes.data())));
  if (!reply) {
    // hiredis reports a timeout as EAGAIN ("Resource temporarily unavailable").
    const std::string why = context_->err != 0 ? context_->errstr : "no reply";
    throw RedisFault("no answer: " + why);
  }
  return reply;
}

}  // namespace disttune::detail
