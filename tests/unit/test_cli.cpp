// Tests of the disttune command: list, show, verify and clear on a temporary cache root; help,
// version, argument errors and replay.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "disttune/store.hpp"
#include "cli_test_support.hpp"
#include "store_test_support.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::entries;
using testing::sample_record;
using testing::ScopedEnv;
using testing::TempDir;
using testing::write_file;
using testing::CliResult;
using testing::run_cli;

class CliTest : public ::testing::Test {
 protected:
  // Saves a sample record of `function` for `key`; returns its path.
  fs::path save(const std::string& function, const std::string& key) {
    const auto path = store_.save(sample_record(function, key));
    if (!path) throw std::runtime_error("save failed");
    return *path;
  }
  std::string root_arg() const { return "--root '" + dir_.path().string() + "'"; }
  CliResult cli(const std::string& arguments) const { return run_cli(arguments + " " + root_arg()); }

  TempDir dir_;
  DiskStore store_{dir_.path()};
};

TEST_F(CliTest, ListPrintsOneLinePerRecord) {
  const fs::path first = save("scale", R"({"n":1024})");
  save("scale", R"({"n":2048})");
  save("gemm", R"({"m":64})");

  const CliResult all = cli("list");
  EXPECT_EQ(all.exit_code, 0) << all.output;
  const std::string id12 = first.stem().string().substr(0, 12);
  EXPECT_NE(all.output.find("scale  " + id12 + R"(  key {"n":1024}  best {"block":128,"ratio":0.25})"
                            "  ranks 2  2026-11-29T09:30:00Z\n"),
            std::string::npos)
      << all.output;
  EXPECT_NE(all.output.find(R"(gemm  )"), std::string::npos) << all.output;
  EXPECT_NE(all.output.find(R"(key {"n":2048})"), std::string::npos) << all.output;

  const CliResult one = cli("list scale");
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.output.find("gemm"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find(R"(key {"n":2048})"), std::string::npos) << one.output;
}

TEST_F(CliTest, ListReportsBadRecordsAndLeavesThemInPlace) {
  save("scale", R"({"n":1024})");
  const fs::path garbage = dir_.path() / "scale" / (std::string(64, 'b') + ".json");
  write_file(garbage, "{not json");

  const CliResult result = cli("list");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("BAD scale/" + garbage.filename().string() +
                               ": it is not valid JSON"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find(R"(key {"n":1024})"), std::string::npos) << result.output;
  EXPECT_TRUE(fs::exists(garbage));
  EXPECT_EQ(entries(dir_.path() / "scale").size(), 2u);
}

