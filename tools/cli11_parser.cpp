// parse_command_line: one CLI11 option per argument of the command table, read back as text.
#include "cli11_parser.hpp"

#include <CLI/CLI.hpp>
#include <ostream>
#include <utility>

#include "cli/command_table.hpp"
#include "report/readable_text.hpp"

namespace disttune::tools {
namespace {

// An argument of the table and the CLI11 option that reads it.
using Reader = std::pair<const cli::Argument*, CLI::Option*>;

CLI::Option* add_argument(CLI::App& app, const cli::Argument& argument) {
  if (argument.arity == cli::Arity::flag)
    return app.add_flag(argument.name)->description(argument.described());
  CLI::Option* option = app.add_option(argument.name)->description(argument.described());
  if (argument.arity == cli::Arity::one_or_more) {
    option->expected(1, CLI::detail::expected_max_vector_size)->allow_extra_args(true);
  } else if (argument.arity == cli::Arity::pairs) {
    option->type_size(2)->expected(1);
  }
  if (argument.arity != cli::Arity::one)
    option->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  if (argument.required) option->required();
  return option;
}

// The values of the arguments given on the command line (a flag: none).
void read_given(const std::vector<Reader>& readers, cli::ParsedCommand& parsed) {
  for (const auto& [argument, option] : readers) {
    if (option->count() == 0) continue;
    parsed.values[argument->name] =
        argument->arity == cli::Arity::flag ? std::vector<std::string>() : option->results();
  }
}

}  // namespace

std::variant<cli::ParsedCommand, int> parse_command_line(const std::vector<std::string>& args,
                                                         std::ostream& out, std::ostream& err) {
  const cli::CommandTable& table = cli::command_table();
  CLI::App app{table.about, table.program};
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", table.version);
  std::vector<Reader> global;
  for (const cli::Argument& argument : table.global_arguments) {
    global.emplace_back(&argument, add_argument(app, argument));
  }
  std::vector<std::pair<CLI::App*, std::vector<Reader>>> commands;
  for (const cli::Command& command : table.commands) {
    CLI::App* subcommand = app.add_subcommand(command.name, command.help);
    std::vector<Reader> readers;
    for (const cli::Argument& argument : command.arguments) {
      readers.emplace_back(&argument, add_argument(*subcommand, argument));
    }
    commands.emplace_back(subcommand, std::move(readers));
  }
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
    app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error, out, err);  // --help, --version
    err << "disttune: error: " << detail::readable_text(error.what()) << '\n';
    return 2;
  }
  cli::ParsedCommand parsed;
  read_given(global, parsed);
  for (const auto& [subcommand, readers] : commands) {
    if (!subcommand->parsed()) continue;
    parsed.command = subcommand->get_name();
    read_given(readers, parsed);
  }
  return parsed;
}

}  // namespace disttune::tools
