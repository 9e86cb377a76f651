// TuningLog: one log file per tuning, in the function's cache directory.
#include "report/tuning_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

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
  // Create it 0600 without following a symlink, and write through this descriptor only.
  file_ = UniqueFd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file_) {
    warn("cannot create log " + path.string() + ": " + std::strerror(errno) +
         "; logging to it is off");
    return;
  }
  path_ = path;
}

void TuningLog::write(const std::string& line) {
  if (file_) {
    const std::string text = line + '\n';
    std::string_view rest = text;
    while (!rest.empty()) {
      const ssize_t written = ::write(file_.get(), rest.data(), rest.size());
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        warn("cannot write log " + path_->string() + ": " + std::strerror(errno) +
             "; logging to it is off");
        file_.reset();
        break;
      }
      rest.remove_prefix(static_cast<std::size_t>(written));
    }
  }
  if (verbose_) emit(MessageKind::log, line);
}

}  // namespace disttune::detail
