// CacheListing: walks a cache root with the engine's store, for the command line.
#include "cli/cache_listing.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <regex>
#include <stdexcept>
#include <system_error>

#include "cli/cli_error.hpp"
#include "report/readable_text.hpp"

namespace disttune::cli {
namespace {

namespace fs = std::filesystem;

bool is_real_directory(const fs::path& path) {
  std::error_code error;
  return fs::symlink_status(path, error).type() == fs::file_type::directory;
}

// When the entry itself (not what a link names) was last modified.
std::chrono::system_clock::time_point modified(const fs::path& path) {
  struct stat status {};
  if (lstat(path.c_str(), &status) != 0) {
    throw CliError("cannot inspect " + detail::readable_text(path.string()) + ": " + std::strerror(errno));
  }
  return std::chrono::system_clock::from_time_t(status.st_mtime);
}

}  // namespace

std::string bad_record_line(const ListedRecord& listed) {
  return detail::readable_text(listed.file.function) + "/" +
         detail::readable_text(listed.file.path.filename().string()) + ": " +
         detail::readable_text(listed.read.error);
}

CacheListing::CacheListing(fs::path root) : store_(std::move(root)) {}

std::vector<std::pair<std::string, fs::path>> CacheListing::function_dirs(
    const std::string& function) const {
  std::error_code error;
  const fs::file_type type = fs::symlink_status(root(), error).type();
  if (type == fs::file_type::not_found) {
    throw CliError("cache root " + detail::readable_text(root().string()) + " does not exist");
  }
  if (type != fs::file_type::directory) {
    throw CliError("cache root " + detail::readable_text(root().string()) + " is not a directory");
  }
  std::vector<std::pair<std::string, fs::path>> dirs;
  if (!function.empty()) {
    fs::path dir;
    try {
      dir = store_.function_dir(function);  // the engine's name checks (characters, length)
    } catch (const std::invalid_argument& refused) {
      throw CliError(detail::readable_text(refused.what()));
    }
    if (!is_real_directory(dir)) {
      throw CliError("unknown function '" + function + "': no directory " +
                     detail::readable_text(dir.string()));
    }
    dirs.emplace_back(function, dir);
    return dirs;
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(root())) {
    const std::string name = entry.path().filename().string();
    if (name.front() != '.' && is_real_directory(entry.path())) dirs.emplace_back(name, entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::vector<RecordFile> CacheListing::record_files(const std::string& function) const {
  std::vector<RecordFile> files;
  for (const auto& [name, dir] : function_dirs(function)) {
    std::optional<std::string> refused;
    try {
      refused = store_.refusal(name);
    } catch (const std::invalid_argument& error) {
      refused = detail::readable_text(error.what());
    }
    std::vector<fs::path> paths;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".json") paths.push_back(entry.path());
    }
    std::sort(paths.begin(), paths.end());
    for (fs::path& path : paths) files.push_back({name, std::move(path), refused});
  }
  return files;
}

std::vector<ListedRecord> CacheListing::records(const std::string& function) const {
  std::vector<ListedRecord> listed;
  for (RecordFile& file : record_files(function)) {
    RecordRead read;
    if (file.refused) {
      read.error = "the engine refuses its directory: " + *file.refused;
    } else {
      read = read_record(file.path);
    }
    listed.push_back({std::move(file), std::move(read)});
  }
  return listed;
}

fs::path CacheListing::resolve(const std::string& file_or_id) const {
  static const std::regex id_prefix("[0-9a-f]{1,64}");
  if (!std::regex_match(file_or_id, id_prefix)) {
    std::error_code error;
    if (fs::symlink_status(file_or_id, error).type() == fs::file_type::not_found) {
      throw CliError("'" + detail::readable_text(file_or_id) + "' is neither a file nor a record id prefix");
    }
    return file_or_id;
  }
  std::vector<fs::path> matches;
  for (const RecordFile& file : record_files("")) {
    if (file.path.filename().string().starts_with(file_or_id)) matches.push_back(file.path);
  }
  if (matches.empty()) throw CliError("no record id starts with '" + file_or_id + "'");
  if (matches.size() > 1) {
    std::string message = "record id prefix '" + file_or_id + "' is ambiguous; it matches:";
    for (const fs::path& path : matches) message += "\n  " + detail::readable_text(path.string());
    throw CliError(message);
  }
  return matches.front();
}

std::vector<std::pair<std::string, std::size_t>> CacheListing::clear(
    const std::string& function, std::chrono::seconds older_than) const {
  // Records, the kept previous records, temporary files, the entries moved aside (files,
  // links, directories, sockets: whatever was at a record's name) and the tuning logs.
  static const std::regex cache_file("[0-9a-f]{64}\\.(json(\\..+)?|bad-.+|log-.+)");
  const auto now = std::chrono::system_clock::now();
  std::vector<std::pair<std::string, std::size_t>> removed_per_dir;
  for (const auto& [name, dir] : function_dirs(function)) {
    std::size_t removed = 0;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
      if (!std::regex_match(entry.path().filename().string(), cache_file)) continue;
      if (older_than.count() > 0 && now - modified(entry.path()) < older_than) continue;
      std::error_code error;
      // remove_all never follows a symbolic link; it removes a directory with its content.
      if (fs::remove_all(entry.path(), error) == static_cast<std::uintmax_t>(-1) || error) {
        throw CliError("cannot remove " + detail::readable_text(entry.path().string()) + ": " +
                       error.message());
      }
      ++removed;
    }
    std::error_code not_empty;  // other files stay, and so does their directory
    fs::remove(dir, not_empty);
    removed_per_dir.emplace_back(name, removed);
  }
  return removed_per_dir;
}

std::chrono::seconds parse_age(const std::string& text) {
  static const std::regex age("([0-9]{1,9})([smhd])");
  std::smatch parts;
  if (!std::regex_match(text, parts, age)) {
    throw CliError("--older-than takes a number and a unit (s, m, h or d), e.g. 30d; got '" +
                   detail::readable_text(text) + "'");
  }
  const long long count = std::stoll(parts[1].str());
  const char unit = parts[2].str()[0];
  const long long scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
  return std::chrono::seconds(count * scale);
}

}  // namespace disttune::cli
