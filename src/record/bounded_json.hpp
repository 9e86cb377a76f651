// parse_bounded: JSON text parsed with a limit on nesting, for untrusted bytes.
#pragma once

#include <cstddef>
#include <string_view>

#include "disttune/config.hpp"

namespace disttune::detail {

/// Thrown by parse_bounded when a list or map would open beyond its depth limit.
struct TooDeep {};

/// Parses JSON text, refusing nesting deeper than `max_depth` before it is built (the
/// library's parser keeps its own stack; the limit bounds every later recursive walk:
/// copies, comparisons, printing). Throws TooDeep, or the library's parse errors.
Value parse_bounded(std::string_view text, std::size_t max_depth);

}  // namespace disttune::detail
