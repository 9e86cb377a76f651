// Tests of the one record reader on hostile bytes: parse_record, read_record_file and
// DiskStore::load (nesting, overflowing numbers, size, special files at the record path).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "disttune/store.hpp"
#include "record/bounded_json.hpp"
#include "record/record_file.hpp"
#include "store_test_support.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::entries;
using testing::nested_lists;
using testing::record_text_with;
using testing::sample_record;
using testing::TempDir;
using testing::write_file;

constexpr std::size_t kHostileDepth = 100'000;

int count(const std::string& text, const std::string& part) {
  int found = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++found;
  return found;
}

std::size_t count_prefixed(const fs::path& dir, const std::string& prefix) {
  std::size_t found = 0;
  for (const auto& name : entries(dir)) found += name.rfind(prefix, 0) == 0 ? 1 : 0;
  return found;
}

TEST(ParseRecord, ReadsWhatRecordToJsonWrites) {
  const Record record = sample_record();
  const RecordRead read = parse_record(record_to_json(record).dump(2));
  ASSERT_TRUE(read.record.has_value()) << read.error;
  EXPECT_EQ(read.error, "");
  EXPECT_EQ(record_to_json(*read.record), record_to_json(record));
}

// "prepared" (compiled, speculation included) is optional: written when set, read back; an
// older record without it reads as not known; a count beyond the candidates is unusable.
TEST(ParseRecord, PreparedIsOptionalAndBounded) {
  Record record = sample_record();
  EXPECT_FALSE(record_to_json(record).contains("prepared"));
  EXPECT_FALSE(parse_record(record_to_json(record).dump()).record->prepared.has_value());
  record.prepared = record.candidates.size();
  const RecordRead read = parse_record(record_to_json(record).dump());
  ASSERT_TRUE(read.record.has_value()) << read.error;
  EXPECT_EQ(read.record->prepared, record.candidates.size());
  Value json = record_to_json(record);
  json["prepared"] = record.candidates.size() + 1;
  EXPECT_FALSE(parse_record(json.dump()).record.has_value());
  json["prepared"] = -1;
  EXPECT_FALSE(parse_record(json.dump()).record.has_value());
}

TEST(ParseRecord, NestingInAConfigIsUnusableNotACrash) {
  const RecordRead read = parse_record(
      record_text_with(sample_record(), "candidates[0].config", nested_lists(kHostileDepth)));
  EXPECT_FALSE(read.record.has_value());
  EXPECT_EQ(read.error, "it nests deeper than " + std::to_string(kMaxRecordDepth) + " levels");
}

TEST(ParseRecord, NestingInHardwareIsUnusableNotACrash) {
  const std::string nested_map = [] {
    std::string text;
    for (std::size_t i = 0; i < kHostileDepth; ++i) text += R"({"a":)";
    return text + "0" + std::string(kHostileDepth, '}');
  }();
  const RecordRead read = parse_record(record_text_with(sample_record(), "hardware", nested_map));
  EXPECT_FALSE(read.record.has_value());
  EXPECT_NE(read.error.find("nests deeper than"), std::string::npos) << read.error;
}

TEST(ParseRecord, AConfigAtTheDepthLimitReadsBack) {
  Record record = sample_record();
  record.candidates[0].config = nested_lists(kMaxValueDepth);
  const RecordRead read = parse_record(record_to_json(record).dump());
  ASSERT_TRUE(read.record.has_value()) << read.error;
  EXPECT_EQ(read.record->candidates[0].config, nested_lists(kMaxValueDepth));
  // One level more is refused by the writer (canonical_json) and by the reader.
  EXPECT_FALSE(parse_record(record_text_with(sample_record(), "candidates[0].config",
                                             nested_lists(kMaxValueDepth + 1)))
                   .record.has_value());
}

