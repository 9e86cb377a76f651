// The errors disttune throws: one base, disttune::Error, and the specific errors under it.
#pragma once

#include <stdexcept>

namespace disttune {

/// The base of every error disttune reports to its caller by name (catch `disttune::Error&`).
/// It is an interface, not a std::exception: each concrete error also derives from the
/// standard class it always was (std::invalid_argument, std::runtime_error, ...), so
/// `catch (const std::exception&)` and the older `catch (const std::invalid_argument&)`
/// still catch it, without an ambiguous second std::exception base.
class Error {
 public:
  virtual ~Error() = default;
  /// The message, as std::exception::what() of the concrete error.
  virtual const char* what() const noexcept = 0;

 protected:
  Error() = default;
  Error(const Error&) = default;
  Error& operator=(const Error&) = default;
};

/// A disttune::Error that is also the standard exception `Standard`.
template <class Standard>
class ErrorAs : public Standard, public Error {
 public:
  using Standard::Standard;
  const char* what() const noexcept override { return Standard::what(); }
};

/// A setting is invalid: an option of a tuner (counts, statistic, strategy, deadline, ...) or
/// an environment variable (TRITON_DIST_AUTOTUNE_*). The message names the setting, the
/// value and what is accepted.
class InvalidSetting : public ErrorAs<std::invalid_argument> {
 public:
  using ErrorAs::ErrorAs;
};

/// Nothing could be chosen for a key: every candidate failed (the message lists why, one
/// line per candidate), or no candidate was left to measure.
class TuningFailed : public ErrorAs<std::runtime_error> {
 public:
  using ErrorAs::ErrorAs;
};

}  // namespace disttune
