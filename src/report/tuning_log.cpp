// TuningLog: one log file per tuning, in the function's cache directory.
#include "report/tuning_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "util/utc_time.hpp"
#include "report/emit.hpp"
#include "report/warning.hpp"

namespace disttune::detail {

TuningLog::TuningLog(const std::optional<std::filesystem::path>& dir, const std::string& file_id,
                     int rank, int ranks, bool verbose)
    : verbose_(verbose) {
  if (!dir) return;
  std::string name = file_id + ".log-" + utc_file_stamp_now();
  if (ranks > 1) name += "-rank" + std::to_string(rank);
  const std::filesystem::path path = *dir / name;
  // Create it 0600 without following a symlink, then hand it to the stream.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    warn("cannot create log " + path.string() + "; logging to it is off");
    return;
  }
  ::close(fd);
  file_.open(path, std::ios::out | std::ios::trunc);
  if (file_) path_ = path;
}

void TuningLog::write(const std::string& line) {
  if (file_) file_ << line << '\n' << std::flush;
  if (verbose_) emit(MessageKind::log, line);
}

}  // namespace disttune::detail
