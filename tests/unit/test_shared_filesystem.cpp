// Two nodes on one shared cache root: two processes write different records of one key
// into the same directory at once while a third reads; every read is one whole record.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <string>

#include "disttune/store.hpp"
#include "store_test_support.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::entries;
using testing::sample_record;
using testing::TempDir;

constexpr int kRounds = 150;

// A writer process: saves `record` kRounds times, then exits 0 (1 if a save failed).
pid_t start_writer(const fs::path& root, const Record& record) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const DiskStore store(root);
  int status = 0;
  for (int round = 0; round < kRounds; ++round) {
    if (!store.save(record)) status = 1;
  }
  _exit(status);
}

TEST(SharedFilesystem, TwoWritersOfOneKeyLeaveOnlyWholeRecords) {
  TempDir temp;
  const fs::path root = temp.path() / "shared";
  // Two nodes tuned the same key on their own and found different bests.
  Record node_a = sample_record();
  node_a.created_utc = "2026-11-30T10:00:00Z";
  Record node_b = node_a;
  node_b.created_utc = "2026-11-30T10:00:05Z";
  node_b.ranks = 8;
  const Value a = record_to_json(node_a);
  const Value b = record_to_json(node_b);

  const DiskStore reader(root);
  ASSERT_TRUE(reader.save(node_a));
  const pid_t writer_a = start_writer(root, node_a);
  const pid_t writer_b = start_writer(root, node_b);
  ASSERT_GT(writer_a, 0);
  ASSERT_GT(writer_b, 0);

  int reads = 0;
  int running = 2;
  while (running > 0) {
    const auto loaded = reader.load(node_a.id);
    ASSERT_TRUE(loaded) << "a read found no whole record after " << reads << " reads";
    const Value seen = record_to_json(*loaded);
    ASSERT_TRUE(seen == a || seen == b) << seen.dump();
    ++reads;
    for (const pid_t pid : {writer_a, writer_b}) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        --running;
      }
    }
  }
  EXPECT_GT(reads, 0);

  // The record is one writer's, whole; the rest are kept previous records, no temp files.
  const fs::path dir = root / node_a.id.function_name;
  const std::string name = node_a.id.file_id() + ".json";
  const std::regex allowed(name + R"((\.\d{8}T\d{6}\.\d{6}Z(-\d+)?)?)");
  for (const std::string& entry : entries(dir)) {
    EXPECT_TRUE(std::regex_match(entry, allowed)) << "unexpected file " << entry;
    const Value kept = Value::parse(testing::read_file(dir / entry));
    EXPECT_TRUE(kept == a || kept == b) << entry;
  }
}

}  // namespace
}  // namespace disttune
