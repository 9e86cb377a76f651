// Fuzz target: readable_text turns any bytes (a reason from a file name, a tool's output)
// into text that JSON writes, that it leaves unchanged, and that keeps valid UTF-8 as it is.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "disttune/config.hpp"
#include "report/readable_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::string text = disttune::detail::readable_text(bytes);
  std::string json;
  try {
    json = disttune::canonical_json(disttune::Value(text));  // strict: throws on bad UTF-8
  } catch (const std::exception& error) {
    std::fprintf(stderr, "readable_text gave text JSON cannot write: %s\n", error.what());
    std::abort();
  }
  if (disttune::detail::readable_text(text) != text) {
    std::fprintf(stderr, "readable_text changed its own output\n");
    std::abort();
  }
  // Bytes that JSON reads as a string are valid UTF-8: they must come back unchanged.
  const disttune::Value parsed = disttune::Value::parse("\"" + bytes + "\"", nullptr, false);
  if (parsed.is_string() && bytes.find_first_of("\"\\") == std::string::npos &&
      parsed.get<std::string>() == bytes && text != bytes) {
    std::fprintf(stderr, "readable_text changed valid UTF-8\n");
    std::abort();
  }
  return 0;
}
