// readable_text: any bytes as valid UTF-8, for reasons that go into records, logs and tables.
#pragma once

#include <string>
#include <string_view>

namespace disttune::detail {

/// `bytes` with every byte that is not part of a well-formed UTF-8 sequence (RFC 3629: no
/// overlong forms, no surrogates, nothing above U+10FFFF) written as "\xNN"; valid UTF-8
/// is returned unchanged. A record's JSON can then always be written (a failed config's
/// reason may come from a file name or a tool's output in any encoding).
std::string readable_text(std::string_view bytes);

/// readable_text(bytes) that is also one inert line, for a name or reason printed in a
/// one-line error or on a terminal: "\n", "\r" and "\t" written as those two characters,
/// every other control character as "\xNN" (C0 and DEL) or "\u00NN" (C1, such as the CSI
/// U+009B a terminal would obey).
std::string printable_line(std::string_view bytes);

}  // namespace disttune::detail
