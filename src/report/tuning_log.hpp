// TuningLog: the log file of one tuning (and its echo through the sink when verbose).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "util/unique_fd.hpp"

namespace disttune::detail {

/// Writes one tuning's log to <dir>/<file id>.log-<UTC stamp>[-rank<r>] (0600), when a
/// directory is given, and echoes each line to the sink (MessageKind::log) when verbose. The
/// file is written through the descriptor of its safe create (O_EXCL, O_NOFOLLOW), never
/// reopened by path. A log that cannot be created or written (a full disk) is a warning
/// (once) and is closed; tuning goes on.
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
  UniqueFd file_;
  bool verbose_;
};

}  // namespace disttune::detail