TEST(ParseRecord, ANumberThatOverflowsADoubleIsUnusable) {
  Value json = record_to_json(sample_record());
  json["candidates"][0]["samples_ms"] = "@@";
  std::string text = json.dump();
  for (const std::string& number : {std::string("1e400"), "1" + std::string(400, '0')}) {
    std::string hostile = text;
    hostile.replace(hostile.find("\"@@\""), 4, "[" + number + "]");
    const RecordRead read = parse_record(hostile);
    EXPECT_FALSE(read.record.has_value()) << number;
    EXPECT_NE(read.error.find("it is not valid JSON"), std::string::npos) << read.error;
  }
}

// No store holds a negative time of a measured candidate (the engine re-takes such a run):
// a record with one is unusable, not a candidate that wins with it.
TEST(ParseRecord, ANegativeTimeOfAMeasuredCandidateIsUnusable) {
  for (const std::string field : {"samples_ms", "local_ms", "agreed_ms"}) {
    Value json = record_to_json(sample_record());
    if (field == "samples_ms") {
      json["candidates"][0][field][1] = -1.25;
    } else {
      json["candidates"][0][field] = -1.5;
    }
    const RecordRead read = parse_record(json.dump());
    EXPECT_FALSE(read.record.has_value()) << field;
    EXPECT_NE(read.error.find("candidates[0]." + field), std::string::npos) << read.error;
    EXPECT_NE(read.error.find("must be >= 0"), std::string::npos) << read.error;
  }
}

// A JSON list of `count` empty maps: a record's candidates at their smallest.
std::string list_of_maps(std::size_t count) {
  std::string text = "[{}";
  for (std::size_t i = 1; i < count; ++i) text += ",{}";
  return text + "]";
}

// The least CPU time of this thread over three bounded parses of `text`.
double parse_cpu_seconds(const std::string& text) {
  double least = 1e9;
  for (int i = 0; i < 3; ++i) {
    timespec start{};
    timespec stop{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    const Value parsed = detail::parse_bounded(text, kMaxRecordDepth);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &stop);
    EXPECT_TRUE(parsed.is_array());
    least = std::min(least, static_cast<double>(stop.tv_sec - start.tv_sec) +
                                1e-9 * static_cast<double>(stop.tv_nsec - start.tv_nsec));
  }
  return least;
}

