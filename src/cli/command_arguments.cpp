// CommandArguments: a parsed command checked against the command table, then read.
#include "cli/command_arguments.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <utility>

namespace disttune::cli {
namespace {

const Command& find_command(const std::string& name) {
  const std::vector<Command>& commands = command_table().commands;
  const auto found = std::find_if(commands.begin(), commands.end(),
                                  [&](const Command& command) { return command.name == name; });
  if (found == commands.end()) throw ArgumentError("unknown command '" + name + "'");
  return *found;
}

// The value as the number the argument takes, or ArgumentError naming the argument.
double number(const Argument& argument, const std::string& value) {
  double read = 0.0;
  bool whole = false;
  if (argument.type == ValueType::integer) {
    long long integer = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), integer);
    whole = error == std::errc() && end == value.data() + value.size();
    read = static_cast<double>(integer);
  } else {
    char* end = nullptr;
    read = std::strtod(value.c_str(), &end);
    whole = !value.empty() && end == value.c_str() + value.size();
  }
  const char* kind = argument.type == ValueType::integer ? "a whole number" : "a number";
  if (!whole) throw ArgumentError(argument.name + ": '" + value + "' is not " + kind);
  if (!(read >= argument.min && read <= argument.max)) {
    throw ArgumentError(argument.name + ": " + value + " is not in [" + number_text(argument.min) +
                        ", " + number_text(argument.max) + "]");
  }
  return read;
}

void check(const Argument& argument, const std::vector<std::string>& values) {
  const bool count_fits = [&] {
    switch (argument.arity) {
      case Arity::flag:
        return values.empty();
      case Arity::one:
        return values.size() == 1;
      case Arity::one_or_more:
        return !values.empty();
      case Arity::pairs:
        return !values.empty() && values.size() % 2 == 0;
    }
    return false;
  }();
  if (!count_fits) throw ArgumentError(argument.name + ": wrong number of values");
  for (const std::string& value : values) {
    if (!argument.choices.empty() && std::find(argument.choices.begin(), argument.choices.end(),
                                               value) == argument.choices.end()) {
      std::string allowed;
      for (const std::string& choice : argument.choices)
        allowed += (allowed.empty() ? "" : ", ") + choice;
      throw ArgumentError(argument.name + ": '" + value + "' is not one of " + allowed);
    }
    if (argument.type != ValueType::text) number(argument, value);
  }
}

}  // namespace

CommandArguments::CommandArguments(ParsedCommand parsed) : parsed_(std::move(parsed)) {
  for (const Argument& argument : find_command(parsed_.command).arguments)
    arguments_.push_back(&argument);
  for (const Argument& argument : command_table().global_arguments) arguments_.push_back(&argument);
  for (const auto& [name, values] : parsed_.values) check(argument(name), values);
  for (const Argument* argument : arguments_) {
    if (argument->required && !parsed_.values.contains(argument->name)) {
      throw ArgumentError(parsed_.command + ": " + argument->name + " is required");
    }
  }
}

const Argument& CommandArguments::argument(const std::string& name) const {
  for (const Argument* argument : arguments_) {
    if (argument->name == name) return *argument;
  }
  throw ArgumentError(parsed_.command + " takes no argument '" + name + "'");
}

bool CommandArguments::flag(const std::string& name) const {
  argument(name);
  return parsed_.values.contains(name);
}

std::vector<std::string> CommandArguments::texts(const std::string& name) const {
  const auto given = parsed_.values.find(name);
  return given != parsed_.values.end() ? given->second : argument(name).defaults;
}

std::string CommandArguments::text(const std::string& name) const {
  const std::vector<std::string> values = texts(name);
  return values.empty() ? std::string() : values.front();
}

long long CommandArguments::integer(const std::string& name) const {
  return static_cast<long long>(number(argument(name), text(name)));
}

double CommandArguments::real(const std::string& name) const {
  return number(argument(name), text(name));
}

std::map<std::string, std::string> CommandArguments::pairs(const std::string& name) const {
  const std::vector<std::string> values = texts(name);
  std::map<std::string, std::string> pairs;
  for (std::size_t i = 0; i + 1 < values.size(); i += 2) pairs[values[i]] = values[i + 1];
  return pairs;
}

}  // namespace disttune::cli
