// Text from the disk (paths, names) made safe to print: valid UTF-8 whatever its bytes.
#pragma once

#include <string>
#include <string_view>

namespace disttune::cli {

/// `text` with every byte that is not part of valid UTF-8 written as "\xNN" (and a
/// backslash that could be read as such an escape left as it is): what a path holding
/// non-UTF-8 bytes looks like in a BAD line, a table or a report.
std::string printable(std::string_view text);

/// Whether `text` is valid UTF-8 (what JSON text and Python's str need).
bool is_utf8(std::string_view text);

}  // namespace disttune::cli
