// disttune: the command line of the disk cache of tuning records and of replay
// (src/cli/command_line.hpp), parsed by CLI11 from the command table.
#include <iostream>
#include <string>
#include <variant>
#include <vector>

#include "cli/command_line.hpp"
#include "cli11_parser.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const auto parsed = disttune::tools::parse_command_line(args, std::cout, std::cerr);
  if (const int* status = std::get_if<int>(&parsed)) return *status;
  return disttune::cli::run_command(std::get<disttune::cli::ParsedCommand>(parsed), std::cout,
                                    std::cerr);
}
