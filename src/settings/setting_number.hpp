// The one reading of a numeric environment setting's text, shared by every numeric variable.
#pragma once

#include <string>
#include <string_view>

namespace disttune::detail {

/// What a numeric setting accepts: the range, whether only whole numbers, and the words for
/// the error ("seconds from 0.001 to 86400").
struct NumberRule {
  double least;
  double most;
  bool whole;
  std::string_view accepts;
};

/// `text` of variable `name` as a number under `rule`. One rule for every numeric setting:
/// the whole text is a decimal number as C and Python write it (digits, an optional '-',
/// a '.' and an exponent; a whole number: digits only); no spaces, no '+', no hex, no
/// nan/inf, within [least, most]. Anything else throws InvalidSetting
/// "disttune: NAME must be ACCEPTS, got 'TEXT'".
double setting_number(std::string_view name, const std::string& text, const NumberRule& rule);

}  // namespace disttune::detail
