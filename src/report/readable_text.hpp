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

}  // namespace disttune::detail
