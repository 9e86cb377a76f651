// Warnings on stderr, one line each, prefixed "disttune: ", optionally once per topic.
#pragma once

#include <string>
#include <string_view>

namespace disttune::detail {

/// Writes "disttune: <message>" and a newline to stderr in one write.
void warn(std::string_view message);

/// Like warn(), but only the first time this process sees `topic`; true if it warned.
/// Thread-safe.
bool warn_once(const std::string& topic, std::string_view message);

}  // namespace disttune::detail
