// Binds the one command line (src/cli/) for `python -m disttune` and disttune.load_table.
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "cli/cli_error.hpp"
#include "cli/command_line.hpp"
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

std::string text_of(const nb::bytes& bytes) { return std::string(bytes.c_str(), bytes.size()); }

}  // namespace

void bind_command_line(nb::module_& module) {
  module.def(
      "run_command_line",
      [](const std::vector<nb::bytes>& args, const std::vector<nb::tuple>& extra_commands,
         const std::string& software_json) {
        cli::FrontEnd front_end;
        front_end.software = Value::parse(software_json);
        for (const nb::tuple& command : extra_commands) {
          const nb::object run = command[2];
          front_end.extra_commands.push_back(
              {nb::cast<std::string>(command[0]), nb::cast<std::string>(command[1]),
               [run](const std::vector<std::string>& rest) {
                 std::cout.flush();
                 std::cerr.flush();
                 nb::list arguments;
                 for (const std::string& arg : rest) arguments.append(nb::bytes(arg.data(), arg.size()));
                 return nb::cast<int>(run(arguments));
               }});
        }
        std::vector<std::string> arguments;
        for (const nb::bytes& arg : args) arguments.push_back(text_of(arg));
        flush_python_streams();
        const int status = cli::run_command_line(arguments, std::cout, std::cerr, front_end);
        std::cout.flush();
        std::cerr.flush();
        return status;
      },
      nb::arg("args"), nb::arg("extra_commands"), nb::arg("software_json"),
      "Runs `disttune ARGS` (args as bytes, without the program name) and returns its exit "
      "status; extra_commands are (name, help, run) where run(list of bytes) -> int gets the "
      "arguments after its name; software_json: this program's software facts for import.");
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
  module.def("output_file_problem", &cli::output_file_problem, nb::arg("path"),
             "Why `path` cannot be written as the command line's output file (a table, a "
             "report), in one line; '' when it can: its directory is missing, or something is "
             "there that is not a regular file (the command refuses to replace it).");
}

}  // namespace disttune::python
