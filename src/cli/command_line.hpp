// The disttune command line: list, show, verify, clear, export, import and report, parsed
// and run once here for every front end (the C++ `disttune` tool, `python -m disttune`).
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "disttune/config.hpp"

namespace disttune::cli {

/// A subcommand a front end adds (Python: `sweep`): it gets every argument after its name,
/// unparsed, and returns the exit status; what it throws reaches the caller.
struct ExtraCommand {
  std::string name;
  std::string help;
  std::function<int(const std::vector<std::string>& args)> run;
};

/// What the front end running the command line adds to it.
struct FrontEnd {
  std::vector<ExtraCommand> extra_commands;
  /// Software facts of this program beyond the engine's (Python: python, torch, triton
  /// versions), compared with a table's records on import.
  Value software = Value::object();
};

/// Runs `disttune ARGS` (`args` without the program name), printing to `out` and `err`.
/// Returns the exit status: 0 done; 1 a problem with the input or the cache (one line
/// "disttune: error: ..." on `err`), or `verify` found bad records; 2 the arguments do not
/// parse. Throws only what an extra command throws.
int run_command_line(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                     const FrontEnd& front_end = {});

}  // namespace disttune::cli
