// Tests of the disttune command's tables (export / import) and of text that is not UTF-8:
// the whole table is checked before anything is written, special files are refused, a
// non-UTF-8 path is a BAD line, and the mismatch policy of TRITON_DIST_AUTOTUNE_TABLE_MISMATCH.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string>

#include "cli_test_support.hpp"
#include "disttune/fingerprint.hpp"
#include "disttune/report.hpp"
#include "disttune/store.hpp"
#include "store_test_support.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::read_file;
using testing::run_cli;
using testing::sample_record;
using testing::TempDir;
using testing::write_file;

class CliTableTest : public ::testing::Test {
 protected:
  std::string quoted(const fs::path& path) const { return "'" + path.string() + "'"; }
  CliResult cli(const std::string& arguments, const fs::path& root) const {
    return run_cli(arguments + " --root " + quoted(root));
  }
  // The table exported from `first_` holding the sample records of "scale" for two keys.
  Value exported() {
    EXPECT_TRUE(first_store_.save(sample_record("scale", R"({"n":1})")).has_value());
    EXPECT_TRUE(first_store_.save(sample_record("scale", R"({"n":2})")).has_value());
    const CliResult done = cli("export " + quoted(table_), first_.path());
    EXPECT_EQ(done.exit_code, 0) << done.output;
    EXPECT_NE(done.output.find("exported 2 records to "), std::string::npos) << done.output;
    return Value::parse(read_file(table_));
  }

  TempDir first_;
  DiskStore first_store_{first_.path()};
  TempDir second_;
  fs::path table_ = second_.path() / "table.json";
  fs::path target_ = second_.path() / "cache";
};

TEST_F(CliTableTest, ExportCarriesTheFingerprintsAndImportWritesEveryRecord) {
  const Value table = exported();
  const Record sample = sample_record();
  EXPECT_EQ(table["schema"], "disttune.table");
  EXPECT_EQ(table["devices"][sample.id.hardware_digest], sample.hardware);
  EXPECT_EQ(table["software"][digest(sample.deps)], sample.deps);

  const CliResult done = cli("import " + quoted(table_), target_);
  EXPECT_EQ(done.exit_code, 0) << done.output;
  const DiskStore target(target_);
  for (const char* key : {R"({"n":1})", R"({"n":2})"}) {
    const std::optional<Record> loaded = target.load(sample_record("scale", key).id);
    ASSERT_TRUE(loaded.has_value()) << key;
    EXPECT_EQ(loaded->created_utc, sample.created_utc);
    // Marked as imported from that table: a report of it says so.
    ASSERT_TRUE(loaded->imported.has_value()) << key;
    EXPECT_EQ(loaded->imported->table, "table.json");
    EXPECT_EQ(report_of_record(*loaded, DiskStore::kSource).source, TuningReport::Source::table);
    EXPECT_NE(format_table(report_of_record(*loaded, DiskStore::kSource)).find("(from an imported table)"),
              std::string::npos);
  }
  const CliResult again = cli("import " + quoted(table_), target_);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("same  scale  key {\"n\":1}: already on disk"), std::string::npos)
      << again.output;
}

TEST_F(CliTableTest, AnUnsafeFunctionNameAnywhereIsOneErrorLineAndWritesNothing) {
  Value table = exported();
  // Sorted after "scale", so the good records come first in the file.
  Value unsafe = table["functions"]["scale"];
  for (const std::string& name : {std::string("zz/evil"), std::string(300, 'z')}) {
    Value changed = table;
    changed["functions"][name] = unsafe;
    write_file(table_, changed.dump());
    const CliResult done = cli("import " + quoted(table_), target_);
    EXPECT_EQ(done.exit_code, 1) << done.output;
    EXPECT_EQ(done.output.rfind("disttune: error: ", 0), 0u) << done.output;
    EXPECT_EQ(done.output.find('\n'), done.output.size() - 1) << done.output;  // one line
    EXPECT_FALSE(fs::exists(target_)) << name;
  }
}

TEST_F(CliTableTest, ARecordBadAfterGoodOnesWritesNothing) {
  Value table = exported();
  table["functions"]["scale"][R"({"n":2})"].begin().value()["best"]["index"] = 99;
  write_file(table_, table.dump());
  const CliResult done = cli("import " + quoted(table_), target_);
  EXPECT_EQ(done.exit_code, 1) << done.output;
  EXPECT_NE(done.output.find("is not a valid record"), std::string::npos) << done.output;
  EXPECT_FALSE(fs::exists(target_));
}

// A table is shipped measurements: a measured candidate that took no time, or less, is not
// one, and the table is refused before anything is written.
TEST_F(CliTableTest, ARecordWithATimeOfZeroOrLessIsRefusedAndNothingWritten) {
  const Value table = exported();
  for (const double ms : {0.0, -2.0}) {
    Value changed = table;
    changed["functions"]["scale"][R"({"n":2})"].begin().value()["candidates"][0]["samples_ms"][0] =
        ms;
    write_file(table_, changed.dump());
    const CliResult done = cli("import " + quoted(table_), target_);
    EXPECT_EQ(done.exit_code, 1) << done.output;
    EXPECT_NE(done.output.find("candidates[0].samples_ms[0]"), std::string::npos) << done.output;
    EXPECT_EQ(std::count(done.output.begin(), done.output.end(), '\n'), 1) << done.output;
    EXPECT_FALSE(fs::exists(target_));
  }
}

