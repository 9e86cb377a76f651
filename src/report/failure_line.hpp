// failure_line: the one line of a failure's reason that lists of failures show.
#pragma once

#include <string>
#include <string_view>

namespace disttune::detail {

/// The line of `reason` that says what failed: its first line, or, for a reason that is a
/// bare Python traceback ("Traceback (most recent call last):" first, as nanobind writes an
/// exception that no front end summarised), its last non-blank line ("Type: message"). The
/// whole reason stays in the log and the record.
std::string failure_line(std::string_view reason);

}  // namespace disttune::detail
