// Fuzz target: parse_replay_table on any bytes returns a table or throws BadReplayTable,
// never crashes (deep nesting in "problem", "device" or a config included), and a table it
// accepts has a printable kernel name and an entry with status "ok".
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "disttune/replay.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  disttune::ReplayTable table;
  try {
    table = disttune::parse_replay_table(text, "fuzz.json");
  } catch (const disttune::BadReplayTable&) {
    return 0;
  }
  for (const char c : table.kernel) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      std::fprintf(stderr, "a kernel name kept a control character\n");
      std::abort();
    }
  }
  if (!(table.best_ms() > 0.0)) {
    std::fprintf(stderr, "an accepted table without an ok entry\n");
    std::abort();
  }
  return 0;
}