TEST_F(CliTableTest, ImportRefusesSpecialFilesWithoutReadingThem) {
  const fs::path fifo = second_.path() / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const fs::path& path : {fifo, fs::path("/dev/zero"), second_.path()}) {
    const CliResult done = cli("import " + quoted(path), target_);  // a FIFO would block
    EXPECT_EQ(done.exit_code, 1) << done.output;
    EXPECT_NE(done.output.find("import reads a table from a regular file only"), std::string::npos)
        << done.output;
    EXPECT_FALSE(fs::exists(target_));
  }
}

TEST_F(CliTableTest, ARecordOfOtherSoftwareIsUsedWithAWarningOrLeftOut) {
  Value table = exported();
  for (auto& by_hardware : table["functions"]["scale"]) {
    by_hardware.begin().value()["deps"]["disttune"] = "0.0.1";
  }
  write_file(table_, table.dump());
  // Default (warn): written, with one warning for the table.
  const CliResult warned = cli("import " + quoted(table_), target_);
  EXPECT_EQ(warned.exit_code, 0) << warned.output;
  // The sample records' compiler may differ from this build's too (it is named first then).
  EXPECT_NE(warned.output.find("holds records made with other software: "), std::string::npos) << warned.output;
  EXPECT_NE(warned.output.find("disttune '0.0.1' (here '" + library_version() + "')"), std::string::npos)
      << warned.output;
  EXPECT_NE(warned.output.find("wrote scale"), std::string::npos) << warned.output;
  // retune: left out, nothing written.
  const testing::ScopedEnv policy("TRITON_DIST_AUTOTUNE_TABLE_MISMATCH", "retune");
  const CliResult retune = cli("import " + quoted(table_), second_.path() / "retuned");
  EXPECT_EQ(retune.exit_code, 0) << retune.output;
  EXPECT_NE(retune.output.find("skip  scale  key {\"n\":1}: made with other software"),
            std::string::npos)
      << retune.output;
  EXPECT_TRUE(fs::exists(target_ / "scale"));
  EXPECT_FALSE(fs::exists(second_.path() / "retuned" / "scale"));
}

TEST_F(CliTableTest, ANonUtf8PathIsABadLineInListVerifyExportAndReport) {
  ASSERT_TRUE(first_store_.save(sample_record("scale", R"({"n":1})")).has_value());
  const std::string odd = "bad\xff\xfe";
  fs::create_directory(first_.path() / odd);
  write_file(first_.path() / odd / (std::string(64, 'c') + ".json"), "{}");
  write_file(first_.path() / "scale" / (odd + ".json"), "{}");

  const CliResult list = cli("list", first_.path());
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("BAD bad\\xff\\xfe/" + std::string(64, 'c') + ".json: "),
            std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find("BAD scale/bad\\xff\\xfe.json: "), std::string::npos) << list.output;
  const CliResult verify = cli("verify", first_.path());
  EXPECT_EQ(verify.exit_code, 1) << verify.output;
  EXPECT_NE(verify.output.find("3 record files checked, 1 good, 2 bad"), std::string::npos)
      << verify.output;
  const CliResult exported = cli("export " + quoted(table_), first_.path());
  EXPECT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("skipped BAD scale/bad\\xff\\xfe.json"), std::string::npos)
      << exported.output;
  const fs::path page = second_.path() / "report.html";
  const CliResult report = cli("report " + quoted(page), first_.path());
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("1 records, 2 bad files"), std::string::npos) << report.output;
  const std::string html = read_file(page);
  EXPECT_NE(html.find("bad\\xff\\xfe.json"), std::string::npos);
  EXPECT_EQ(html.find('\xff'), std::string::npos);  // the page is UTF-8
  EXPECT_NE(html.find("failed: out of resources"), std::string::npos);
}

// An output path (export's table, report's page) that is there and is not a regular file is
// refused with one line, and it is left as it was: a FIFO stays a FIFO, a symlink is not
// followed nor replaced, and no temporary file is left beside them.
TEST_F(CliTableTest, ExportAndReportRefuseToReplaceWhatIsNotARegularFile) {
  ASSERT_TRUE(first_store_.save(sample_record("scale", R"({"n":1})")).has_value());
  const fs::path fifo = second_.path() / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const fs::path aimed = second_.path() / "aimed.json";
  write_file(aimed, "theirs");
  const fs::path link = second_.path() / "link.json";
  fs::create_symlink(aimed, link);
  const fs::path dir = second_.path() / "dir";
  fs::create_directory(dir);
  for (const std::string command : {"export ", "report "}) {
    for (const fs::path& target : {fifo, link, dir}) {
      const CliResult refused = cli(command + quoted(target), first_.path());
      EXPECT_EQ(refused.exit_code, 1) << command << target << "\n" << refused.output;
      EXPECT_EQ(refused.output.rfind("disttune: error: refusing to replace " + target.string(), 0),
                0u)
          << refused.output;
      EXPECT_EQ(std::count(refused.output.begin(), refused.output.end(), '\n'), 1)
          << refused.output;
    }
  }
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read_file(aimed), "theirs");
  EXPECT_TRUE(fs::is_empty(dir));
  EXPECT_EQ(std::distance(fs::directory_iterator(second_.path()), fs::directory_iterator()), 4);
}

}  // namespace
}  // namespace disttune
