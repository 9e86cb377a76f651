// The replay subcommand of the command line: `disttune replay TABLES...`.
#pragma once

#include <iosfwd>

#include "cli/command_arguments.hpp"

namespace disttune::cli {

/// Runs each strategy against each replay table (or, with --sweep, the tables as the keys of
/// one space) over the seeds and prints their quality to `out`; returns the exit status.
/// Throws what reading a table or a strategy option throws (the caller prints it).
int run_replay(const CommandArguments& arguments, std::ostream& out);

}  // namespace disttune::cli
