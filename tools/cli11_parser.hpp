// The command table (src/cli/command_table.hpp) as a CLI11 parser, for the C++ disttune tool.
#pragma once

#include <iosfwd>
#include <string>
#include <variant>
#include <vector>

#include "cli/command_arguments.hpp"

namespace disttune::tools {

/// Parses `args` (without the program name) with a CLI11 app built from the command table:
/// the command to run, or, when there is none (--help, --version, arguments that do not
/// parse), the exit status after printing what CLI11 prints, an error as one line
/// "disttune: error: ..." (status 2).
std::variant<cli::ParsedCommand, int> parse_command_line(const std::vector<std::string>& args,
                                                         std::ostream& out, std::ostream& err);

}  // namespace disttune::tools
