// write_output_file: an AtomicFile in the directory of the named path, never replacing what
// is not a regular file.
#include "cli/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "cli/cli_error.hpp"
#include "report/readable_text.hpp"
#include "store/regular_file.hpp"
#include "util/atomic_file.hpp"
#include "util/unique_fd.hpp"

namespace disttune::cli {

std::string output_file_problem(const std::filesystem::path& path) {
  const std::string shown = detail::readable_text(path.string());
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  struct stat status {};
  if (stat(dir.c_str(), &status) != 0) {
    return "cannot write " + shown + ": its directory " + detail::readable_text(dir.string()) +
           (errno == ENOENT ? " does not exist" : std::string(": ") + std::strerror(errno));
  }
  if (!S_ISDIR(status.st_mode)) {
    return "cannot write " + shown + ": " + detail::readable_text(dir.string()) +
           " is not a directory";
  }
  if (lstat(path.c_str(), &status) != 0) {
    return errno == ENOENT ? "" : "cannot write " + shown + ": " + std::strerror(errno);
  }
  if (!S_ISREG(status.st_mode)) {
    return "refusing to replace " + shown + ": it is " + detail::file_kind(status.st_mode);
  }
  return "";
}

void write_output_file(const std::filesystem::path& path, std::string_view text) {
  if (const std::string problem = output_file_problem(path); !problem.empty())
    throw CliError(problem);
  const std::string shown = detail::readable_text(path.string());
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const detail::UniqueFd dir_fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) throw CliError("cannot write " + shown + ": " + std::strerror(errno));
  try {
    detail::AtomicFile file(dir_fd.get(), path.filename().string());
    file.write(text);
    file.commit();
  } catch (const std::system_error& error) {
    throw CliError("cannot write " + shown + ": " + detail::readable_text(error.what()));
  }
}

}  // namespace disttune::cli
