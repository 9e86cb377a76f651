// ContextLog: the contextual tuner's per-rank log, ./.autotune_logs/rank-<rank>.log, appended.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace disttune::detail {

/// Appends lines "[rank-<rank>] <text>" to <dir>/rank-<rank>.log, creating the directory.
/// A log that cannot be opened is reported once as a warning; tuning goes on without it.
class ContextLog {
 public:
  ContextLog(const std::filesystem::path& dir, int rank);
  ContextLog(const ContextLog&) = delete;
  ContextLog& operator=(const ContextLog&) = delete;

  void write(const std::string& line);
  static std::filesystem::path path_for(const std::filesystem::path& dir, int rank);

 private:
  std::ofstream file_;
  std::string prefix_;
};

/// A time in milliseconds as log text: up to 6 significant digits.
std::string format_ms(double ms);

}  // namespace disttune::detail
