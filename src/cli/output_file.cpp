// write_output_file: an AtomicFile in the directory of the named path.
#include "cli/output_file.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "cli/cli_error.hpp"
#include "report/readable_text.hpp"
#include "util/atomic_file.hpp"
#include "util/unique_fd.hpp"

namespace disttune::cli {

void write_output_file(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const detail::UniqueFd dir_fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) {
    throw CliError("cannot write " + detail::readable_text(path.string()) + ": " + std::strerror(errno));
  }
  try {
    detail::AtomicFile file(dir_fd.get(), path.filename().string());
    file.write(text);
    file.commit();
  } catch (const std::system_error& error) {
    throw CliError("cannot write " + detail::readable_text(path.string()) + ": " + detail::readable_text(error.what()));
  }
}

}  // namespace disttune::cli
