// read_regular_file and file_kind: one open without blocking, one fstat, bounded reads.
#include "store/regular_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "report/readable_text.hpp"
#include "util/unique_fd.hpp"

namespace disttune::detail {

std::string file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                              const std::string& reader) {
  const std::string shown = printable_line(path.string());
  const auto too_large = [&] {
    return UnreadableFile(shown + " is larger than " + std::to_string(max_bytes) + " bytes: " +
                          reader + " of at most " + std::to_string(max_bytes) + " bytes");
  };
  const UniqueFd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd) throw UnreadableFile("cannot read " + shown + ": " + std::strerror(errno));
  struct stat status {};
  if (fstat(fd.get(), &status) != 0)
    throw UnreadableFile("cannot read " + shown + ": " + std::strerror(errno));
  if (!S_ISREG(status.st_mode)) {
    throw UnreadableFile(shown + " is " + file_kind(status.st_mode) + ": " + reader +
                         " from a regular file only");
  }
  if (static_cast<std::size_t>(status.st_size) > max_bytes) throw too_large();
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw UnreadableFile("cannot read " + shown + ": " + std::strerror(errno));
    if (got == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(got));
    if (bytes.size() > max_bytes) throw too_large();  // it grew while read
  }
  return bytes;
}

}  // namespace disttune::detail
