// Files the command line writes (an exported table, a report page), written atomically.
#pragma once

#include <filesystem>
#include <string_view>

namespace disttune::cli {

/// Writes `text` to `path` through a temporary file in the same directory, fsync and a
/// rename, so a reader sees the old file or the whole new one; CliError naming the file.
void write_output_file(const std::filesystem::path& path, std::string_view text);

}  // namespace disttune::cli
