// The disttune command line described once, as data: its subcommands and their arguments.
// Each front end builds its parser from this table (the C++ tool: CLI11, tools/cli11_parser.cpp;
// Python: argparse, python/disttune/cli.py) and hands what it parsed to run_command.
#pragma once

#include <string>
#include <vector>

namespace disttune::cli {

/// How many values an argument takes.
enum class Arity {
  flag,         ///< none: given or not
  one,          ///< one value
  one_or_more,  ///< one or more values; an option given again adds to them
  pairs,        ///< NAME VALUE, the option repeatable
};

/// What each value of an argument must read as.
enum class ValueType { text, integer, real };

/// One argument of a command: an option ("--seeds") or a positional ("tables").
struct Argument {
  std::string name{};
  std::string help{};
  Arity arity = Arity::one;
  ValueType type = ValueType::text;
  bool required = false;
  std::vector<std::string> defaults{};  ///< the values when it is not given
  std::vector<std::string> choices{};   ///< when not empty, the only values accepted
  double min = 0.0;                     ///< integer and real: the smallest value accepted
  double max = 0.0;                     ///< integer and real: the largest value accepted

  bool positional() const { return !name.starts_with("-"); }
  /// `help` with the defaults named, as both parsers print it.
  std::string described() const;
};

/// One subcommand: `disttune NAME ARGUMENTS`.
struct Command {
  std::string name;
  std::string help;
  std::vector<Argument> arguments;
};

/// The whole command line.
struct CommandTable {
  std::string program;                     ///< "disttune"
  std::string about;                       ///< one line for --help
  std::string version;                     ///< what --version prints
  std::vector<Argument> global_arguments;  ///< accepted before or after the subcommand
  std::vector<Command> commands;
};

/// A number as the table shows it (defaults, ranges): 16, 0.05, 1e+06.
std::string number_text(double value);

/// The disttune command line (built once).
const CommandTable& command_table();

}  // namespace disttune::cli
