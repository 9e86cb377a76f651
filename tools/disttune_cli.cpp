// disttune: the command line of the disk cache of tuning records (src/cli/command_line.hpp).
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return disttune::cli::run_command_line(args, std::cout, std::cerr);
}
