// Helper process for test_store_concurrency: waits until its stdin closes, then saves and
// loads the sample record `rounds` times under <root>, and prints the digests it computed.
//   usage: store_writer <root> <rounds>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "disttune/fingerprint.hpp"
#include "disttune/store.hpp"
#include "disttune/timer.hpp"
#include "store_test_support.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: store_writer <root> <rounds>\n");
    return 2;
  }
  const disttune::DiskStore store(argv[1]);
  const int rounds = std::atoi(argv[2]);
  const disttune::Record record = disttune::testing::sample_record();
  const std::string expected = disttune::record_to_json(record).dump();

  char byte = 0;
  while (read(STDIN_FILENO, &byte, 1) > 0) {
  }
  for (int round = 0; round < rounds; ++round) {
    if (!store.save(record)) {
      std::fprintf(stderr, "save failed in round %d\n", round);
      return 1;
    }
    const auto loaded = store.load(record.id);
    if (!loaded || disttune::record_to_json(*loaded).dump() != expected) {
      std::fprintf(stderr, "load after save failed in round %d\n", round);
      return 1;
    }
  }
  std::printf("file_id %s\n", record.id.file_id().c_str());
  std::printf("hardware_digest %s\n",
              disttune::make_fingerprint(disttune::CpuTimer()).hardware_digest().c_str());
  return 0;
}
