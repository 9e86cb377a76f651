// command_table: every subcommand of `disttune` and its arguments, the one definition.
#include "cli/command_table.hpp"

#include <sstream>

#include "disttune/fingerprint.hpp"
#include "disttune/replay.hpp"

namespace disttune::cli {
namespace {

Argument flag(std::string name, std::string help) {
  return {.name = std::move(name), .help = std::move(help), .arity = Arity::flag};
}

Argument text(std::string name, std::string help, bool required = false) {
  return {.name = std::move(name), .help = std::move(help), .required = required};
}

/// A simulated duration of the replay's wall clock: a real number from 0 to a million.
Argument simulated_time(std::string name, std::string help, double value) {
  return {.name = std::move(name),
          .help = std::move(help),
          .type = ValueType::real,
          .defaults = {number_text(value)},
          .min = 0.0,
          .max = 1e6};
}

std::vector<Command> cache_commands() {
  return {
      {"list",
       "one line per record (bad ones as BAD)",
       {text("function", "only this function's records")}},
      {"show",
       "one record as a table, with its fingerprints",
       {text("file_or_id",
             "a record file or a unique prefix of its id; or a tuning's log (NAME.log-UTC), printed",
             true)}},
      {"verify", "check that every record file is a valid schema-1 record", {}},
      {"clear",
       "remove the records and logs of one function or all",
       {text("function", "only this function's files"), flag("--yes", "really remove them"),
        text("--older-than",
             "only entries last modified longer ago than this, e.g. 30d, 12h, 90m, 45s")}},
      {"export",
       "write every record under the root into one table (JSON)",
       {text("file", "the table to write", true)}},
      {"import",
       "write a table's records under the root (all checked first)",
       {text("file", "a table written by `disttune export` or a sweep", true),
        flag("--force", "replace records on disk even when they are newer")}},
      {"report",
       "write an HTML page with each config's timing samples plotted",
       {text("file", "the page to write, e.g. report.html", true),
        text("--function", "only this function's records")}},
  };
}

Command replay_command() {
  const WallClock clock;
  return {
      "replay",
      "run strategies against replay tables (recorded times and failures) on the CPU",
      {
          {.name = "tables",
           .help = "replay table files (docs/strategies.md, section Replay)",
           .arity = Arity::one_or_more,
           .required = true},
          {.name = "--strategy",
           .help = "strategies to run",
           .arity = Arity::one_or_more,
           .defaults = {"search", "random"}},
          {.name = "--option",
           .help = "a strategy option NAME VALUE, e.g. --option effort quick (repeatable)",
           .arity = Arity::pairs},
          {.name = "--seeds",
           .help = "runs per strategy, seeds 0 .. N-1",
           .type = ValueType::integer,
           .defaults = {"10"},
           .min = 1,
           .max = 100000},
          flag("--each", "one line per run"),
          flag("--sweep",
               "the tables are one space at several keys (their problems), tuned in the order "
               "given: warm-started from the keys before, against independent tunings"),
          {.name = "--compiles",
           .help = "with --sweep: per-key (sizes as compile-time constants) or shared (binaries "
                   "shared by the keys); compile times are the first table's",
           .defaults = {"per-key"},
           .choices = {"per-key", "shared"}},
          {.name = "--compile-threads",
           .help = "simulated compile threads of the first call's wall clock",
           .type = ValueType::integer,
           .defaults = {number_text(clock.compile_threads)},
           .min = 1,
           .max = 4096},
          simulated_time("--launch-ms", "simulated host time of each run on top of its device time",
                         clock.launch_ms),
          simulated_time("--compile-min-s",
                         "with --compile-max-s: slow compiles, each entry's recorded compile time "
                         "mapped linearly onto [min, max] seconds (their order kept)",
                         clock.compile_min_s),
          simulated_time("--compile-max-s",
                         "the slowest compile of the mapped range (0: the recorded compile times)",
                         clock.compile_max_s),
          simulated_time("--compile-setup-s",
                         "the compiler's one-time set-up in a fresh process: every compile started "
                         "before it ends waits for it",
                         clock.compile_setup_s),
          {.name = "--compile-cores",
           .help = "cores the compiles in flight share (0: none shared, each compile lasts its "
                   "recorded time; the tables' compiles were recorded 16 at once)",
           .type = ValueType::integer,
           .defaults = {number_text(clock.compile_cores)},
           .min = 0,
           .max = 4096},
      },
  };
}

CommandTable make_table() {
  CommandTable table;
  table.program = "disttune";
  table.about =
      "disttune: inspect, move and clear the disk cache of tuning records; replay "
      "strategies against recorded tables";
  table.version = "disttune " + library_version();
  table.global_arguments = {text(
      "--root", "cache root (default: TRITON_DIST_AUTOTUNE_CACHE_DIR or ~/.triton_dist/autotune)")};
  table.commands = cache_commands();
  table.commands.push_back(replay_command());
  return table;
}

}  // namespace

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::string Argument::described() const {
  if (defaults.empty()) return help;
  std::string shown_defaults;
  for (const std::string& value : defaults)
    shown_defaults += (shown_defaults.empty() ? "" : " ") + value;
  return help + " (default: " + shown_defaults + ")";
}

const CommandTable& command_table() {
  static const CommandTable table = make_table();
  return table;
}

}  // namespace disttune::cli
