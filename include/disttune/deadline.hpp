// Collective deadlines: a timeout in seconds as the engine's milliseconds, and now + timeout.
#pragma once

#include <chrono>
#include <string_view>

namespace disttune {

/// The timeout that never expires: a collective with it waits as long as it takes.
inline constexpr std::chrono::milliseconds kNoDeadline = std::chrono::milliseconds::max();

/// The shortest timeout accepted; anything shorter is an error, not a rounding to 0.
inline constexpr std::chrono::milliseconds kShortestTimeout{1};

/// `seconds` as a collective timeout: +inf (or more seconds than milliseconds can count) is
/// kNoDeadline; otherwise milliseconds, rounded to the nearest. Throws InvalidSetting naming
/// `setting` for NaN, -inf, or anything under 0.001 s (1 ms), zero and negatives included.
std::chrono::milliseconds timeout_from_seconds(double seconds, std::string_view setting);

/// Throws InvalidSetting naming `setting` when `timeout` is under kShortestTimeout.
void validate_timeout(std::chrono::milliseconds timeout, std::string_view setting);

/// steady_clock::now() + timeout, saturating: a timeout too long to add (kNoDeadline among
/// them) gives time_point::max(), which never passes.
std::chrono::steady_clock::time_point deadline_after(std::chrono::milliseconds timeout);

/// Seconds from now until `deadline`; +inf for time_point::max().
double seconds_until(std::chrono::steady_clock::time_point deadline);

}  // namespace disttune
