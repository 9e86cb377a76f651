// Stress of the disk store: rounds of concurrent writers of one key, each SIGKILLed at a
// random moment (often mid-write), while this process reads the record; reports corrupt
// reads and what is left in the directory (temporary files, kept records, bad records).
//   usage: stress_store <root> [rounds=100] [writers=8]
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "disttune/store.hpp"

namespace {

namespace fs = std::filesystem;
using namespace disttune;

// Writer w's record: one key, a content of its own, so a read can tell whose bytes it saw.
Record variant(int writer) {
  Record record;
  record.id = {"stress", std::string(64, 'f'), std::string(64, 'a'), R"({"n":1024})"};
  record.measurement.strategy = "exhaustive";
  CandidateResult best;
  best.config = R"({"block":128})";
  best.measured = true;
  best.samples.assign(200, 1.0 + writer);  // a few KB: writes take more than one syscall
  best.local_ms = best.agreed_ms = 1.0 + writer;
  record.candidates = {best};
  record.created_utc = "2026-11-30T00:00:00Z";
  record.library_version = "stress";
  return record;
}

[[noreturn]] void write_forever(const DiskStore& store, const Record& record) {
  for (;;) {
    if (!store.save(record)) _exit(1);
    if (!store.load(record.id)) _exit(2);  // a miss here means it read a broken record
  }
}

struct Counts {
  std::size_t temp = 0, kept = 0, bad = 0;
};

Counts count_entries(const fs::path& dir) {
  Counts counts;
  if (!fs::exists(dir)) return counts;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".json.tmp-") != std::string::npos) {
      ++counts.temp;
    } else if (name.find(".json.") != std::string::npos) {
      ++counts.kept;
    } else if (name.find(".bad-") != std::string::npos) {
      ++counts.bad;
    }
  }
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: stress_store <root> [rounds=100] [writers=8]\n");
    return 2;
  }
  const fs::path root = argv[1];
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 100;
  const int writers = argc > 3 ? std::atoi(argv[3]) : 8;
  const DiskStore store(root);
  std::set<std::string> valid;
  for (int w = 0; w < writers; ++w) valid.insert(record_to_json(variant(w)).dump());
  const fs::path path = store.record_path(variant(0).id);

  std::mt19937 random(12345);
  // absent: reads before the first writer's first save.
  std::size_t reads = 0, absent = 0, corrupt = 0, kills = 0, writer_errors = 0, max_temp = 0;
  std::size_t max_kept = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<pid_t> children;
    for (int w = 0; w < writers; ++w) {
      const pid_t child = fork();
      if (child == 0) write_forever(store, variant(w));
      children.push_back(child);
    }
    // Read while they write, then kill them one by one at random moments.
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(std::uniform_int_distribution(5, 40)(random));
    while (std::chrono::steady_clock::now() < until) {
      const RecordRead read = read_record(path);
      ++reads;
      if (!read.record) {
        if (read.error.find("No such file") != std::string::npos) {
          ++absent;
        } else {
          ++corrupt;
          std::fprintf(stderr, "corrupt read: %s\n", read.error.c_str());
        }
      } else if (!valid.contains(record_to_json(*read.record).dump())) {
        ++corrupt;
      }
    }
    for (const pid_t child : children) {
      std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution(0, 3000)(random)));
      kill(child, SIGKILL);
    }
    for (const pid_t child : children) {
      int status = 0;
      waitpid(child, &status, 0);
      if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
        ++kills;
      } else {
        ++writer_errors;
      }
    }
    const Counts now = count_entries(path.parent_path());
    max_temp = std::max(max_temp, now.temp);
    max_kept = std::max(max_kept, now.kept);
  }
  const Counts end = count_entries(path.parent_path());
  // Age every leftover temporary file past the limit: the next writer must remove them.
  for (const auto& entry : fs::directory_iterator(path.parent_path())) {
    if (entry.path().filename().string().find(".json.tmp-") == std::string::npos) continue;
    fs::last_write_time(entry.path(), fs::file_time_type::clock::now() - std::chrono::minutes(2));
  }
  store.save(variant(0));
  const Counts tidied = count_entries(path.parent_path());

  std::printf("rounds %d, writers %d, SIGKILLs %zu, writer errors %zu\n", rounds, writers, kills,
              writer_errors);
  std::printf("reads %zu (absent %zu), corrupt reads %zu, records moved aside as bad %zu\n", reads,
              absent, corrupt, end.bad);
  std::printf("temporary files (each from a writer killed mid-write): at most %zu after a round, "
              "%zu at the end, %zu after the next "
              "writer once they were over a minute old\n",
              max_temp, end.temp, tidied.temp);
  std::printf("kept records: at most %zu after a round (writers killed before they tidied), "
              "%zu after the next writer (limit %zu)\n",
              max_kept, tidied.kept, store.kept_per_key());
  const bool ok = corrupt == 0 && end.bad == 0 && writer_errors == 0 && tidied.temp == 0 &&
                  tidied.kept <= store.kept_per_key();
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
