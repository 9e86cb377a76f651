// RedisConnection: hiredis on a non-blocking socket, one deadline per command, AUTH and SELECT.
#include "store/redis/connection.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
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

std::string seconds_text(std::chrono::milliseconds duration) {
  std::ostringstream text;
  text << static_cast<double>(duration.count()) / 1000.0;
  return text.str();
}

// The reply's error text, or empty when it is not an error reply.
std::string error_of(const redisReply& reply) {
  return reply.type == REDIS_REPLY_ERROR ? std::string(reply.str, reply.len) : std::string();
}

}  // namespace

RedisConnection::RedisConnection(const RedisEndpoint& endpoint, std::chrono::milliseconds timeout,
                                 RedisReplyBounds bounds)
    : timeout_(timeout), limits_(bounds.max_elements, bounds.max_bytes) {
  context_.reset(redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, to_timeval(timeout)));
  if (!context_) throw RedisFault("cannot connect: out of memory");
  if (context_->err != 0) throw RedisFault(std::string("cannot connect: ") + context_->errstr);
  // From here on the socket never blocks: command() waits in poll() for what is left of its
  // deadline, so a server that sends one byte at a time cannot stretch a command. hiredis
  // treats EAGAIN as "try again later" only on a context without REDIS_BLOCK.
  const int flags = ::fcntl(context_->fd, F_GETFL);
  if (flags < 0 || ::fcntl(context_->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    throw RedisFault(std::string("cannot make the socket non-blocking: ") + std::strerror(errno));
  }
  context_->flags &= ~REDIS_BLOCK;
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

void RedisConnection::wait(short events, Clock::time_point deadline, const char* doing) const {
  pollfd ready{context_->fd, events, 0};
  while (true) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    const int polled = left.count() > 0 ? ::poll(&ready, 1, static_cast<int>(std::min<long long>(
                                                                 left.count(), 1 << 30)))
                                        : 0;
    if (polled > 0) return;
    if (polled < 0 && errno == EINTR) continue;
    if (polled < 0) throw RedisFault(std::string("poll failed: ") + std::strerror(errno));
    throw RedisFault(std::string("no answer: timed out after ") + seconds_text(timeout_) + " s " +
                     doing);
  }
}

RedisReply RedisConnection::command(std::span<const std::string_view> arguments) {
  const Clock::time_point deadline = Clock::now() + timeout_;
  std::vector<const char*> texts;
  std::vector<std::size_t> sizes;
  for (const std::string_view argument : arguments) {
    texts.push_back(argument.data());
    sizes.push_back(argument.size());
  }
  if (redisAppendCommandArgv(context_.get(), static_cast<int>(texts.size()), texts.data(),
                             sizes.data()) != REDIS_OK) {
    throw RedisFault(std::string("cannot send: ") + context_->errstr);
  }
  for (int done = 0; !done;) {
    if (redisBufferWrite(context_.get(), &done) != REDIS_OK) {
      throw RedisFault(std::string("cannot send: ") + context_->errstr);
    }
    if (!done) wait(POLLOUT, deadline, "sending the command");
  }
  limits_.begin_command();
  void* reply = nullptr;
  char bytes[16 * 1024];
  while (true) {
    if (redisGetReplyFromReader(context_.get(), &reply) != REDIS_OK) {
      throw RedisFault(std::string("bad reply: ") + context_->errstr);
    }
    if (reply != nullptr) break;
    wait(POLLIN, deadline, "waiting for the whole reply");
    const ssize_t got = ::read(context_->fd, bytes, sizeof bytes);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (got < 0) throw RedisFault(std::string("the connection broke: ") + std::strerror(errno));
    if (got == 0) throw RedisFault("the server closed the connection");
    const std::string_view received(bytes, static_cast<std::size_t>(got));
    if (const std::string problem = limits_.take(received); !problem.empty()) {
      throw RedisFault("refused the reply: " + problem);
    }
    if (redisReaderFeed(context_->reader, received.data(), received.size()) != REDIS_OK) {
      throw RedisFault("bad reply: cannot buffer it");
    }
  }
  return RedisReply(static_cast<redisReply*>(reply));
}

}  // namespace disttune::detail
