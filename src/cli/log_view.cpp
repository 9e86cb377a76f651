// show of a tuning's log, read as untrusted text.
#include "cli/log_view.hpp"

#include <fstream>
#include <string>

#include "cli/cli_error.hpp"
#include "report/readable_text.hpp"

namespace disttune::cli {
namespace {

constexpr std::size_t kMostShownBytes = 16u << 20;

}  // namespace

bool is_tuning_log(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  const std::size_t at = name.find(".log-");
  return at == 64 && name.find_first_not_of("0123456789abcdef") == at;
}

void show_log(const std::filesystem::path& path, std::ostream& out) {
  std::ifstream log(path, std::ios::binary);
  if (!log) throw CliError("cannot read log " + detail::readable_text(path.string()));
  std::string text(kMostShownBytes, '\0');
  log.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(log.gcount()));
  out << "tuning log " << detail::readable_text(path.string()) << ":\n" << detail::readable_text(text);
  if (!text.empty() && text.back() != '\n') out << '\n';
  if (text.size() == kMostShownBytes) out << "(the rest of the log is not shown)\n";
}

}  // namespace disttune::cli
