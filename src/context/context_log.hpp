// ContextLog: the contextual tuner's per-rank log, ./.autotune_logs/rank-<rank>.log, appended.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

namespace disttune::detail {

/// Appends lines "[rank-<rank>] <text>" to <dir>/rank-<rank>.log, creating the directory.
/// The file is opened at the first line, after the run's header line: a run that writes no
/// line (every kernel already tuned) neither touches the file nor builds the header.
/// A log that cannot be opened is reported once as a warning; tuning goes on without it.
class ContextLog {
 public:
  ContextLog(std::filesystem::path dir, int rank, std::function<std::string()> header);
  ContextLog(const ContextLog&) = delete;
  ContextLog& operator=(const ContextLog&) = delete;

  /// Writes `line`; the first one opens the file and writes the header before it.
  void write(const std::string& line);
  /// Whether a line was written (or tried, when the file cannot be opened).
  bool written() const { return opened_; }
  static std::filesystem::path path_for(const std::filesystem::path& dir, int rank);
  /// The file's path once a line went into it; nullopt before, or when it cannot be opened.
  std::optional<std::filesystem::path> path() const;

 private:
  void open();

  std::filesystem::path dir_;
  int rank_;
  std::function<std::string()> header_;
  bool opened_ = false;
  std::optional<std::ofstream> file_;  ///< made at the first line (a stream is costly to make)
  std::string prefix_;
};

/// A time in milliseconds as log text: up to 6 significant digits.
std::string format_ms(double ms);

}  // namespace disttune::detail
