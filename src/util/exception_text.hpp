// exception_text: what a caught exception says, for failure reasons and error messages.
#pragma once

#include <exception>
#include <string>

namespace disttune::detail {

/// The what() of `error`, or "unknown exception" for one that is not a std::exception.
inline std::string exception_text(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace disttune::detail
