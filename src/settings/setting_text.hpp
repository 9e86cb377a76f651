// How settings' values appear in error messages.
#pragma once

#include <string>

namespace disttune::detail {

/// The shortest text that reads back as `value` ("1e-09", "600", "inf").
std::string number_text(double value);

}  // namespace disttune::detail
