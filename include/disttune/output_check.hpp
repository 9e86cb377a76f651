// Output checks of a tuned function: each candidate's result compared once with a reference.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <optional>
#include <ranges>
#include <string>

namespace disttune {

/// How a tuned function's candidates are checked (AutotuneSpec::check). With a reference,
/// each candidate runs once more before it is timed and its result must match; a result that
/// differs fails the candidate with a message saying where. Empty (the default): no check.
template <class Result, class... Args>
struct OutputCheck {
  /// The expected result from the call's arguments, or
  std::function<Result(Args...)> reference;
  /// the result of this config of the space (an index into AutotuneSpec::configs).
  std::optional<std::size_t> reference_config;
  /// Does `result` match `expected`? Default: ==, element by element for ranges.
  std::function<bool(const Result& result, const Result& expected)> equal;

  bool enabled() const { return static_cast<bool>(reference) || reference_config.has_value(); }
};

/// A launcher that returns nothing has no result to check.
template <class... Args>
struct OutputCheck<void, Args...> {
  bool enabled() const { return false; }
};

namespace detail {

/// A sized range whose elements compare with ==.
template <class Range>
concept ComparableRange =
    std::ranges::sized_range<Range> && std::equality_comparable<std::ranges::range_value_t<Range>>;

/// Where `result` differs from `expected` by their == (element by element, first index
/// named, for sized ranges), or nullopt if they are equal.
template <class Result>
std::optional<std::string> difference(const Result& result, const Result& expected) {
  if constexpr (ComparableRange<Result>) {
    const auto size = std::ranges::size(result);
    if (size != std::ranges::size(expected)) {
      return "the result has " + std::to_string(size) + " elements, the reference " +
             std::to_string(std::ranges::size(expected));
    }
    std::size_t index = 0;
    auto other = std::ranges::begin(expected);
    for (const auto& element : result) {
      if (!(element == *other)) return "the result differs at element " + std::to_string(index);
      ++index;
      ++other;
    }
    return std::nullopt;
  } else if constexpr (std::equality_comparable<Result>) {
    if (result == expected) return std::nullopt;
    return "the result differs";
  } else {
    return "the result type has no ==: give OutputCheck::equal";
  }
}

}  // namespace detail
}  // namespace disttune
