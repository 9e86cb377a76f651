// Numbers as option and setting texts: strict readings of a whole text, and the shortest writing.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <system_error>

namespace disttune::detail {

/// `text` as a finite number (the whole text, no spaces), or nullopt.
inline std::optional<double> finite_number(const std::string& text) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

/// `text` as an Integer (the whole text: no sign where Integer has none, no spaces), or nullopt.
template <class Integer>
std::optional<Integer> whole_integer(const std::string& text) {
  Integer value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

/// The shortest text that reads back as `value` (0.005 -> "0.005", 1e-9 -> "1e-09", 0 -> "0",
/// infinity -> "inf").
inline std::string number_text(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

/// A duration for a message, to the hundredth of a second with its unit ("1.25 s").
inline std::string seconds_with_unit(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", seconds);
  return text;
}

}  // namespace disttune::detail
