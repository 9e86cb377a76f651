// Warnings on stderr, one line each, optionally once per topic.
#include "report/warning.hpp"

#include <cstdio>
#include <mutex>
#include <set>

namespace disttune::detail {

void warn(std::string_view message) {
  std::string line = "disttune: ";
  line += message;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

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
