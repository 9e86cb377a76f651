// readable_text: a UTF-8 validator (RFC 3629, Table 3-7 of Unicode) that escapes what is not.
#include "report/readable_text.hpp"

#include <cstdio>

namespace disttune::detail {
namespace {

// The length of the well-formed sequence at the start of `bytes`, or 0 if there is none.
std::size_t sequence_length(std::string_view bytes) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const auto within = [&](std::size_t i, unsigned char low, unsigned char high) {
    return i < bytes.size() && byte(i) >= low && byte(i) <= high;
  };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return within(1, 0x80, 0xBF) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned char low = lead == 0xE0 ? 0xA0 : 0x80;   // no overlong forms
    const unsigned char high = lead == 0xED ? 0x9F : 0xBF;  // no surrogates
    return within(1, low, high) && within(2, 0x80, 0xBF) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned char low = lead == 0xF0 ? 0x90 : 0x80;   // no overlong forms
    const unsigned char high = lead == 0xF4 ? 0x8F : 0xBF;  // nothing above U+10FFFF
    return within(1, low, high) && within(2, 0x80, 0xBF) && within(3, 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

void append_escaped(std::string& text, const char* format, unsigned value) {
  char escaped[8];
  std::snprintf(escaped, sizeof escaped, format, value);
  text += escaped;
}

// `bytes` with what is not UTF-8 escaped, and control characters too when `one_line`.
std::string escaped_text(std::string_view bytes, bool one_line) {
  std::string text;
  text.reserve(bytes.size());
  while (!bytes.empty()) {
    const std::size_t length = sequence_length(bytes);
    const auto lead = static_cast<unsigned char>(bytes[0]);
    if (length == 0) {
      append_escaped(text, "\\x%02x", lead);
    } else if (one_line && length == 1 && (lead < 0x20 || lead == 0x7f)) {
      if (lead == '\n') {
        text += "\\n";
      } else if (lead == '\r') {
        text += "\\r";
      } else if (lead == '\t') {
        text += "\\t";
      } else {
        append_escaped(text, "\\x%02x", lead);
      }
    } else if (one_line && length == 2 && lead == 0xc2 &&
               static_cast<unsigned char>(bytes[1]) < 0xa0) {
      append_escaped(text, "\\u%04x", static_cast<unsigned char>(bytes[1]));  // C1: U+0080..U+009F
    } else {
      text.append(bytes.substr(0, length));
    }
    bytes.remove_prefix(length > 0 ? length : 1);
  }
  return text;
}

}  // namespace

std::string readable_text(std::string_view bytes) {
  return escaped_text(bytes, false);
}

std::string printable_line(std::string_view bytes) {
  return escaped_text(bytes, true);
}

}  // namespace disttune::detail
