// Files the command line writes (an exported table, a report page), written atomically.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace disttune::cli {

/// Writes `text` to `path` through a temporary file in the same directory, fsync and a
/// rename, so a reader sees the old file or the whole new one; CliError naming the file.
/// What output_file_problem names is refused with CliError before anything is written.
void write_output_file(const std::filesystem::path& path, std::string_view text);

/// Why `path` cannot be written as an output file, in one line ("" when it can): its
/// directory is missing, or something is there that is not a regular file (a device, a
/// FIFO, a directory, a symbolic link), which the rename would replace. For a caller that
/// checks before long work (a sweep's table).
std::string output_file_problem(const std::filesystem::path& path);

}  // namespace disttune::cli