// The reader's parse grows linearly with a list's length (a record's candidates): 8 times
// the maps cost well under 8 squared times the work (this thread's CPU time, as a ratio:
// this machine has no instruction counter). The parse that scanned the whole list at the
// end of each map took about 64.
TEST(ParseBounded, WorkGrowsLinearlyWithAListsLength) {
  const double few = parse_cpu_seconds(list_of_maps(10'000));
  const double many = parse_cpu_seconds(list_of_maps(80'000));
  EXPECT_LT(many / few, 20.0) << "10,000 maps: " << few << " s, 80,000: " << many << " s";
}

TEST(ParseRecord, BytesOverTheSizeLimitAreNotParsed) {
  const RecordRead read = parse_record(std::string(kMaxRecordBytes + 1, ' '));
  EXPECT_FALSE(read.record.has_value());
  EXPECT_EQ(read.error, "it is larger than " + std::to_string(kMaxRecordBytes) + " bytes");
}

TEST(ParseRecord, EveryPrefixOfARecordIsUnusableWithAReason) {
  const std::string text = record_to_json(sample_record()).dump();
  for (std::size_t size = 0; size < text.size(); ++size) {
    const RecordRead read = parse_record(std::string_view(text).substr(0, size));
    EXPECT_FALSE(read.record.has_value()) << size;
    EXPECT_FALSE(read.error.empty()) << size;
  }
}

class HostileRecordFile : public ::testing::Test {
 protected:
  fs::path root() const { return temp_.path() / "cache"; }
  fs::path prepare(const Record& record) const {
    EXPECT_TRUE(store_.usable_function_dir(record.id.function_name).has_value());
    return store_.record_path(record.id);
  }
  // Binds a Unix socket at `path` (through its directory: socket paths are short).
  static void bind_socket(const fs::path& path, int& fd) {
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    const fs::path before = fs::current_path();
    fs::current_path(path.parent_path());
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.filename().c_str(), sizeof address.sun_path - 1);
    const int bound = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    fs::current_path(before);
    ASSERT_EQ(bound, 0) << std::strerror(errno);
  }

  TempDir temp_;
  DiskStore store_{temp_.path() / "cache"};
};

TEST_F(HostileRecordFile, EachHostileRecordIsOneMissWarnedOnceAndMovedAside) {
  const char* const fields[] = {"candidates[0].config", "hardware", "deps", "ranks"};
  for (const std::string field : fields) {
    // Warnings are once per path: one key per input.
    const Record record = sample_record("scale", R"({"field":")" + field + "\"}");
    const fs::path path = prepare(record);
    write_file(path, record_text_with(record, field,
                                      field == "ranks" ? "1e400" : nested_lists(kHostileDepth)));
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(store_.load(record.id).has_value());
    EXPECT_FALSE(store_.load(record.id).has_value());
    const std::string warnings = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(count(warnings, "disttune: ignoring cache record " + path.string()), 1) << warnings;
    EXPECT_FALSE(fs::exists(path));
    EXPECT_EQ(count_prefixed(path.parent_path(), record.id.file_id() + ".bad-"), 1u);
    // The caller tunes and saves; the next call is a hit.
    ASSERT_TRUE(store_.save(record).has_value());
    EXPECT_TRUE(store_.load(record.id).has_value());
  }
}

TEST_F(HostileRecordFile, ASocketAtTheRecordPathIsMovedAside) {
  const Record record = sample_record();
  const fs::path path = prepare(record);
  int fd = -1;
  bind_socket(path, fd);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store_.load(record.id).has_value());
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  close(fd);
  EXPECT_NE(warnings.find("it is not a regular file (moved aside to "), std::string::npos)
      << warnings;
  EXPECT_FALSE(fs::exists(fs::symlink_status(path)));
  EXPECT_EQ(count_prefixed(path.parent_path(), record.id.file_id() + ".bad-"), 1u);
}

TEST_F(HostileRecordFile, SavingOverASocketMovesItAsideInsteadOfKeepingIt) {
  const Record record = sample_record();
  const fs::path path = prepare(record);
  int fd = -1;
  bind_socket(path, fd);
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(store_.save(record).has_value());
  ::testing::internal::GetCapturedStderr();
  close(fd);
  EXPECT_EQ(count_prefixed(path.parent_path(), record.id.file_id() + ".json."), 0u);
  EXPECT_EQ(count_prefixed(path.parent_path(), record.id.file_id() + ".bad-"), 1u);
  EXPECT_TRUE(store_.load(record.id).has_value());
}

TEST_F(HostileRecordFile, ReadRecordFileSaysWhatIsWrong) {
  const Record record = sample_record();
  const fs::path path = prepare(record);
  using Problem = detail::RecordFileBytes::Problem;
  EXPECT_EQ(detail::read_record_file(AT_FDCWD, path.string()).problem, Problem::absent);
  fs::create_directory(path);
  EXPECT_EQ(detail::read_record_file(AT_FDCWD, path.string()).error, "it is not a regular file");
  fs::remove(path);
  fs::create_symlink(temp_.path(), path);
  EXPECT_EQ(detail::read_record_file(AT_FDCWD, path.string()).error,
            "it is a symbolic link (never followed)");
  fs::remove(path);
  write_file(path, "abc");
  const detail::RecordFileBytes read = detail::read_record_file(AT_FDCWD, path.string());
  EXPECT_EQ(read.problem, Problem::none);
  EXPECT_EQ(read.bytes, "abc");
  fs::resize_file(path, kMaxRecordBytes + 1);
  EXPECT_EQ(detail::read_record_file(AT_FDCWD, path.string()).problem, Problem::unusable);
}

}  // namespace
}  // namespace disttune
