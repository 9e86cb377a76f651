// RedisReplyLimits: a small RESP header scanner (lines and bulk payloads) with size checks.
#include "store/redis/reply_limits.hpp"

#include <algorithm>
#include <charconv>

namespace disttune::detail {

RedisReplyLimits::RedisReplyLimits(std::size_t max_elements, std::size_t max_reply_bytes)
    : max_elements_(max_elements), max_reply_bytes_(max_reply_bytes), budget_(max_reply_bytes) {}

void RedisReplyLimits::begin_command() { budget_ = max_reply_bytes_; }

std::string RedisReplyLimits::take(std::string_view bytes) {
  // skip_ never exceeds budget_ (checked when a bulk string is announced).
  while (!bytes.empty()) {
    if (skip_ > 0) {
      const std::size_t passed = static_cast<std::size_t>(std::min<std::uint64_t>(skip_, bytes.size()));
      skip_ -= passed;
      budget_ -= passed;
      bytes.remove_prefix(passed);
      continue;
    }
    const std::size_t end = bytes.find('\n');
    const std::string_view part = bytes.substr(0, end == std::string_view::npos ? bytes.size() : end + 1);
    if (line_.size() + part.size() > kMaxLineBytes) {
      return "a reply line is longer than " + std::to_string(kMaxLineBytes) + " bytes";
    }
    if (part.size() > budget_) {
      return "the reply is larger than " + std::to_string(max_reply_bytes_) + " bytes";
    }
    budget_ -= part.size();
    line_.append(part);
    bytes.remove_prefix(part.size());
    if (end == std::string_view::npos) break;
    std::string problem = take_line(line_);
    line_.clear();
    if (!problem.empty()) return problem;
  }
  return {};
}

std::string RedisReplyLimits::take_line(std::string_view line) {
  // Only sizes are checked here; hiredis parses the rest (and reports malformed lines).
  if (line.size() < 2 || (line[0] != '*' && line[0] != '$')) return {};
  long long announced = 0;
  const auto [end, error] = std::from_chars(line.data() + 1, line.data() + line.size(), announced);
  if (error != std::errc() || end == line.data() + 1) return {};
  if (line[0] == '*') {
    if (announced > 0 && static_cast<unsigned long long>(announced) > max_elements_) {
      return "the reply announces an array of " + std::to_string(announced) +
             " elements (at most " + std::to_string(max_elements_) + " are expected)";
    }
    return {};
  }
  if (announced < 0) return {};  // the nil bulk string
  if (static_cast<unsigned long long>(announced) + 2 > budget_) {
    return "the reply announces a string of " + std::to_string(announced) +
           " bytes (at most " + std::to_string(max_reply_bytes_) + " are expected)";
  }
  skip_ = static_cast<std::uint64_t>(announced) + 2;
  return {};
}

}  // namespace disttune::detail
