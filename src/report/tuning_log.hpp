// TuningLog: the log file of one tuning (and its echo through the sink when verbose).
#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace disttune::detail {

/// Writes one tuning's log to <dir>/<file id>.log-<UTC stamp>[-rank<r>] (0600), when a
/// directory is given, and echoes each line to the sink (MessageKind::log) when verbose. A log
/// that cannot be opened is a warning; tuning goes on.
class TuningLog {
 public:
  TuningLog(const std::optional<std::filesystem::path>& dir, const std::string& file_id, int rank,
            int ranks, bool verbose);
  TuningLog(const TuningLog&) = delete;
  TuningLog& operator=(const TuningLog&) = delete;

  void write(const std::string& line);
  const std::optional<std::filesystem::path>& path() const { return path_; }

 private:
  std::optional<std::filesystem::path> path_;
  std::ofstream file_;
  bool verbose_;
};

}  // namespace disttune::detail
