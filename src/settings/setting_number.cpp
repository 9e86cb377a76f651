// The one reading of a numeric environment setting's text.
#include "settings/setting_number.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <system_error>

#include "disttune/error.hpp"

namespace disttune::detail {
namespace {

/// The whole text as a finite decimal number (std::from_chars' general format reads no
/// spaces, no '+' and no hex), or NaN.
double decimal(const std::string& text) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value,
                                            std::chars_format::general);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nan("");
  }
  return value;
}

bool all_digits(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
}

}  // namespace

double setting_number(std::string_view name, const std::string& text, const NumberRule& rule) {
  const double value = decimal(text);
  // NaN fails both comparisons, so a text that is no number is refused here too.
  if ((rule.whole && !all_digits(text)) || !(value >= rule.least && value <= rule.most)) {
    throw InvalidSetting("disttune: " + std::string(name) + " must be " + std::string(rule.accepts) +
                         ", got '" + text + "'");
  }
  return value;
}

}  // namespace disttune::detail
