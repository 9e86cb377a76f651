// Regular files only: reading a file a user names without blocking on a FIFO or reading a
// device for ever, and naming what a file that is not a regular one is.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace disttune::detail {

/// What read_regular_file refuses; what() is one line naming the file.
struct UnreadableFile : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// "a FIFO", "a character device", "a block device", "a directory", "a socket",
/// "a symbolic link" (for an lstat's mode), or "not a regular file" for anything else.
std::string file_kind(mode_t mode);

/// The bytes of the regular file at `path`, at most `max_bytes`: opened without blocking (a
/// FIFO with no writer) and checked with fstat before any read. `reader` says who reads what
/// in the refusals, e.g. "import reads a table": UnreadableFile("P is a FIFO: import reads a
/// table from a regular file only"), ("P is larger than N bytes: import reads a table of at
/// most N bytes"), or ("cannot read P: <the system's reason>").
std::string read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                              const std::string& reader);

}  // namespace disttune::detail
