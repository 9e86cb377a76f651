// Warnings through the sink, one message each, optionally once per topic.
#include "report/warning.hpp"

#include <mutex>
#include <set>

#include "report/emit.hpp"

namespace disttune::detail {

void warn(std::string_view message) { emit(MessageKind::warning, message); }

bool warn_once(const std::string& topic, std::string_view message) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  {
    std::lock_guard lock(mutex);
    if (!seen.insert(topic).second) return false;
  }
  warn(message);
  return true;
}

}  // namespace disttune::detail