TEST_F(CliTest, ANestedRecordIsReportedNotACrash) {
  const Record record = sample_record("scale", R"({"n":1})");
  const fs::path path = *store_.usable_function_dir("scale") / (record.id.file_id() + ".json");
  write_file(path, testing::record_text_with(record, "candidates[0].config",
                                             testing::nested_lists(100'000)));
  const std::string reason = "it nests deeper than " + std::to_string(kMaxRecordDepth) + " levels";
  const CliResult verify = cli("verify");
  EXPECT_EQ(verify.exit_code, 1) << verify.output;
  EXPECT_NE(verify.output.find("BAD " + path.string() + ": " + reason), std::string::npos)
      << verify.output;
  const CliResult list = cli("list");
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("BAD scale/" + path.filename().string() + ": " + reason),
            std::string::npos)
      << list.output;
  const CliResult show = cli("show " + record.id.file_id().substr(0, 8));
  EXPECT_EQ(show.exit_code, 1) << show.output;
  EXPECT_NE(show.output.find(reason), std::string::npos) << show.output;
  EXPECT_TRUE(fs::exists(path));
}

TEST_F(CliTest, VerifyCountsRecordsAndFailsNamingEachBadOne) {
  const fs::path scale = save("scale", R"({"n":1024})");
  const fs::path gemm = save("gemm", R"({"m":64})");
  const CliResult good = cli("verify");
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_NE(good.output.find("2 record files checked, 2 good, 0 bad"), std::string::npos)
      << good.output;

  const fs::path garbage = dir_.path() / "scale" / (std::string(64, 'c') + ".json");
  write_file(garbage, R"({"schema": "disttune.record", "schema_version": 2})");
  const fs::path misnamed = dir_.path() / "gemm" / (std::string(64, 'd') + ".json");
  fs::copy_file(gemm, misnamed);
  const fs::path link = dir_.path() / "gemm" / (std::string(64, 'e') + ".json");
  fs::create_symlink(misnamed, link);
  fs::create_directory(dir_.path() / "moved");
  const fs::path moved = dir_.path() / "moved" / scale.filename();
  fs::copy_file(scale, moved);
  const CliResult bad = cli("verify");
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("BAD " + link.string() + ": it is a symbolic link (never followed)"),
            std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find("BAD " + moved.string() + ": it is not in the directory of its "
                                                      "function 'scale'"),
            std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find("BAD " + garbage.string() + ": "), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("BAD " + misnamed.string() + ": its name does not match"),
            std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find("6 record files checked, 2 good, 4 bad"), std::string::npos)
      << bad.output;
  EXPECT_TRUE(fs::exists(garbage));
}

TEST_F(CliTest, ShowPrintsTheRecordByIdPrefixOrPath) {
  const fs::path path = save("scale", R"({"n":1024})");
  const CliResult by_id = cli("show " + path.stem().string().substr(0, 8));
  EXPECT_EQ(by_id.exit_code, 0) << by_id.output;
  for (const std::string& expected : std::vector<std::string>{
           R"(disttune: scale key {"n":1024} (from disk))", R"( *   0  ok          1.6250  )",
        "(out of resources)", R"(best: [0] {"block":128,"ratio":0.25})",
        "record: " + path.string(), R"(hardware: {"cpu":{"cores":8,"model":"Test CPU"}})",
        R"(deps: {"compiler":"gcc 12.2.0","disttune":"0.1.0"})",
        "statistic mean, strategy exhaustive, flush_l2 true", "ranks 2, created 2026-11-29"}) {
    EXPECT_NE(by_id.output.find(expected), std::string::npos) << expected << "\n" << by_id.output;
  }
  const CliResult by_path = run_cli("show '" + path.string() + "'");
  EXPECT_EQ(by_path.exit_code, 0) << by_path.output;
  EXPECT_EQ(by_path.output, by_id.output);
}

TEST_F(CliTest, ShowPrintsTheTimerAndThePrunedConfigs) {
  Record record = sample_record("scale", R"({"n":1024})");
  record.timer = "cpu";
  record.pruned = {R"({"block":512,"ratio":0.5})", R"({"block":1024,"ratio":0.5})"};
  const std::optional<fs::path> path = store_.save(record);
  ASSERT_TRUE(path);
  const CliResult shown = run_cli("show '" + path->string() + "'");
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("\n  timer: cpu\n"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("\n  pruned for this key (2, never run): {\"block\":512,\"ratio\":0.5} "
                              "{\"block\":1024,\"ratio\":0.5}\n"),
            std::string::npos)
      << shown.output;
}

TEST_F(CliTest, ShowPrintsTheLogATuningThatChoseNothingLeft) {
  const fs::path dir = dir_.path() / "scale";
  fs::create_directories(dir);
  const fs::path log = dir / (std::string(64, 'c') + ".log-20261204T203000Z");
  write_file(log, "function scale digest v1\ncandidate 0 {\"a\":1} failed: RuntimeError: no such mode\n"
                  "Traceback (most recent call last):\n  File \"x.py\", line 3, in launch\n");
  const CliResult shown = run_cli("show '" + log.string() + "'");
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_EQ(shown.output, "tuning log " + log.string() + ":\nfunction scale digest v1\n"
                          "candidate 0 {\"a\":1} failed: RuntimeError: no such mode\n"
                          "Traceback (most recent call last):\n  File \"x.py\", line 3, in launch\n");
}

TEST_F(CliTest, ShowRejectsUnknownAndAmbiguousPrefixes) {
  // Seventeen records: two of them share their first hex digit.
  std::map<char, int> first_digits;
  char shared = 0;
  for (int n = 0; n < 17; ++n) {
    const char digit = save("scale", "{\"n\":" + std::to_string(n) + "}").filename().string()[0];
    if (++first_digits[digit] == 2) shared = digit;
  }
  const CliResult ambiguous = cli(std::string("show ") + shared);
  EXPECT_EQ(ambiguous.exit_code, 1) << ambiguous.output;
  EXPECT_NE(ambiguous.output.find("is ambiguous"), std::string::npos) << ambiguous.output;

  const CliResult missing = cli("show " + std::string(64, '0'));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("no record id starts with"), std::string::npos) << missing.output;
  const CliResult neither = cli("show no-such-file.json");
  EXPECT_EQ(neither.exit_code, 1) << neither.output;
  EXPECT_NE(neither.output.find("neither a file nor a record id prefix"), std::string::npos)
      << neither.output;
}

