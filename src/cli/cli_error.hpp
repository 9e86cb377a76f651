// CliError: a problem with a command's input or the cache, printed as one line, status 1.
#pragma once

#include <stdexcept>

namespace disttune::cli {

/// A problem with the command's input or the cache: "disttune: error: <what>", exit status 1.
struct CliError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace disttune::cli
