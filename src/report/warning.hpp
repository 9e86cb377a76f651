// Warnings through the sink (stderr by default, "disttune: " before each), optionally once per topic.
#pragma once

#include <string>
#include <string_view>

namespace disttune::detail {

/// Sends `message` to the sink as a warning (stderr sink: "disttune: <message>\n", one write).
void warn(std::string_view message);

/// Like warn(), but only the first time this process sees `topic`; true if it warned.
/// Thread-safe.
bool warn_once(const std::string& topic, std::string_view message);

}  // namespace disttune::detail
