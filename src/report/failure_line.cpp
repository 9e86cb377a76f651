// failure_line: a failure's reason in one line.
#include "report/failure_line.hpp"

namespace disttune::detail {

std::string failure_line(std::string_view reason) {
  constexpr std::string_view kTraceback = "Traceback (most recent call last):";
  if (!reason.starts_with(kTraceback)) return std::string(reason.substr(0, reason.find('\n')));
  const std::size_t end = reason.find_last_not_of(" \t\r\n");
  const std::size_t start = reason.rfind('\n', end);
  return std::string(reason.substr(start + 1, end - start));
}

}  // namespace disttune::detail
