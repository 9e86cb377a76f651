// How settings' values appear in error messages.
#include "settings/setting_text.hpp"

#include <array>
#include <charconv>

namespace disttune::detail {

std::string number_text(double value) {
  std::array<char, 32> text{};
  const auto [end, error] = std::to_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} ? std::string(text.data(), end) : std::string("?");
}

}  // namespace disttune::detail
