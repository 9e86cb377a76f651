// Tests of cache hygiene: stale temporary files, kept records and logs bounded per key, the
// keep setting, and keys too long for a record.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "disttune/store.hpp"
#include "store/cache_hygiene.hpp"
#include "store_test_support.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::entries;
using testing::sample_record;
using testing::ScopedEnv;
using testing::TempDir;
using testing::write_file;

std::vector<std::string> named(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> found;
  for (const auto& name : entries(dir)) {
    if (name.rfind(prefix, 0) == 0) found.push_back(name);
  }
  std::sort(found.begin(), found.end());
  return found;
}

void age(const fs::path& path, std::chrono::seconds by) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - by);
}

class CacheHygiene : public ::testing::Test {
 protected:
  DiskStore store(std::size_t keep) const { return DiskStore(temp_.path(), keep); }
  TempDir temp_;
};

TEST_F(CacheHygiene, TheNextWriterRemovesTemporaryFilesOlderThanAMinute) {
  const Record record = sample_record();
  const Record other = sample_record("scale", R"({"n":7})");
  const fs::path dir = *store(3).usable_function_dir("scale");
  const fs::path stale = dir / (other.id.file_id() + ".json.tmp-deadbeef");
  const fs::path fresh = dir / (other.id.file_id() + ".json.tmp-cafecafe");
  const fs::path not_ours = dir / "notes.json.tmp-deadbeef";
  for (const fs::path& path : {stale, fresh, not_ours}) write_file(path, "{\"half");
  age(stale, detail::kStaleTempAge + std::chrono::seconds(5));
  age(not_ours, std::chrono::hours(1));
  ASSERT_TRUE(store(3).save(record).has_value());
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));  // perhaps a writer at work
  EXPECT_TRUE(fs::exists(not_ours));
}

TEST_F(CacheHygiene, ReplacedRecordsAreKeptUpToTheLimitPerKey) {
  const Record record = sample_record();
  const Record other = sample_record("scale", R"({"n":7})");
  const DiskStore two = store(2);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(two.save(other).has_value());
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(two.save(record).has_value());
  const fs::path dir = temp_.path() / "scale";
  EXPECT_EQ(named(dir, record.id.file_id() + ".json.").size(), 2u);
  EXPECT_EQ(named(dir, other.id.file_id() + ".json.").size(), 2u);
  EXPECT_TRUE(two.load(record.id).has_value());

  ASSERT_TRUE(store(0).save(record).has_value());
  EXPECT_EQ(named(dir, record.id.file_id() + ".json.").size(), 0u);
  EXPECT_EQ(named(dir, other.id.file_id() + ".json.").size(), 2u);  // another key's
}

TEST_F(CacheHygiene, TheNewestLogsOfEachRankAreKeptPerKey) {
  const Record record = sample_record();
  const Record other = sample_record("scale", R"({"n":7})");
  const fs::path dir = *store(2).usable_function_dir("scale");
  const std::string log = record.id.file_id() + ".log-";
  // Each rank stamps its log when it starts: the ranks of one tuning differ a little.
  for (const char* stamp : {"20261129T093000.000001Z", "20261129T093000.000002Z",
                            "20261130T093000.000003Z", "20261130T093000.000004Z"}) {
    write_file(dir / (log + stamp + "-rank0"), "x");
    std::string later = stamp;
    later[later.size() - 3] = '9';
    write_file(dir / (log + later + "-rank1"), "x");
  }
  write_file(dir / (log + "20261101T000000.000000Z"), "single rank");
  write_file(dir / (other.id.file_id() + ".log-20261101T000000.000000Z"), "another key");
  ASSERT_TRUE(store(2).save(record).has_value());
  EXPECT_EQ(named(dir, log),
            (std::vector<std::string>{log + "20261101T000000.000000Z",
                                      log + "20261130T093000.000003Z-rank0",
                                      log + "20261130T093000.000004Z-rank0",
                                      log + "20261130T093000.000093Z-rank1",
                                      log + "20261130T093000.000094Z-rank1"}));
  EXPECT_EQ(named(dir, other.id.file_id() + ".log-").size(), 1u);
}

TEST(CacheKeep, ComesFromTheEnvironmentAndIsChecked) {
  {
    ScopedEnv unset("TRITON_DIST_AUTOTUNE_CACHE_KEEP", std::nullopt);
    EXPECT_EQ(default_kept_per_key(), 3u);
  }
  {
    ScopedEnv five("TRITON_DIST_AUTOTUNE_CACHE_KEEP", "5");
    EXPECT_EQ(default_kept_per_key(), 5u);
    EXPECT_EQ(DiskStore(fs::temp_directory_path()).kept_per_key(), 5u);
  }
  for (const char* bad : {"-1", "x", "3x", "10001", "1e3", " 2"}) {
    ScopedEnv env("TRITON_DIST_AUTOTUNE_CACHE_KEEP", bad);
    try {
      (void)default_kept_per_key();
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("TRITON_DIST_AUTOTUNE_CACHE_KEEP must be a whole "
                                               "number from 0 to 10000, got '" +
                                               std::string(bad) + "'"),
                std::string::npos)
          << error.what();
    }
  }
}

TEST_F(CacheHygiene, AKeyTooLongForARecordIsRefusedClearly) {
  Record record = sample_record();
  record.id.key = std::string(kMaxKeyBytes, 'k');
  EXPECT_NO_THROW(check_record_key(record.id.key));
  record.id.key.push_back('k');
  try {
    (void)store(3).load(record.id);
    ADD_FAILURE() << "a key of " << record.id.key.size() << " bytes was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("a cache record holds keys of at most " +
                                             std::to_string(kMaxKeyBytes) + " bytes"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)store(3).save(record), std::invalid_argument);
  EXPECT_FALSE(fs::exists(temp_.path() / "scale"));
}

TEST_F(CacheHygiene, ARecordOverTheReadersLimitIsNotWritten) {
  Record record = sample_record();
  // Within the key limit, but every quote is escaped: the record would be over the limit.
  record.id.key = std::string(kMaxKeyBytes, '"');
  record.candidates[2].error = std::string(kMaxRecordBytes / 2, 'e');
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store(3).save(record).has_value());
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("over the reader's limit"), std::string::npos) << warnings;
  EXPECT_FALSE(fs::exists(temp_.path() / "scale"));
}

}  // namespace
}  // namespace disttune
