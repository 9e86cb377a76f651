// Boolean environment switches.
#include "util/env_flag.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace disttune::detail {

bool env_flag(const char* name) {
  const char* raw = std::getenv(name);
  if (raw == nullptr) return false;
  std::string value(raw);
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value.empty() || value == "0" || value == "false" || value == "no" || value == "off") return false;
  throw std::invalid_argument(std::string("disttune: ") + name + " must be 1/0, true/false, yes/no "
                              "or on/off, got '" + raw + "'");
}

}  // namespace disttune::detail
