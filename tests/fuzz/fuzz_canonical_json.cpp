// Fuzz target: canonical_json and the key digests on any JSON value: either a clear
// std::invalid_argument or a canonical text that parses back to the value and is a fixed
// point; never a crash (deep nesting, huge numbers, odd strings) or another exception.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "disttune/config.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "%s: %.200s\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  disttune::Value value;
  try {
    value = disttune::Value::parse(bytes);  // unbounded depth: the library parses iteratively
  } catch (const disttune::Value::exception&) {
    return 0;  // not JSON: the front ends never hand such bytes to canonical_json
  }
  std::string text;
  try {
    text = disttune::canonical_json(value);
  } catch (const std::invalid_argument&) {
    return 0;  // too deep or non-finite: refused with a clear error
  }
  const disttune::Value reparsed = disttune::Value::parse(text);
  if (reparsed != value) fail("canonical text does not parse back to the value", text);
  if (disttune::canonical_json(reparsed) != text) fail("canonical text is not a fixed point", text);
  // The key path: a record's file id is the digest of (function digest, hardware digest, key).
  const std::string id = disttune::digest_of_parts({disttune::digest(value), "", text});
  if (id.size() != 64 || id != disttune::digest_of_parts({disttune::sha256_hex(text), "", text})) {
    fail("the key digest is not stable", text);
  }
  return 0;
}
