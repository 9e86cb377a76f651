// Concurrent writers of one record: 8 processes (and 8 threads) save one key into one
// directory at once; every file left parses, no temporary file is left, and a record
// written by other processes is read here with the same digests.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "disttune/fingerprint.hpp"
#include "disttune/store.hpp"
#include "disttune/timer.hpp"
#include "store_test_support.hpp"

#ifndef DISTTUNE_STORE_WRITER
#error "DISTTUNE_STORE_WRITER must name the store_writer helper executable"
#endif

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::entries;
using testing::read_file;
using testing::sample_record;
using testing::TempDir;

constexpr int kWriters = 8;
constexpr int kRounds = 25;

// Every entry of the function directory is the record or a kept previous one, and each
// parses as the sample record.
void expect_only_whole_records(const fs::path& dir, const Record& expected) {
  const std::string name = expected.id.file_id() + ".json";
  const std::regex allowed(name + R"((\.\d{8}T\d{6}\.\d{6}Z(-\d+)?)?)");
  int current = 0;
  for (const auto& entry : entries(dir)) {
    EXPECT_TRUE(std::regex_match(entry, allowed)) << "unexpected file " << entry;
    if (entry == name) ++current;
    const Record record = record_from_json(Value::parse(read_file(dir / entry)));
    EXPECT_EQ(record_to_json(record), record_to_json(expected)) << entry;
  }
  EXPECT_EQ(current, 1);
}

TEST(StoreConcurrency, EightProcessesSaveOneKeyAtOnce) {
  TempDir temp;
  const fs::path root = temp.path() / "cache";
  int start[2];
  ASSERT_EQ(pipe(start), 0);

  std::vector<pid_t> writers;
  for (int i = 0; i < kWriters; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const std::string out = (temp.path() / ("writer-" + std::to_string(i) + ".out")).string();
      const std::string err = (temp.path() / ("writer-" + std::to_string(i) + ".err")).string();
      const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (out_fd < 0 || err_fd < 0 || dup2(start[0], 0) < 0 || dup2(out_fd, 1) < 0 ||
          dup2(err_fd, 2) < 0) {
        _exit(3);
      }
      close(start[1]);
      // Every replaced record is kept exactly once when nothing is pruned.
      setenv("TRITON_DIST_AUTOTUNE_CACHE_KEEP", "10000", 1);
      const std::string rounds = std::to_string(kRounds);
      execl(DISTTUNE_STORE_WRITER, "store_writer", root.c_str(), rounds.c_str(), nullptr);
      _exit(4);
    }
    writers.push_back(pid);
  }
  close(start[0]);
  close(start[1]);  // every writer starts now

  for (std::size_t i = 0; i < writers.size(); ++i) {
    int status = 0;
    ASSERT_EQ(waitpid(writers[i], &status, 0), writers[i]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "writer " << i << ": "
        << read_file(temp.path() / ("writer-" + std::to_string(i) + ".err"));
  }

  const Record expected = sample_record();
  expect_only_whole_records(root / "scale", expected);
  EXPECT_EQ(entries(root / "scale").size(), static_cast<std::size_t>(kWriters * kRounds));

  // Read here what the other processes wrote; they computed the same digests.
  const auto loaded = DiskStore(root).load(expected.id);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(record_to_json(*loaded), record_to_json(expected));
  std::ostringstream digests;
  digests << "file_id " << expected.id.file_id() << "\nhardware_digest "
          << make_fingerprint(CpuTimer()).hardware_digest() << "\n";
  for (int i = 0; i < kWriters; ++i) {
    EXPECT_EQ(read_file(temp.path() / ("writer-" + std::to_string(i) + ".out")), digests.str())
        << i;
    EXPECT_EQ(read_file(temp.path() / ("writer-" + std::to_string(i) + ".err")), "") << i;
  }
}

TEST(StoreConcurrency, EightThreadsSaveAndLoadOneKeyAtOnce) {
  TempDir temp;
  const DiskStore store(temp.path() / "cache");
  const Record record = sample_record();
  const Value expected = record_to_json(record);
  std::atomic<int> failures{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      for (int round = 0; round < kRounds; ++round) {
        if (!store.save(record)) ++failures;
        const auto loaded = store.load(record.id);
        if (!loaded || record_to_json(*loaded) != expected) ++failures;
      }
    });
  }
  go = true;
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  expect_only_whole_records(temp.path() / "cache" / "scale", record);
}

}  // namespace
}  // namespace disttune
