// What a front end's parser read from the command line, and the same checked against the
// command table (src/cli/command_table.hpp) and read with its defaults.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/command_table.hpp"

namespace disttune::cli {

/// A command as a front end's parser read it: the values of the arguments given (a flag: no
/// values; pairs: NAME, VALUE, NAME, VALUE, ...), global arguments included. Not yet checked.
struct ParsedCommand {
  std::string command;
  std::map<std::string, std::vector<std::string>> values;
};

/// Arguments the table refuses: printed as one line "disttune: error: <what>", status 2.
struct ArgumentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A ParsedCommand checked against the table (the command and argument names, the number of
/// values, required arguments, choices, numbers and their ranges), read with the table's
/// defaults. Throws ArgumentError naming the first problem.
class CommandArguments {
 public:
  explicit CommandArguments(ParsedCommand parsed);

  const std::string& command() const { return parsed_.command; }
  bool flag(const std::string& name) const;
  /// The value, the default, or "" when neither.
  std::string text(const std::string& name) const;
  std::vector<std::string> texts(const std::string& name) const;
  long long integer(const std::string& name) const;
  double real(const std::string& name) const;
  /// A pairs argument as a map (a later NAME replaces an earlier one).
  std::map<std::string, std::string> pairs(const std::string& name) const;

 private:
  const Argument& argument(const std::string& name) const;

  ParsedCommand parsed_;
  std::vector<const Argument*> arguments_;  // the command's and the global ones
};

}  // namespace disttune::cli
