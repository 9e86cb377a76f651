// Collective deadlines: seconds to milliseconds by one rule, and saturating now + timeout.
#include "disttune/deadline.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "disttune/error.hpp"
#include "util/number_text.hpp"

namespace disttune {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds timeout_from_seconds(double seconds, std::string_view setting) {
  if (std::isinf(seconds) && seconds > 0) return kNoDeadline;
  const double milliseconds = std::round(seconds * 1000.0);
  if (!(milliseconds >= static_cast<double>(kShortestTimeout.count()))) {  // NaN fails too
    throw InvalidSetting("disttune: " + std::string(setting) +
                         " must be positive: at least 0.001 seconds (1 ms), or inf for no "
                         "deadline; got " + detail::number_text(seconds));
  }
  // 2^63 is exactly representable; a double at or above it does not fit in milliseconds.
  if (milliseconds >= 0x1p63) return kNoDeadline;
  return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(milliseconds));
}

void validate_timeout(std::chrono::milliseconds timeout, std::string_view setting) {
  if (timeout < kShortestTimeout) {
    throw InvalidSetting("disttune: " + std::string(setting) +
                         " must be at least 1 ms (use kNoDeadline for none); got " +
                         std::to_string(timeout.count()) + " ms");
  }
}

Clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  const Clock::time_point now = Clock::now();
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now);
  if (timeout >= room) return Clock::time_point::max();
  return now + timeout;
}

double seconds_until(Clock::time_point deadline) {
  if (deadline == Clock::time_point::max()) return std::numeric_limits<double>::infinity();
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

}  // namespace disttune
