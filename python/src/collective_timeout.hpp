// The collective deadline given in seconds from Python, as the engine's milliseconds.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>

namespace disttune::python {

/// nullopt stays nullopt (the engine's default deadline); a positive number of seconds
/// becomes milliseconds, rounded; anything else is std::invalid_argument.
inline std::optional<std::chrono::milliseconds> collective_timeout_from_seconds(
    std::optional<double> seconds) {
  if (!seconds) return std::nullopt;
  if (!(*seconds > 0)) throw std::invalid_argument("disttune: collective_timeout_s must be positive");
  return std::chrono::milliseconds(static_cast<long long>(*seconds * 1000.0 + 0.5));
}

}  // namespace disttune::python
