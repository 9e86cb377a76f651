// Sending one message to the process-wide sink.
#pragma once

#include <string_view>

#include "disttune/sink.hpp"

namespace disttune::detail {

/// Writes one message to current_sink(); a sink that throws has the message printed on
/// stderr with why.
void emit(MessageKind kind, std::string_view text);

}  // namespace disttune::detail
