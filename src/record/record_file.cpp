// read_record_file: open without following links, check the type and size, read it all.
#include "record/record_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "disttune/store.hpp"
#include "util/unique_fd.hpp"

namespace disttune::detail {
namespace {

using Problem = RecordFileBytes::Problem;

std::string error_text(int error) { return std::strerror(error); }

RecordFileBytes problem(Problem kind, std::string error, const struct stat& seen = {}) {
  RecordFileBytes result;
  result.problem = kind;
  result.error = std::move(error);
  result.seen = seen;
  return result;
}

}  // namespace

RecordFileBytes read_record_file(int dir_fd, const std::string& name) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOCTTY: a terminal device
  // must not become ours.
  UniqueFd fd(openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    const int error = errno;
    if (error == ENOENT) return problem(Problem::absent, "it does not exist");
    struct stat seen {};
    if (fstatat(dir_fd, name.c_str(), &seen, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISLNK(seen.st_mode)) {
        return problem(Problem::unusable, "it is a symbolic link (never followed)", seen);
      }
      // A socket (ENXIO) or another special file that cannot even be opened.
      if (!S_ISREG(seen.st_mode)) {
        return problem(Problem::unusable, "it is not a regular file", seen);
      }
    }
    return problem(Problem::unreadable, "cannot open it: " + error_text(error));
  }
  struct stat seen {};
  if (fstat(fd.get(), &seen) != 0) {
    return problem(Problem::unreadable, "cannot inspect it: " + error_text(errno));
  }
  if (!S_ISREG(seen.st_mode)) return problem(Problem::unusable, "it is not a regular file", seen);
  if (static_cast<unsigned long long>(seen.st_size) > kMaxRecordBytes) {
    return problem(Problem::unusable,
                   "it is larger than " + std::to_string(kMaxRecordBytes) + " bytes", seen);
  }

  RecordFileBytes result;
  result.seen = seen;
  result.bytes.resize(static_cast<std::size_t>(seen.st_size));
  std::size_t done = 0;
  while (done < result.bytes.size()) {
    const ssize_t got = read(fd.get(), result.bytes.data() + done, result.bytes.size() - done);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return problem(Problem::unreadable, "cannot read it: " + error_text(errno));
    }
    done += static_cast<std::size_t>(got);
  }
  result.bytes.resize(done);
  return result;
}

}  // namespace disttune::detail