TEST_F(CliTest, ClearRemovesOneFunctionOrAllAndNeedsYes) {
  const fs::path scale = save("scale", R"({"n":1024})");
  save("scale", R"({"n":1024})");  // keeps the first as <id>.json.<UTC>
  const std::string id = scale.stem().string();
  write_file(scale.parent_path() / (id + ".bad-20261129T093000.000000Z"), "x");
  write_file(scale.parent_path() / (id + ".log-20261129T093000.000000Z"), "x");
  save("gemm", R"({"m":64})");
  ASSERT_EQ(entries(scale.parent_path()).size(), 4u);

  const CliResult refused = cli("clear scale");
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("--yes"), std::string::npos) << refused.output;
  EXPECT_EQ(entries(scale.parent_path()).size(), 4u);

  const CliResult one = cli("clear scale --yes");
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("removed 4 files of scale"), std::string::npos) << one.output;
  EXPECT_FALSE(fs::exists(scale.parent_path()));
  EXPECT_EQ(entries(dir_.path() / "gemm").size(), 1u);

  const CliResult all = cli("clear --yes");
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_NE(all.output.find("removed 1 files in all"), std::string::npos) << all.output;
  EXPECT_TRUE(entries(dir_.path()).empty());
}

TEST_F(CliTest, ClearRemovesEveryEntryTypeAndHonoursOlderThan) {
  const fs::path scale = save("scale", R"({"n":1024})");
  const fs::path dir = scale.parent_path();
  const std::string id = scale.stem().string();
  // A directory that stood at a record's name, moved aside by the engine, with content.
  const fs::path bad_dir = dir / (id + ".bad-20261129T093000.000000Z");
  fs::create_directories(bad_dir / "inner");
  write_file(bad_dir / "inner" / "file", "x");
  const fs::path outside = dir_.path() / "outside.txt";
  write_file(outside, "kept");
  fs::create_symlink(outside, dir / (id + ".bad-20261129T093001.000000Z"));
  const fs::path old_log = dir / (id + ".log-20261101T000000.000000Z");
  write_file(old_log, "old");
  fs::last_write_time(old_log, fs::file_time_type::clock::now() - std::chrono::hours(49));
  fs::last_write_time(bad_dir, fs::file_time_type::clock::now() - std::chrono::hours(49));

  const CliResult malformed = cli("clear --yes --older-than 2days");
  EXPECT_EQ(malformed.exit_code, 1) << malformed.output;
  EXPECT_NE(malformed.output.find("--older-than takes a number and a unit"), std::string::npos)
      << malformed.output;

  const CliResult old = cli("clear --yes --older-than 2d");
  EXPECT_EQ(old.exit_code, 0) << old.output;
  EXPECT_NE(old.output.find("removed 2 files of scale"), std::string::npos) << old.output;
  EXPECT_FALSE(fs::exists(bad_dir));
  EXPECT_FALSE(fs::exists(old_log));
  EXPECT_TRUE(fs::exists(scale));

  const CliResult all = cli("clear --yes");
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_NE(all.output.find("removed 2 files of scale"), std::string::npos) << all.output;
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_EQ(testing::read_file(outside), "kept");  // the link went, not what it named
}

