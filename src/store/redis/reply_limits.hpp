// RedisReplyLimits: refuses a Redis reply that announces more than a command may receive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace disttune::detail {

/// Watches the bytes of replies as they arrive, before hiredis parses them, so that an
/// announced size is refused at once: an array of more than `max_elements` elements, a bulk
/// string longer than what is left of `max_reply_bytes`, a line longer than
/// kMaxLineBytes, or more than `max_reply_bytes` bytes in one command's reply.
class RedisReplyLimits {
 public:
  static constexpr std::size_t kMaxLineBytes = 64 * 1024;

  RedisReplyLimits(std::size_t max_elements, std::size_t max_reply_bytes);

  /// Starts a new command's budget of bytes.
  void begin_command();
  /// Takes the next bytes of the stream; the reason for refusing them, or empty.
  std::string take(std::string_view bytes);

 private:
  std::string take_line(std::string_view line);

  std::size_t max_elements_;
  std::size_t max_reply_bytes_;
  std::size_t budget_ = 0;    // bytes this command's reply may still take
  std::uint64_t skip_ = 0;    // payload bytes of a bulk string still to pass (with its CRLF)
  std::string line_;          // the header line being read
};

}  // namespace disttune::detail
