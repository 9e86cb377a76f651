// Tests of the command table's checks (src/cli/command_arguments.cpp): what every front end's
// parser hands the runner is checked here, once, with the table's defaults.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cli/command_arguments.hpp"
#include "cli/command_table.hpp"

namespace disttune::cli {
namespace {

// The ArgumentError message of `parsed`, or "" when it is accepted.
std::string refusal(ParsedCommand parsed) {
  try {
    CommandArguments{std::move(parsed)};
  } catch (const ArgumentError& error) {
    return error.what();
  }
  return "";
}

ParsedCommand replay(std::map<std::string, std::vector<std::string>> values) {
  values["tables"] = {"a.json"};
  return {.command = "replay", .values = std::move(values)};
}

TEST(CommandArguments, ReadsTheTablesDefaultsWhenNotGiven) {
  const CommandArguments arguments(replay({}));
  EXPECT_EQ(arguments.texts("--strategy"), (std::vector<std::string>{"search", "random"}));
  EXPECT_EQ(arguments.integer("--seeds"), 10);
  EXPECT_EQ(arguments.integer("--compile-threads"), 16);
  EXPECT_DOUBLE_EQ(arguments.real("--launch-ms"), 0.05);
  EXPECT_EQ(arguments.text("--compiles"), "per-key");
  EXPECT_FALSE(arguments.flag("--sweep"));
  EXPECT_TRUE(arguments.pairs("--option").empty());
  EXPECT_EQ(arguments.text("--root"), "");
}

TEST(CommandArguments, ReadsWhatWasGiven) {
  const CommandArguments arguments(replay({{"--strategy", {"converge"}},
                                           {"--seeds", {"3"}},
                                           {"--launch-ms", {"0.5"}},
                                           {"--sweep", {}},
                                           {"--option", {"effort", "quick", "pool", "4"}},
                                           {"--root", {"/tmp/r"}}}));
  EXPECT_EQ(arguments.texts("--strategy"), (std::vector<std::string>{"converge"}));
  EXPECT_EQ(arguments.integer("--seeds"), 3);
  EXPECT_DOUBLE_EQ(arguments.real("--launch-ms"), 0.5);
  EXPECT_TRUE(arguments.flag("--sweep"));
  EXPECT_EQ(arguments.pairs("--option"),
            (std::map<std::string, std::string>{{"effort", "quick"}, {"pool", "4"}}));
  EXPECT_EQ(arguments.text("--root"), "/tmp/r");
}

TEST(CommandArguments, RefusesValuesTheTableDoesNotAllow) {
  EXPECT_EQ(refusal(replay({{"--compile-threads", {"0"}}})),
            "--compile-threads: 0 is not in [1, 4096]");
  EXPECT_EQ(refusal(replay({{"--seeds", {"ten"}}})), "--seeds: 'ten' is not a whole number");
  EXPECT_EQ(refusal(replay({{"--seeds", {"2.5"}}})), "--seeds: '2.5' is not a whole number");
  EXPECT_EQ(refusal(replay({{"--launch-ms", {"fast"}}})), "--launch-ms: 'fast' is not a number");
  EXPECT_EQ(refusal(replay({{"--compiles", {"never"}}})),
            "--compiles: 'never' is not one of per-key, shared");
  EXPECT_EQ(refusal(replay({{"--option", {"effort"}}})), "--option: wrong number of values");
  EXPECT_EQ(refusal(replay({{"--seeds", {"1", "2"}}})), "--seeds: wrong number of values");
  EXPECT_EQ(refusal(replay({{"--sweep", {"yes"}}})), "--sweep: wrong number of values");
}

TEST(CommandArguments, RefusesUnknownNamesAndMissingRequiredArguments) {
  EXPECT_EQ(refusal({.command = "nosuch", .values = {}}), "unknown command 'nosuch'");
  EXPECT_EQ(refusal({.command = "list", .values = {{"--force", {}}}}),
            "list takes no argument '--force'");
  EXPECT_EQ(refusal({.command = "replay", .values = {}}), "replay: tables is required");
  EXPECT_EQ(refusal({.command = "show", .values = {}}), "show: file_or_id is required");
  EXPECT_EQ(refusal({.command = "list", .values = {{"--root", {"/tmp/r"}}}}), "");
}

TEST(CommandTable, NamesEachCommandAndEachOfItsArgumentsOnce) {
  std::set<std::string> commands;
  for (const Command& command : command_table().commands) {
    EXPECT_TRUE(commands.insert(command.name).second) << command.name;
    std::set<std::string> names;
    for (const Argument& argument : command.arguments)
      EXPECT_TRUE(names.insert(argument.name).second) << argument.name;
    for (const Argument& argument : command_table().global_arguments) {
      EXPECT_FALSE(names.contains(argument.name)) << command.name << " redefines " << argument.name;
    }
  }
  EXPECT_EQ(commands, (std::set<std::string>{"list", "show", "verify", "clear", "export", "import",
                                             "report", "replay"}));
}

}  // namespace
}  // namespace disttune::cli