TEST_F(CliTest, ListAndVerifyFlagRecordsInDirectoriesTheEngineRefuses) {
  const fs::path scale = save("scale", R"({"n":1024})");
  save("gemm", R"({"m":64})");
  fs::permissions(scale.parent_path(), fs::perms::group_write, fs::perm_options::add);
  const CliResult verify = cli("verify");
  EXPECT_EQ(verify.exit_code, 1) << verify.output;
  EXPECT_NE(verify.output.find("BAD " + scale.string() +
                               ": the engine refuses its directory: " +
                               scale.parent_path().string() + " is writable by group or others"),
            std::string::npos)
      << verify.output;
  EXPECT_NE(verify.output.find("2 record files checked, 1 good, 1 bad"), std::string::npos)
      << verify.output;
  const CliResult list = cli("list");
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("BAD scale/" + scale.filename().string() +
                             ": the engine refuses its directory"),
            std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find(R"(key {"m":64})"), std::string::npos) << list.output;
}

TEST(Cli, NamesAMissingRootAnUnknownFunctionAndUsesTheEnvironmentRoot) {
  TempDir dir;
  const CliResult missing = run_cli("list --root '" + (dir.path() / "absent").string() + "'");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("cache root " + (dir.path() / "absent").string() +
                                " does not exist"),
            std::string::npos)
      << missing.output;

  DiskStore(dir.path()).save(sample_record("scale"));
  const ScopedEnv root("TRITON_DIST_AUTOTUNE_CACHE_DIR", dir.path().string());
  const CliResult unknown = run_cli("list nosuch");
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_NE(unknown.output.find("unknown function 'nosuch'"), std::string::npos)
      << unknown.output;
  const CliResult listed = run_cli("list scale");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find(R"(key {"n":1024})"), std::string::npos) << listed.output;
}

TEST(Cli, HelpListsEveryCommandOfTheTableAndVersionNamesTheLibrary) {
  const CliResult help = run_cli("--help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  for (const char* command : {"list", "show", "verify", "clear", "export", "import", "report", "replay"}) {
    EXPECT_NE(help.output.find(std::string("  ") + command), std::string::npos) << command << "\n" << help.output;
  }
  const CliResult replay_help = run_cli("replay --help");
  EXPECT_EQ(replay_help.exit_code, 0) << replay_help.output;
  EXPECT_NE(replay_help.output.find("strategies to run (default: search random)"), std::string::npos)
      << replay_help.output;
  const CliResult version = run_cli("--version");
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_EQ(version.output.rfind("disttune ", 0), 0u) << version.output;
}

TEST(Cli, ArgumentsThatDoNotParseOrThatTheTableRefusesAreOneLineAndStatusTwo) {
  const CliResult unknown = run_cli("nosuch");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_EQ(unknown.output.rfind("disttune: error: ", 0), 0u) << unknown.output;
  const CliResult range = run_cli("replay '" DISTTUNE_REPLAY_TABLES "/split_k_fp16_128x8192x8192.json' --compile-threads 0");
  EXPECT_EQ(range.exit_code, 2) << range.output;
  EXPECT_EQ(range.output, "disttune: error: --compile-threads: 0 is not in [1, 4096]\n");
}

TEST(Cli, ReplayRunsAStrategyOverATable) {
  const CliResult replay =
      run_cli("replay '" DISTTUNE_REPLAY_TABLES "/split_k_fp16_128x8192x8192.json' --strategy random --seeds 2 --each");
  EXPECT_EQ(replay.exit_code, 0) << replay.output;
  EXPECT_NE(replay.output.find("  seed 1: x"), std::string::npos) << replay.output;
  EXPECT_NE(replay.output.find("random over 2 seeds: median x"), std::string::npos) << replay.output;
  const CliResult missing = run_cli("replay /nonexistent/table.json --seeds 1");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_EQ(missing.output.rfind("disttune: error: ", 0), 0u) << missing.output;
}

}  // namespace
}  // namespace disttune
