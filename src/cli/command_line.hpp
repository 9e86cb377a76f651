// The disttune command line: list, show, verify, clear, export, import, report and replay,
// run once here for every front end (the C++ `disttune` tool, `python -m disttune`); each
// front end parses with a parser built from the command table (cli/command_table.hpp).
#pragma once

#include <iosfwd>

#include "cli/command_arguments.hpp"
#include "disttune/config.hpp"

namespace disttune::cli {

/// What the front end running the command line adds to it.
struct FrontEnd {
  /// Software facts of this program beyond the engine's (Python: python, torch, triton
  /// versions), compared with a table's records on import.
  Value software = Value::object();
};

/// Runs the parsed command, printing to `out` and `err`. Returns the exit status: 0 done; 1 a
/// problem with the input or the cache (one line "disttune: error: ..." on `err`), or `verify`
/// found bad records; 2 arguments the command table refuses (one line "disttune: error: ...").
int run_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err,
                const FrontEnd& front_end = {});

}  // namespace disttune::cli
