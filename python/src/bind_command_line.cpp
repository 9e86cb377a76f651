// Binds the one command line (src/cli/) for `python -m disttune` (its table, for argparse, and
// the runner), disttune.load_table and the sweep's table.
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "cli/cli_error.hpp"
#include "cli/command_line.hpp"
#include "cli/command_table.hpp"
#include "cli/output_file.hpp"
#include "cli/record_table.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

// Python's buffered text streams first, so that their lines come before the command's.
void flush_python_streams() {
  const nb::module_ sys = nb::module_::import_("sys");
  for (const char* name : {"stdout", "stderr"}) {
    const nb::object stream = sys.attr(name);
    if (!stream.is_none()) stream.attr("flush")();
  }
}

std::string text_of(const nb::bytes& bytes) {
  return std::string(bytes.c_str(), bytes.size());
}

const char* arity_name(cli::Arity arity) {
  switch (arity) {
    case cli::Arity::flag:
      return "flag";
    case cli::Arity::one:
      return "one";
    case cli::Arity::one_or_more:
      return "one_or_more";
    case cli::Arity::pairs:
      return "pairs";
  }
  return "one";
}

nb::dict argument_dict(const cli::Argument& argument) {
  nb::dict described;
  described["name"] = argument.name;
  described["help"] = argument.described();
  described["arity"] = arity_name(argument.arity);
  described["required"] = argument.required;
  described["positional"] = argument.positional();
  return described;
}

nb::list argument_list(const std::vector<cli::Argument>& arguments) {
  nb::list listed;
  for (const cli::Argument& argument : arguments) listed.append(argument_dict(argument));
  return listed;
}

// The table as plain Python values: what argparse needs (values are checked in C++).
nb::dict table_dict() {
  const cli::CommandTable& table = cli::command_table();
  nb::dict described;
  described["program"] = table.program;
  described["about"] = table.about;
  described["version"] = table.version;
  described["global_arguments"] = argument_list(table.global_arguments);
  nb::list commands;
  for (const cli::Command& command : table.commands) {
    nb::dict entry;
    entry["name"] = command.name;
    entry["help"] = command.help;
    entry["arguments"] = argument_list(command.arguments);
    commands.append(entry);
  }
  described["commands"] = commands;
  return described;
}

}  // namespace

void bind_command_line(nb::module_& module) {
  module.def("command_table", &table_dict,
             "The disttune command line as data: program, about, version, global_arguments and "
             "commands (name, help, arguments); each argument: name (an option starts with "
             "'-'), help, arity ('flag', 'one', 'one_or_more', 'pairs'), required, positional.");
  module.def(
      "run_command",
      [](const std::string& command, const std::map<std::string, std::vector<nb::bytes>>& values,
         const std::string& software_json) {
        cli::ParsedCommand parsed{.command = command, .values = {}};
        for (const auto& [name, given] : values) {
          std::vector<std::string>& texts = parsed.values[name];
          for (const nb::bytes& value : given) texts.push_back(text_of(value));
        }
        cli::FrontEnd front_end;
        front_end.software = Value::parse(software_json);
        flush_python_streams();
        const int status = cli::run_command(parsed, std::cout, std::cerr, front_end);
        std::cout.flush();
        std::cerr.flush();
        return status;
      },
      nb::arg("command"), nb::arg("values"), nb::arg("software_json"),
      "Runs `disttune COMMAND` with the values a parser built from command_table() read (per "
      "argument name, its values as bytes; a flag: an empty list) and returns its exit "
      "status; software_json: this program's software facts for import.");
  module.def(
      "import_table",
      [](const std::filesystem::path& root, const std::filesystem::path& table, bool force,
         const std::string& software_json) {
        cli::TableExpectation expected = cli::host_expectation();
        expected.software.update(Value::parse(software_json));
        try {
          return cli::import_table(cli::CacheListing(root), table, force, expected);
        } catch (const cli::CliError& error) {
          throw nb::value_error(error.what());
        }
      },
      nb::arg("root"), nb::arg("table"), nb::arg("force"), nb::arg("software_json"),
      "Imports the table file into the disk cache under `root` as `disttune import` does "
      "(the whole table checked before anything is written); one line per record. "
      "ValueError naming the problem.");
  module.def(
      "export_table",
      [](const std::filesystem::path& root, const std::filesystem::path& table) {
        flush_python_streams();
        try {
          const std::size_t exported = cli::export_table(cli::CacheListing(root), table, std::cerr);
          std::cerr.flush();
          return exported;
        } catch (const cli::CliError& error) {
          throw nb::value_error(error.what());
        }
      },
      nb::arg("root"), nb::arg("table"),
      "Writes every valid record under `root` into the table file `table` as `disttune "
      "export` does (bad record files named on stderr and left out); returns how many it "
      "holds. ValueError naming the problem.");
  module.def("output_file_problem", &cli::output_file_problem, nb::arg("path"),
             "Why `path` cannot be written as the command line's output file (a table, a "
             "report), in one line; '' when it can: its directory is missing, or something is "
             "there that is not a regular file (the command refuses to replace it).");
}

}  // namespace disttune::python
