// Tests of readable_text: valid UTF-8 passes unchanged, every other byte is escaped; and of
// printable_line, which also escapes control characters.
#include <gtest/gtest.h>

#include <string>

#include "disttune/config.hpp"
#include "report/readable_text.hpp"

namespace disttune::detail {
namespace {

TEST(ReadableText, ValidUtf8IsUnchanged) {
  for (const std::string text : {"", "plain", "caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9f\x98\x80",
                                 "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_EQ(readable_text(text), text);
  }
}

TEST(ReadableText, EveryOtherByteIsEscapedAndTheResultIsJson) {
  const std::pair<std::string, std::string> cases[] = {
      {"caf\xe9.bin", "caf\\xe9.bin"},                  // Latin-1
      {"\xed\xb3\xa9", "\\xed\\xb3\\xa9"},              // a lone surrogate (U+DCE9)
      {"\xc0\xaf", "\\xc0\\xaf"},                       // overlong '/'
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},      // above U+10FFFF
      {"\xe2\x82", "\\xe2\\x82"},                       // cut short
      {"ok\xff", "ok\\xff"}};
  for (const auto& [bytes, readable] : cases) {
    EXPECT_EQ(readable_text(bytes), readable);
    EXPECT_NO_THROW((void)canonical_json(Value(readable_text(bytes))));
  }
}

TEST(PrintableLine, ControlCharactersAreEscapedSoTheTextStaysOneInertLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"plain caf\xc3\xa9", "plain caf\xc3\xa9"},
      {"a\nb\r\tc", "a\\nb\\r\\tc"},
      {"\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"},  // an ANSI escape sequence
      {std::string("nul\0!", 5), "nul\\x00!"},
      {"del\x7f", "del\\x7f"},
      {"csi\xc2\x9b"
       "2J",
       "csi\\u009b2J"},  // U+009B, the one-character CSI
      {"bad\xff\n", "bad\\xff\\n"}};
  for (const auto& [bytes, printable] : cases) EXPECT_EQ(printable_line(bytes), printable);
}

}  // namespace
}  // namespace disttune::detail
