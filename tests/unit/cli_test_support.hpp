// Runs the disttune binary (DISTTUNE_CLI) for the command-line tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace disttune::testing {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs the disttune binary with `arguments` (already shell-quoted where needed).
inline CliResult run_cli(const std::string& arguments) {
  const std::string command = std::string("'") + DISTTUNE_CLI + "' " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed for " + command);
  CliResult result;
  char buffer[4096];
  while (const std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) {
    result.output.append(buffer, got);
  }
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace disttune::testing
