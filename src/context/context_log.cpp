// ContextLog: appends the contextual tuner's lines to this rank's log file.
#include "context/context_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <iomanip>
#include <sstream>
#include <system_error>
#include <utility>

#include "report/warning.hpp"

namespace disttune::detail {

std::filesystem::path ContextLog::path_for(const std::filesystem::path& dir, int rank) {
  return dir / ("rank-" + std::to_string(rank) + ".log");
}

std::optional<std::filesystem::path> ContextLog::path() const {
  if (!file_ || !*file_) return std::nullopt;
  return path_for(dir_, rank_);
}

ContextLog::ContextLog(std::filesystem::path dir, int rank, std::function<std::string()> header)
    : dir_(std::move(dir)), rank_(rank), header_(std::move(header)) {}

void ContextLog::open() {
  opened_ = true;
  prefix_ = "[rank-" + std::to_string(rank_) + "] ";
  const std::filesystem::path path = path_for(dir_, rank_);
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  // Create it if missing without following a symlink, then append through the stream.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ::close(fd);
    file_.emplace(path, std::ios::out | std::ios::app);
  }
  if (!file_ || !*file_) {
    warn_once("context log " + path.string(), "cannot open log " + path.string() + "; logging to it is off");
    return;
  }
  *file_ << prefix_ << header_() << '\n';
}

void ContextLog::write(const std::string& line) {
  if (!opened_) open();
  if (file_ && *file_) *file_ << prefix_ << line << '\n' << std::flush;
}

std::string format_ms(double ms) {
  std::ostringstream text;
  text << std::setprecision(6) << ms;
  return text.str();
}

}  // namespace disttune::detail
