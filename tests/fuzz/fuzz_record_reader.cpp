// Fuzz target: parse_record on any bytes never crashes or throws, and a record it accepts
// writes back to text that it reads as the same record.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "disttune/store.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const disttune::RecordRead read = disttune::parse_record(bytes);  // noexcept
  if (!read.record) {
    if (read.error.empty()) {
      std::fprintf(stderr, "an unusable record without a reason\n");
      std::abort();
    }
    return 0;
  }
  // What the reader accepts, the writer writes, and the reader reads back unchanged.
  const disttune::Value written = disttune::record_to_json(*read.record);
  const disttune::RecordRead again = disttune::parse_record(written.dump(2));
  if (!again.record || disttune::record_to_json(*again.record) != written) {
    std::fprintf(stderr, "a record did not read back: %s\n", again.error.c_str());
    std::abort();
  }
  return 0;
}
